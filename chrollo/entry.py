"""The ``chrollo`` console script: a click-free front door for the hot path, click for the rest.

``chrollo search`` runs on every recall (by agents, by hooks), and importing click costs
tens of milliseconds before any work starts (48 ms measured on the CI machine — more than
the whole search on a 10 MB vault); ``chrollo sessions`` has a budget of 150 ms at 250,000
sessions. So a well-formed ``search`` or ``sessions`` command line is parsed here with a
table of its options (:data:`FAST`); anything else — ``--help``, an unknown option, a bad
value, any other command — goes to the click CLI in ``cli.py``, which owns help and usage
errors. Both paths run the same ``console.run_search`` / ``console.run_sessions``, so their
output cannot drift apart; ``chrollo mesh sync`` likewise (``console.run_mesh_sync``: a sync
tool or a timer may run it every few seconds). ``chrollo hook``
and ``chrollo mcp [--dir PATH]`` (started by harnesses that will not wait for a slow MCP
server) never load click either.
"""
from __future__ import annotations

import os
import sys

from .console import dump, fail, missing_module, os_error, run_mesh_sync, run_search, run_sessions
from .errors import ChrolloError

# search's options: name -> (dest, converter or None for a flag). Mirrors cli.search.
SEARCH_OPTIONS = {
    "-n": ("limit", int), "--limit": ("limit", int),
    "-C": ("context", int), "--context": ("context", int),
    "--since": ("since", str), "--until": ("until", str), "--project": ("project", str),
    "--harness": ("harness", str), "--peer": ("peer", str), "--all-vaults": ("all_vaults", None),
    "--dir": ("dir_", str), "--no-peers": ("no_peers", None), "--json": ("as_json", None),
    "--compact": ("compact", None),
    "--expand": ("expand_all", None), "--no-expand": ("no_expand", None),
    "--raw": ("raw", None),
}
SEARCH_DEFAULTS = {"limit": 10, "context": 3, "since": None, "until": None, "project": None,
                   "all_vaults": False, "harness": None, "peer": None,
                   "dir_": None, "no_peers": False, "as_json": False, "expand_all": False,
                   "no_expand": False, "raw": False, "compact": False}


def _count(value: str) -> int:
    """-n for sessions (click's IntRange(0)): a negative count is click's to refuse."""
    n = int(value)
    if n < 0:
        raise ValueError(value)
    return n


# sessions' options, likewise. Mirrors cli.sessions.
SESSIONS_OPTIONS = {
    "-n": ("limit", _count), "--limit": ("limit", _count), "--project": ("project", str),
    "--harness": ("harness", str), "--peer": ("peer", str), "--no-peers": ("no_peers", None),
    "--since": ("since", str), "--until": ("until", str), "--dir": ("dir_", str), "--json": ("as_json", None),
}
SESSIONS_DEFAULTS = {"limit": 20, "project": None, "harness": None, "peer": None, "no_peers": False,
                     "since": None, "until": None, "dir_": None, "as_json": False}


def parse_search(args: list) -> dict | None:
    """The search arguments as keyword arguments, or None when click should handle them."""
    opts = _parse(args, SEARCH_OPTIONS, SEARCH_DEFAULTS)
    if opts is None or not opts["query"]:
        return None
    opts["query"] = tuple(opts["query"])
    return opts


def parse_sessions(args: list) -> dict | None:
    """The sessions arguments as keyword arguments, or None when click should handle them."""
    opts = _parse(args, SESSIONS_OPTIONS, SESSIONS_DEFAULTS)
    return opts if opts is not None and not opts.pop("query") else None


def _parse(args: list, options: dict, defaults: dict) -> dict | None:
    """``args`` read with the table ``options`` (name -> (dest, converter; None: a flag)) over
    ``defaults``, the other words under "query"; None when click should handle them."""
    opts = dict(defaults)
    query: list = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            query += args[i + 1:]
            break
        if a.startswith("-") and a != "-":
            name, eq, value = a.partition("=") if a.startswith("--") else (a, "", "")
            spec = options.get(name)
            if spec is None:
                return None  # --help, -h, an unknown or combined option: click explains
            dest, conv = spec
            if conv is None:
                if eq:
                    return None
                opts[dest] = True
            else:
                if not eq:
                    i += 1
                    if i >= len(args):
                        return None
                    value = args[i]
                try:
                    opts[dest] = conv(value)
                except ValueError:
                    return None
        else:
            query.append(a)
        i += 1
    opts["query"] = query
    return opts


def _seconds(value: str) -> float:
    """--timeout for mesh sync (click's FloatRange(1, None)): under a second is click's to refuse."""
    t = float(value)
    if not t >= 1:
        raise ValueError(value)
    return t


# mesh sync's options, likewise. Mirrors cli.mesh_sync.
MESH_SYNC_OPTIONS = {"--all": ("all_", None), "--git": ("remote", str), "--folder": ("folder", str),
                     "--dir": ("dir_", str), "--timeout": ("timeout", _seconds), "--json": ("as_json", None)}
MESH_SYNC_DEFAULTS = {"all_": False, "remote": None, "folder": None, "dir_": None, "timeout": 1800.0,
                      "as_json": False}


def parse_mesh_sync(args: list) -> dict | None:
    """The `mesh sync` arguments as keyword arguments (``peer``: NAME|ID or None), or None
    when click should handle them."""
    opts = _parse(args, MESH_SYNC_OPTIONS, MESH_SYNC_DEFAULTS)
    if opts is None or len(opts["query"]) > 1:
        return None
    opts["peer"] = (opts.pop("query") or [None])[0]
    return opts


# The commands parsed here: name -> (options, defaults, parser, runner; the runner's return is
# the exit code, None for 0).
FAST = {"search": (SEARCH_OPTIONS, SEARCH_DEFAULTS, parse_search, lambda o: run_search(o.pop("query"), o)),
        "sessions": (SESSIONS_OPTIONS, SESSIONS_DEFAULTS, parse_sessions, run_sessions),
        "mesh sync": (MESH_SYNC_OPTIONS, MESH_SYNC_DEFAULTS, parse_mesh_sync, run_mesh_sync)}


def parse_mcp(args: list) -> str | None:
    """`chrollo mcp [--dir PATH]` → PATH ("" for none); None when click should handle it."""
    if not args:
        return ""
    if len(args) == 2 and args[0] == "--dir" and args[1]:
        return args[1]
    if len(args) == 1 and args[0].startswith("--dir=") and len(args[0]) > 6:
        return args[0][6:]
    return None


def main(argv=None) -> None:
    """The console script. Ctrl-C anywhere in it — importing the CLI too, before the commands'
    own handlers — ends it with 130 and no traceback (a hook with 0: hooks never fail)."""
    try:
        _main(argv)
    except KeyboardInterrupt:
        sys.exit(0 if (sys.argv[1:] if argv is None else list(argv))[:1] == ["hook"] else 130)


def _main(argv=None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"]:  # run by harnesses on every prompt and turn: never via click
        from .hook import main as hook_main

        sys.exit(hook_main(args[1:]))
    mcp_dir = parse_mcp(args[1:]) if args[:1] == ["mcp"] else None
    if mcp_dir is not None:  # harnesses will not wait for it: answer `initialize` before click loads
        from .mcp_server import run

        return run(mcp_dir or None)
    sync = args[:2] == ["mesh", "sync"]
    command = FAST.get("mesh sync" if sync else args[0]) if args else None
    fast = command[2](args[2 if sync else 1:]) if command else None
    if fast is None:
        try:
            from .cli import main as click_main
        except ImportError as e:  # click or rich missing: say so, no traceback
            fail(missing_module(e) or ChrolloError("internal", str(e)), "--json" in args)
        return click_main(args)
    try:
        code = command[3](fast)
    except ChrolloError as e:
        fail(e, fast["as_json"])
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as e:  # (as cli.main: a file the system refused is an error, not a bug)
        fail(os_error(e), fast["as_json"])
    except Exception as e:  # a bug: keep the envelope promise, then show the traceback
        if fast["as_json"]:
            dump(ChrolloError("internal", f"{type(e).__name__}: {e}",
                              "This is a bug in chrollo; please report it with the command you ran.").as_dict())
        raise
    if sync and argv is None:  # (the process's own command line: a caller in-process keeps its process)
        # A sync leaves 10,000s of records that the interpreter's exit would free one by one
        # (and collect once more, the collector off or not): ~25 ms of a sync with one new
        # turn. What it wrote is written and closed; only stdout and stderr hold bytes.
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            pass
        sys.stderr.flush()
        os._exit(code or 0)
    sys.exit(code or 0)
