"""The ``chrollo`` console script: a click-free front door for the hot path, click for the rest.

``chrollo search`` runs on every recall (by agents, by hooks), and importing click costs
tens of milliseconds before any work starts (48 ms measured on the CI machine — more than
the whole search on a 10 MB vault). So a well-formed ``search`` command line is parsed here
with a table of its options; anything else — ``--help``, an unknown option, a bad value, any
other command — goes to the click CLI in ``cli.py``, which owns help and usage errors. Both
paths run the same ``run_search`` below, so their output cannot drift apart. ``chrollo hook``
and ``chrollo mcp [--dir PATH]`` (started by harnesses that will not wait for a slow MCP
server) never load click either.
"""
from __future__ import annotations

import json
import sys

from .errors import ChrolloError

# search's options: name -> (dest, converter or None for a flag). Mirrors cli.search.
SEARCH_OPTIONS = {
    "-n": ("limit", int), "--limit": ("limit", int),
    "-C": ("context", int), "--context": ("context", int),
    "--since": ("since", str), "--harness": ("harness", str), "--peer": ("peer", str),
    "--dir": ("dir_", str), "--no-peers": ("no_peers", None), "--json": ("as_json", None),
    "--compact": ("compact", None),
    "--expand": ("expand_all", None), "--no-expand": ("no_expand", None),
    "--raw": ("raw", None),
}
SEARCH_DEFAULTS = {"limit": 10, "context": 3, "since": None, "harness": None, "peer": None,
                   "dir_": None, "no_peers": False, "as_json": False, "expand_all": False,
                   "no_expand": False, "raw": False, "compact": False}


def dump(obj) -> None:
    """One JSON object on stdout: lossless, and inert on a terminal (see sanitize.json_text)."""
    from .sanitize import json_text

    sys.stdout.write(json_text(json.dumps(obj, ensure_ascii=False)) + "\n")


def say(msg: str) -> None:
    """A diagnostic line on stderr (sanitized: it may quote a file name or a query)."""
    from .sanitize import clean

    sys.stderr.write(clean(msg) + "\n")


def fail(err: ChrolloError, as_json: bool):
    """Report an expected failure (envelope on stdout with --json) and exit with its code."""
    if as_json:
        dump(err.as_dict())
    else:
        say(f"chrollo: error: {err.message}")
        if err.hint:
            say(f"hint: {err.hint}")
    sys.exit(err.exit_code)


def warn(warnings: list) -> None:
    for w in warnings:
        say(f"chrollo: warning: {w}")


def run_search(query: tuple, limit: int, context: int, since, harness, peer, no_peers: bool,
               dir_, as_json: bool, expand_all: bool = False, no_expand: bool = False,
               raw: bool = False, compact: bool = False) -> None:
    """`chrollo search`, whichever parser read the command line."""
    from .errors import UsageError
    from .retrieval import search

    if peer and no_peers:
        raise UsageError("--peer and --no-peers cannot be used together", kind="bad_usage")
    if expand_all and no_expand:
        raise UsageError("--expand and --no-expand cannot be used together", kind="bad_usage")
    if compact and as_json:
        raise UsageError("--compact and --json cannot be used together", kind="bad_usage")
    result = search(" ".join(query), limit=limit, context=context, dir=dir_, since=since,
                    harness=harness, peer=peer, peers=not no_peers,
                    expand="always" if expand_all else "never" if no_expand else "auto")
    if as_json:
        dump(result.to_json())
        warn(result.warnings)
        return
    if compact:  # what agents get (pi's read_memory): stdout is the whole answer
        from .output import compact_search

        warn(result.warnings)
        sys.stdout.write(compact_search(result))
        return
    from .output import emit, search_lines

    warn(result.warnings)
    emit(search_lines(result), raw=raw)
    for term, syns in result.expanded.items():
        say(f"chrollo: also searched {', '.join(syns)} for {term}")
    n = len(result.hits)
    if not result.terms:
        say("chrollo: the query has no searchable terms (only stopwords or 1-letter words).")
    elif n == 0:
        say(f"chrollo: no matches for {', '.join(result.terms)} in {result.vault}")
    else:
        say(f"chrollo: {n} hit{'s' * (n != 1)} · {result.total_matches} occurrences · "
            f"terms: {', '.join(result.terms)}")


def parse_search(args: list) -> dict | None:
    """The search arguments as keyword arguments, or None when click should handle them."""
    opts = dict(SEARCH_DEFAULTS)
    query: list = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            query += args[i + 1:]
            break
        if a.startswith("-") and a != "-":
            name, eq, value = a.partition("=") if a.startswith("--") else (a, "", "")
            spec = SEARCH_OPTIONS.get(name)
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
    if not query:
        return None
    opts["query"] = tuple(query)
    return opts


# import name -> the distribution that provides it, for the hint
_DISTRIBUTIONS = {"yaml": "PyYAML", "detect_secrets": "detect-secrets"}


def missing_module(e: ImportError) -> ChrolloError | None:
    """A library chrollo depends on is not importable (a broken or partial install): an error
    with the pip command that fixes it. None for chrollo's own modules (that is a bug)."""
    name = (getattr(e, "name", None) or "").split(".")[0]
    if not name or name == "chrollo":
        return None
    dist = _DISTRIBUTIONS.get(name, name)
    return ChrolloError("missing_module", f"the Python package {dist!r} is not installed ({e})",
                        f"pip install '{dist}'   (or reinstall chrollo: pip install --force-reinstall chrollo)")


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
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["hook"]:  # run by harnesses on every prompt and turn: never via click
        from .hook import main as hook_main

        sys.exit(hook_main(args[1:]))
    mcp_dir = parse_mcp(args[1:]) if args[:1] == ["mcp"] else None
    if mcp_dir is not None:  # harnesses will not wait for it: answer `initialize` before click loads
        from .mcp_server import run

        return run(mcp_dir or None)
    fast = parse_search(args[1:]) if args[:1] == ["search"] else None
    if fast is None:
        try:
            from .cli import main as click_main
        except ImportError as e:  # click or rich missing: say so, no traceback
            fail(missing_module(e) or ChrolloError("internal", str(e)), "--json" in args)
        return click_main(args)
    try:
        run_search(**fast)
    except ChrolloError as e:
        fail(e, fast["as_json"])
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # a bug: keep the envelope promise, then show the traceback
        if fast["as_json"]:
            dump(ChrolloError("internal", f"{type(e).__name__}: {e}",
                              "This is a bug in chrollo; please report it with the command you ran.").as_dict())
        raise
    sys.exit(0)
