"""What every command prints through: the output contract's primitives, `chrollo search`,
`chrollo sessions` and `chrollo mesh sync`.

stdout is data (one JSON object with ``--json``), stderr is diagnostics; an expected failure
is the error envelope and exit code 1 or 2. Both front doors — the click-free one in
``entry.py`` and the click CLI in ``cli.py`` — print through here, so they cannot drift apart
(and neither imports the other's module for it: ``entry`` → ``cli`` → ``console``).
"""
from __future__ import annotations

import json
import sys

from .errors import ChrolloError


def dump(obj) -> None:
    """One JSON object on stdout: lossless, and inert on a terminal (see sanitize.json_text)."""
    from .sanitize import json_text

    text = json.dumps(obj, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a path from argv with undecodable bytes: \u-escaped, valid JSON
        text = json.dumps(obj)
    sys.stdout.write(json_text(text) + "\n")


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


def aborted():
    """The user said no at a question (or pressed Ctrl-D there): "Aborted." on stderr, exit 1."""
    sys.stderr.write("Aborted.\n")
    sys.exit(1)


def warn(warnings: list) -> None:
    for w in warnings:
        say(f"chrollo: warning: {w}")


def run_search(query: tuple, opts: dict) -> None:
    """`chrollo search`, whichever parser read the command line: ``opts`` holds every option
    under its click name (entry.SEARCH_DEFAULTS)."""
    from .errors import UsageError
    from .retrieval import SearchOptions, search

    as_json, compact, raw = opts["as_json"], opts["compact"], opts["raw"]
    if opts["peer"] and opts["no_peers"]:
        raise UsageError("--peer and --no-peers cannot be used together", kind="bad_usage")
    if opts["expand_all"] and opts["no_expand"]:
        raise UsageError("--expand and --no-expand cannot be used together", kind="bad_usage")
    if compact and as_json:
        raise UsageError("--compact and --json cannot be used together", kind="bad_usage")
    if opts["all_vaults"] and (opts["dir_"] or opts["peer"]):
        raise UsageError("--all-vaults searches every vault: it goes without --dir and --peer", kind="bad_usage")
    expand = "always" if opts["expand_all"] else "never" if opts["no_expand"] else "auto"
    result = search(" ".join(query), SearchOptions(
        limit=opts["limit"], context=opts["context"], dir=opts["dir_"], since=opts["since"],
        until=opts["until"], project=opts["project"], harness=opts["harness"], peer=opts["peer"],
        peers=not opts["no_peers"], expand=expand, all_vaults=opts["all_vaults"]))
    if opts["harness"] and not result.hits:
        _check_harness(opts["harness"])
    if result.unindexed:
        from .index import after_search, held
        from .output import indexing_note

        behind = held(result.unindexed)
        if after_search(result.unindexed):
            say(indexing_note(result.unindexed, behind))
    if as_json:
        dump(result.to_json())
        warn(result.warnings)
        return
    if compact:  # what agents get (pi's read_memory): stdout is the whole answer
        from .output import compact_search

        warn(result.warnings)
        sys.stdout.write(compact_search(result))
        return
    from .output import emit, search_lines, search_notes

    warn(result.warnings)
    emit(search_lines(result), raw=raw)
    for line in search_notes(result):
        say(line)


def _check_harness(name: str) -> None:
    """No hit from a harness chrollo does not know: more likely a typo than an empty result.
    (A name given with `chrollo import jsonl --as NAME` is fine once such a session is found.)"""
    from .harness import importers

    if name not in importers():
        from .errors import UsageError

        raise UsageError(f"no session comes from a harness named {name!r}",
                         f"Known harnesses: {', '.join(importers())} (and names given with "
                         "`chrollo import jsonl --as NAME`).", kind="bad_harness")


def disk_full(e: OSError) -> bool:
    """Whether the system refused a write for want of room (a full disk, a quota, a size limit)."""
    import errno

    return e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def os_error(e: OSError) -> ChrolloError:
    """The system refused a file the user named (too long a name, a folder, …): os_error, exit 1."""
    import os

    named = isinstance(e.filename, (str, bytes))
    what = f": {os.fsdecode(e.filename)}" if named else ""
    if disk_full(e):
        hint = "The disk is full (or a quota or file size limit was reached): free some space and try again."
    elif named:
        hint = "Check the path you gave (it may be too long, a folder, or not readable)."
    else:  # (no path: the system refused something else — do not send the user after one)
        hint = "The system refused it; check the disk and that chrollo's home ($CHROLLO_HOME) is usable."
    return ChrolloError("os_error", f"{e.strerror or type(e).__name__}{what}", hint)


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


def run_sessions(opts: dict) -> None:
    """`chrollo sessions`, whichever parser read the command line: ``opts`` holds every option
    under its click name (entry.SESSIONS_DEFAULTS)."""
    from .catalog import filters, sessions

    listing = sessions(opts["dir_"], filters(opts["project"], opts["harness"], opts["peer"], opts["no_peers"],
                                             opts["since"], opts["until"]), opts["limit"])
    if opts["as_json"]:
        dump(listing.to_json())
        return
    from .output import emit_rows, sessions_lines, sessions_notes

    emit_rows(sessions_lines(listing))
    filtered = bool(opts["project"] or opts["harness"] or opts["peer"] or opts["since"] or opts["until"])
    for note in sessions_notes(listing, filtered, opts["limit"]):
        say(note)


def run_mesh_sync(opts: dict) -> int:
    """`chrollo mesh sync`, whichever parser read the command line (entry.MESH_SYNC_DEFAULTS);
    returns the exit code: 1 if a peer failed. (A sync tool may run it every few seconds:
    click's import alone was a fifth of a sync with nothing new.)"""
    from .errors import UsageError

    peer, remote, folder = opts["peer"], opts["remote"], opts["folder"]
    if remote and folder:
        raise UsageError("pick one transport: --git or --folder", kind="bad_usage")
    if peer and opts["all_"]:
        raise UsageError("name one peer, or pass --all", kind="bad_usage")
    if not (remote or folder) and not (peer or opts["all_"]):
        raise UsageError("name one peer, or pass --all", "chrollo mesh sync --all", kind="bad_usage")
    import gc

    # A sync makes 10,000s of small records that live to its end, and the cyclic collector
    # walked them again and again (10-25 % of a sync of 10,000 files); this process is short
    # and what it makes is freed by reference counting (`mesh serve` keeps the collector).
    gc.disable()
    from .mesh.sync import sync

    result = sync(peer, folder=folder, remote=remote, vault=opts["dir_"], timeout=opts["timeout"])
    if opts["as_json"]:
        dump(result)
    else:
        from .output import sync_lines

        for stream, text in sync_lines(result, remote or folder):
            (sys.stderr if stream == "err" else sys.stdout).write(text + "\n")
    return 1 if result["errors"] or any(r["errors"] for r in result["peers"]) else 0
