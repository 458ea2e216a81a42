"""The ``chrollo`` command: parse, call the library, print. No logic lives here.

stdout carries data (human text, or one JSON object with ``--json``); stderr carries
diagnostics. Exit codes: 0 ok (no hits is ok), 1 runtime error, 2 usage error. With
``--json`` every error is ``{"error": {"kind", "message", "hint"}}`` on stdout.
"""
from __future__ import annotations

import os
import sys

import click

from . import __version__
from .console import aborted as _aborted
from .console import dump as _dump
from .console import fail as _fail
from .console import missing_module as _missing_module
from .console import os_error as _os_error
from .console import warn as _warn
from .errors import ChrolloError, UsageError
from .harness import adapter
from .harness import importers as _importers
from .harness import names as _harnesses
from .harness import profiles as _profiles


def _echo(out: list, notes: list = ()) -> None:
    """Print a report's lines (stdout) and notes (stderr)."""
    for line in out:
        click.echo(line)
    for line in notes:
        click.echo(line, err=True)


def _echo_streams(lines: list) -> None:
    """Print [(stream, text)] in order, "err" lines on stderr."""
    for stream, text in lines:
        click.echo(text, err=stream == "err")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="chrollo")
def cli():
    """chrollo: a memory for coding agents that never forgets.

    Every conversation turn is kept verbatim in one markdown file per session; recall is a
    ripgrep search ranked by matched terms and recency. Memory lives in $CHROLLO_HOME/memories
    (default ~/.chrollo/memories), or a project's .chrollo/memories once you trusted it with
    `chrollo init`, or $CHROLLO_MEMORIES_DIR.

    Start with `chrollo demo`.
    """


@cli.command()
@click.argument("query", nargs=-1, required=True)
@click.option("-n", "--limit", type=int, default=10, show_default=True, help="Most hits to return (1-50).")
@click.option("-C", "--context", type=int, default=3, show_default=True, help="Lines shown each side of a hit.")
@click.option("--since", metavar="DATE", help="Only turns on or after DATE (2026-06-01, yesterday, 7d, 2w, 3m, "
              "2026-06-01T14:30+02:00).")
@click.option("--until", metavar="DATE", help="Only turns on or before DATE (a day: the whole day).")
@click.option("--project", metavar="NAME|PATH", help="Only sessions of this project: its name, or a folder "
              "(sessions started there or below; a repository's folder or remote URL: its sessions "
              "on every machine).")
@click.option("--harness", metavar="NAME", help=f"Only sessions captured from this harness ({', '.join(_harnesses())}).")
@click.option("--peer", metavar="NAME", help="Only files received from this mesh peer.")
@click.option("--no-peers", is_flag=True, help="Leave out files received from mesh peers.")
@click.option("--dir", "dir_", metavar="PATH", help="Search this memory folder instead of the vault.")
@click.option("--all-vaults", is_flag=True, help="Search this project's vault and the global one as one "
              "list (each hit names its vault).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (hits with context) and nothing else.")
@click.option("--compact", is_flag=True, help="Print hits as agents get them (paths relative to the vault, no scores).")
@click.option("--expand", "expand_all", is_flag=True, help="Always add synonyms from the thesaurus.")
@click.option("--no-expand", "no_expand", is_flag=True, help="Never add synonyms (exact terms only).")
@click.option("--raw", is_flag=True, help="Print session text byte for byte (no escaping of control characters).")
def search(query, **opts):
    """Search past conversations for QUERY.

    Terms are matched as whole words, case-insensitively; rarer terms weigh more, a line
    holding more distinct terms ranks higher, and newer sessions win ties. Each hit shows
    its file:line (feed it to `chrollo read`), date and harness. When exact terms find too
    little (a term found nowhere, or fewer hits than --limit), synonyms from the bundled
    thesaurus are searched too, weighing half; --expand / --no-expand force it on or off.
    A "quoted phrase" inside QUERY must occur as written (still ranked by its terms).

    \b
    Examples:
      chrollo search flaky test retry
      chrollo search deploy staging --since 2026-01-01 --json
      chrollo search '"connection reset by peer"' --project shop-api --since 2w
    """
    from .console import run_search

    run_search(query, opts)


@cli.command()
@click.argument("target", metavar="SESSION|PATH[:LINE]")
@click.option("-B", "--before", type=int, default=3, show_default=True, help="Lines before LINE.")
@click.option("-A", "--after", type=int, default=3, show_default=True, help="Lines after LINE.")
@click.option("--turn", type=str, is_flag=False, flag_value="", default=None, metavar="[N]",
              help="With LINE: the whole turn that holds it. Without: turn N (from 1; --last 1 for the last).")
@click.option("--last", type=int, metavar="N", help="Only the last N turns.")
@click.option("--dir", "dir_", metavar="PATH", help="Memory folder the session is in (default: the vault).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--raw", is_flag=True, help="Print the file's bytes as they are (no rendering, no escaping).")
@click.option("--no-pager", is_flag=True, help="Never page (by default a long conversation on a terminal "
              "goes through $PAGER, else less).")
def read(target, before, after, turn, last, dir_, as_json, raw, no_pager):
    """Read a session: the whole conversation, or lines around a hit.

    SESSION is a session file, a session id or the first characters of one (as `chrollo
    sessions` shows it): the conversation is rendered for reading — coloured and through a
    pager on a terminal, plain when piped; --raw prints the file byte for byte. PATH:LINE
    (as `chrollo search` prints it) shows lines around LINE (-B/-A), or the whole turn
    (--turn). Only files inside the memory folders can be read (symlinks are resolved
    first). Control characters and escape sequences are shown as visible symbols (␛, ␊, …)
    unless --raw.

    \b
    Examples:
      chrollo read 3d9e6b2f                       # the whole conversation
      chrollo read 3d9e6b2f --last 2              # its last two turns
      chrollo read 2026-06-10_142536_019eb1a9.md:42 --turn
    """
    from pathlib import Path

    from .excerpt import conversation, read as run, split_target
    from .vault import memories_dir

    roots = [Path(os.path.expanduser(dir_)).resolve()] if dir_ else [memories_dir()]
    if turn:  # (a bare --turn is ""; a number given is one, from 1 — 0 was turn 1, silently)
        if not turn.isdigit() or int(turn) < 1:
            raise UsageError(f"--turn takes a turn number from 1, got {turn!r}", "--last 1 reads the last turn.",
                             kind="bad_turn")
        turn = int(turn)
    _, line = split_target(target)
    if line is not None:
        if last is not None:
            raise UsageError("--last goes with a SESSION, not PATH:LINE", kind="bad_usage")
        ex = run(target, before=before, after=after, turn=turn is not None, roots=roots)
        if as_json:
            _dump(ex.to_json())
            return
        from .output import emit, read_lines

        emit(read_lines(ex), raw=raw)
        return
    conv = conversation(target, turn=(turn or 1) if turn is not None else None, last=last, roots=roots)
    if as_json:
        _dump(conv.to_json())
    elif raw:
        sys.stdout.buffer.write(conv.raw_bytes())
    else:
        from .output import conversation_lines, page

        page(conversation_lines(conv), pager=not no_pager)


@cli.command()
@click.option("--since", metavar="DATE", help="Activity from DATE (default: the last 12 weeks; 2026-06-01, 30d, 3m…).")
@click.option("--until", metavar="DATE", help="Activity up to DATE (default: now).")
@click.option("--per", type=click.Choice(["day", "week"]), help="One bar per day or per week "
              "(default: days for a month or less).")
@click.option("--by", type=click.Choice(["project", "harness"]), help="Split each bar by project or harness.")
@click.option("--dir", "dir_", metavar="PATH", help="Memory folder to count (default: the vault).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (with the activity series).")
def stats(since, until, per, by, dir_, as_json):
    """What the vault holds (sessions, turns, bytes, dates, per harness and per peer), turns
    per day or week as a chart, and what recall did (prompts seen, injections, their share).

    \b
    Examples:
      chrollo stats
      chrollo stats --since 30d --by project
      chrollo stats --since 2026-01-01 --per week --json
    """
    from .vaultstats import stats as run

    st = run(dir_, since, until, per, by)
    if as_json:
        _dump(st.to_json())
        return
    from .output import emit_rows, stats_rows

    rows, warnings = stats_rows(st)
    _warn(warnings)
    emit_rows(rows)


@cli.command()
@click.option("-n", "--limit", type=click.IntRange(0), default=20, show_default=True,
              help="Most sessions to show (0: all).")
@click.option("--project", metavar="NAME|PATH", help="Only sessions of this project: its name, or a folder "
              "(sessions started there or below; a repository's folder or remote URL: its sessions "
              "on every machine).")
@click.option("--harness", metavar="NAME", help="Only sessions captured from this harness.")
@click.option("--peer", metavar="NAME", help="Only sessions received from this mesh peer.")
@click.option("--no-peers", is_flag=True, help="Leave out sessions received from mesh peers.")
@click.option("--since", metavar="DATE", help="Only sessions started on or after DATE (2026-06-01, yesterday, 7d, 2w, 3m…).")
@click.option("--until", metavar="DATE", help="Only sessions started on or before DATE.")
@click.option("--dir", "dir_", metavar="PATH", help="List this memory folder instead of the vault.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the schema is in docs/memory.md).")
def sessions(limit, project, harness, peer, no_peers, since, until, dir_, as_json):
    """List sessions, newest first: started, id, harness, project, turns, size, origin
    (local or the peer it came from), title.

    Give an id (or its first characters) to `chrollo read` to read the conversation.

    \b
    Examples:
      chrollo sessions
      chrollo sessions --project shop-api --since 2w
      chrollo sessions --harness codex -n 100 --json
    """
    from .console import run_sessions

    run_sessions(dict(limit=limit, project=project, harness=harness, peer=peer, no_peers=no_peers, since=since,
                      until=until, dir_=dir_, as_json=as_json))


@cli.command()
@click.argument("path", required=False, metavar="[PATH]")
@click.option("--untrust", is_flag=True, help="Stop using this project's vault (its files stay where they are).")
@click.option("--list", "list_", is_flag=True, help="List the trusted projects and whether each is still usable.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def init(path, untrust, list_, as_json):
    """Give the project at PATH (default: here) its own memory, and trust it.

    A project vault is PROJECT/.chrollo/memories, PROJECT being the folder of the nearest
    .chrollo up to the git root (else the git root, else PATH). chrollo uses one only after
    `chrollo init` ran there: a cloned repository that ships a .chrollo/ is ignored, so its
    planted memories are never recalled and your conversations are never written into its
    work tree. The trust is kept in $CHROLLO_HOME/trusted-projects.json (like `direnv allow`).
    A new .chrollo/ gets a .gitignore that keeps your conversations out of git.

    \b
    Examples:
      chrollo init                  # this project: create/trust .chrollo/memories
      chrollo init --list           # every trusted project and its state
      chrollo init --untrust        # back to the global vault for this project
    """
    from . import project_trust as trust

    if untrust and list_:
        raise UsageError("--untrust and --list cannot be used together", kind="bad_usage")
    if list_:
        if path:
            raise UsageError("--list takes no PATH", kind="bad_usage")
        rows = trust.trusted()
        if as_json:
            _dump({"projects": rows})
            return
        from .output import trusted_lines

        return _echo(*trusted_lines(rows))
    r = trust.untrust(path) if untrust else trust.trust(path)
    if as_json:
        _dump(r)
        return
    from .output import trust_lines, untrust_lines

    _echo(*(untrust_lines(r) if untrust else trust_lines(r)))


@cli.command()
@click.option("--keep", metavar="DIR", help="Copy the sample memory to DIR and keep it (default: a temp dir, removed after).")
def demo(keep):
    """Try chrollo on a bundled sample memory: a few searches and a read."""
    from .demo import run_demo

    run_demo(keep)


@cli.command()
@click.option("--dir", "dir_", metavar="PATH", help="Serve this memory folder (default: the vault).")
def mcp(dir_):
    """Serve read_memory and read_memory_file to an MCP client over stdio.

    `chrollo install <harness>` registers it (with the hooks); any other MCP client can
    start the command `chrollo mcp`. It answers `initialize` in well under 150 ms.
    """
    from .mcp_server import run

    run(dir_)


def _harness_command(name: str, doc: str):
    @click.argument("harness", type=click.Choice(_harnesses()), required=False)
    @click.option("--all", "all_", is_flag=True, help=(
        "Every harness found on this machine (its command on PATH or its folder present)"
        + (", except those with chrollo's own package installed." if name == "install" else
           ": take out what `chrollo install` added wherever it is.")))
    @click.option("--mcp", "mcp_", is_flag=True, help="Only the read_memory MCP server (`chrollo mcp`).")
    @click.option("--no-mcp", "no_mcp", is_flag=True, help="Only the hooks (capture and recall), not the MCP server.")
    @click.option("--config", metavar="PATH", help="Edit this file instead of the harness's own: the "
                  "hooks' (Gemini: hooks and tool, one file; Claude Code and Codex keep the tool in "
                  "another file, so it is skipped and said so), or with --mcp the MCP server's.")
    @click.option("--json", "as_json", is_flag=True, help="Print what was done as one JSON object.")
    def command(harness, all_, mcp_, no_mcp, config, as_json, vault=None):
        from . import install as inst

        if mcp_ and no_mcp:
            raise UsageError("--mcp and --no-mcp cannot be used together", kind="bad_usage")
        if bool(harness) == all_ or (all_ and config):
            raise UsageError(f"name one harness or --all (not both{', nor --all with --config' if config else ''})",
                             f"e.g. chrollo {name} {_harnesses()[0]}, or chrollo {name} --all", kind="bad_usage")
        if vault:  # before the hooks: a hook that fires meanwhile already writes there
            from .obsidian import use_vault
            from .output import install_vault_notes

            _echo([], install_vault_notes(use_vault(vault)))
        only = "mcp" if mcp_ else "hooks" if no_mcp else None
        if all_:
            _harness_all(name, only, as_json)
            return
        changes = [c.to_json() for c in (inst.install if name == "install" else inst.uninstall)(harness, only, config)]
        mod = adapter(harness)
        if name == "install" and hasattr(mod, "install_note"):
            for c in changes:
                note = mod.install_note(c["config"], lambda cmd: inst._is_ours(cmd, harness)) \
                    if c["part"] == "hooks" else ""
                if note:
                    c["note"] = note
        if name == "install":
            from .index.build import ensure

            ensure(None, create=True)  # (the vault's search index: built or extended, never fatal)
        if as_json:
            _dump({"harness": harness, "changes": changes})
            return
        from .output import install_lines

        _echo_streams(install_lines(name, harness, changes))
    if name == "install":
        command = click.option("--vault", metavar="PATH", help=(
            "Keep memory in PATH, e.g. a folder inside your Obsidian vault "
            "(same as `chrollo config vault PATH`)."))(command)
    return cli.command(name, help=doc)(command)


def _harness_all(name: str, only, as_json: bool) -> None:
    """`chrollo install --all` / `chrollo uninstall --all`."""
    from . import install as inst

    if name == "install":
        done = inst.install_all(only)
    else:  # wherever `chrollo install` left something (with --mcp: the harnesses that have one)
        done = {}
        for h in _harnesses():
            try:
                done[h] = inst.uninstall(h, only)
            except UsageError:
                continue
    out = {h: {"skipped": r} if isinstance(r, str) else {"changes": [c.to_json() for c in r]} for h, r in done.items()}
    if as_json:
        _dump({"harnesses": out})
        return
    from .output import install_all_lines

    _echo_streams(install_all_lines(name, out))


_harness_command("install", """Set chrollo up for HARNESS: capture every turn, recall before each
    prompt, and the read_memory tool.

    \b
    Writes into the harness's user config:
{table}
    The tool is the `chrollo mcp` server (read_memory, read_memory_file); --no-mcp leaves it
    out, --mcp installs only it.

    --vault PATH also keeps memory in PATH (see `chrollo config vault`), e.g.
      chrollo install {first} --vault ~/Notes/"Agent memory"

    --all sets up every harness found on this machine in one command (skipping any where
    chrollo's own plugin, extension or pi package is installed: see the README).

    Idempotent; everything else in the file is kept. `chrollo doctor` checks the result.""".format(
    table="\n".join(f"      {m.NAME:<12} {m.HELP}" for m in _profiles()), first=_harnesses()[0]))
_harness_command("uninstall", """Remove what `chrollo install` added to HARNESS's config (hooks and tool;
    --no-mcp / --mcp: one of them).

    If a file is still exactly as chrollo left it, its earlier bytes come back;
    otherwise only chrollo's entries are taken out (an edited pi extension is kept).""")


def _config_files(key, value, unset, as_json):
    """`chrollo config --files` (see `config`'s help)."""
    import os

    from .layout import settings_files

    if key or value or unset:
        raise UsageError("--files takes no setting", "Run `chrollo config --files` alone.", kind="usage")
    rows = [{"file": f, "exists": os.path.exists(f), "holds": what, "changed_by": how}
            for f, what, how in settings_files()]
    if as_json:
        _dump({"files": rows})
        return
    from .output import settings_files_lines

    _echo(settings_files_lines(rows))


def _config_vault(path, unset, as_json):
    """`chrollo config vault [PATH] [--unset]` (see `config`'s help)."""
    from . import vault as _v
    from .obsidian import use_vault, visibility

    if path and unset:
        raise UsageError("give a PATH or --unset, not both", kind="usage")
    if path or unset:
        report = use_vault(None if unset else path)
    else:
        where, source = _v.vault_source()
        report = {"vault": where, "source": source, "obsidian": visibility(where)}
    if as_json:
        _dump(report)
        return
    from .output import vault_lines

    _echo(*vault_lines(report))


@cli.command()
@click.option("--harness", "harnesses", multiple=True, metavar="NAME",
              type=click.Choice(_harnesses()),
              help="Check only this harness (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
def doctor(harnesses, as_json):
    """Check the setup: fire each installed hook with a sample payload, and start the
    registered read_memory tool (MCP: initialize, tools/list, a read_memory call).

    Both run against a throwaway memory, never your vault. Exit 1 if an installed hook or
    tool does not work.
    """
    from .doctor import diagnose
    from .output import doctor_lines, emit

    report = diagnose(harnesses or None)
    if as_json:
        _dump(report)
    else:
        emit(doctor_lines(report))
    if not report["ok"]:
        sys.exit(1)


@cli.command("index")
@click.option("--rebuild", is_flag=True, help="Start from nothing instead of adding what changed.")
@click.option("--dir", "dir_", metavar="PATH", help="Index this memory folder (default: the vault).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def index_(rebuild, dir_, as_json):
    """Build or bring up to date the search index of the vault (state/index/).

    The index only narrows which files ripgrep reads: results are the same with or without
    it, and deleting it costs nothing but speed. `chrollo install` and `chrollo import` keep
    it built, capture and mesh keep it in step; a file changed by anything else is searched
    directly until this command (or the next import) reads it again. See docs/index.md.
    """
    from .index.build import build as build_index
    from .output import index_line, progress_bar
    from .retrieval import resolve_roots

    vault, _folder = resolve_roots(dir_)
    with progress_bar("indexing", show=not as_json) as progress:
        summary = build_index(vault, rebuild=rebuild, progress=progress)
    if as_json:
        _dump(summary)
        return
    click.echo(index_line(summary))


def _import_sources() -> list:
    from .importer import sources

    return list(sources())


def _count_word(n: int) -> str:
    return {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}.get(n, str(n))


_IMPORT_HELP = """Backfill memory from transcripts the harnesses already keep.

    \b
    SOURCE and where it is read from by default:
{table}
      all            the {count} above
      jsonl          --source: files of {{"role","content","timestamp","session_id"}} lines
      chrollo-vault  --source: a vault of the original TypeScript Chrollo, adopted as is

    Writes the same session files as live capture, so nothing is imported twice: re-running
    adds only what is new. Unreadable files and lines are counted and skipped, never fatal.
    """.format(
    table="\n".join([f"      {n:<14} {adapter(n).IMPORT_HELP}" for n in _harnesses()]
                    + ["      import only (tools chrollo installs nothing in):"]
                    + [f"      {n:<14} {adapter(n).IMPORT_HELP}" for n in _importers() if n not in _harnesses()]),
    count=_count_word(len(_importers())))


@cli.command("import", help=_IMPORT_HELP)
@click.argument("source", type=click.Choice(_import_sources()))
@click.option("--source", "root", metavar="PATH", help="Import from this folder (or file) instead of the harness's own.")
@click.option("--since", metavar="DATE", help="Only transcripts modified on or after DATE (2026-06-01, 7d, …).")
@click.option("--dry-run", is_flag=True, help="Count what would be imported; write nothing.")
@click.option("--as", "as_harness", metavar="NAME", default="jsonl", show_default=True,
              help="With `import jsonl`: the harness name written in the frontmatter.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def import_(source, root, since, dry_run, as_harness, as_json):
    """Backfill memory from transcripts the harnesses already keep (help: _IMPORT_HELP)."""
    from .importer import run_import
    from .output import emit, import_lines, progress_bar

    with progress_bar("importing", show=not as_json, named=True) as progress:
        summary = run_import(source, root, since, dry_run, as_harness, progress=progress)
    if as_json:
        _dump(summary.to_json())
    else:
        emit(import_lines(summary))


@cli.command()
@click.argument("sessions", nargs=-1, metavar="[SESSION]...")
@click.option("--since", metavar="DATE", help="Sessions started on or after DATE (2026-06-01, yesterday, 7d, 2w, 3m…).")
@click.option("--until", metavar="DATE", help="Sessions started on or before DATE (the whole day).")
@click.option("--project", metavar="PATH|URL", help="Sessions whose working directory is inside PATH (never "
              "chosen by the repository PATH's .git claims: the others recording it are listed, kept), or that "
              "ran in the repository URL (its remote URL, or root:<sha>) names on any machine.")
@click.option("--lines", metavar="PATTERN", help="Only the lines holding PATTERN (e.g. a leaked key), in every file "
              "or in the sessions named; each becomes a marker and later captures scrub it too.")
@click.option("--regex", is_flag=True, help="PATTERN is a regular expression (RE2: Python syntax without "
              "backreferences or lookaround; linear time), not literal text.")
@click.option("--secrets", is_flag=True, help="Only the secrets the detector finds (API keys, tokens, passwords "
              "in URLs and commands…), replaced by [REDACTED:kind] — e.g. what was captured before "
              "capture-time redaction was turned on.")
@click.option("--dir", "dir_", metavar="PATH", help="The memory folder (default: the vault).")
@click.option("--dry-run", is_flag=True, help="Show what would be forgotten; change nothing.")
@click.option("-y", "--yes", is_flag=True, help="Do not ask before removing sessions.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
def forget(sessions, since, until, project, lines, regex, secrets, dir_, dry_run, yes, as_json):
    """Forget sessions, or lines, for good.

    SESSION is a session file (as `chrollo search` prints it, or relative to the vault) or a
    session id (8 characters or more of it). Whole sessions are deleted with their subagents'
    files; a tombstone keeps them deleted: the session's later turns are not captured,
    `chrollo import` skips it, and the mesh stops publishing it (peers' copies are theirs).
    With --lines only the matching lines go, replaced by "[forgotten by chrollo]"; no other
    byte changes. Safe to run twice.

    \b
    Examples:
      chrollo forget 2026-06-10_142536_019eb1a9.md
      chrollo forget --project ~/work/secret-client --dry-run
      chrollo forget --lines 'sk_live_51H8'
      chrollo forget --secrets --dry-run
    """
    from .forget import forget as run

    if not (dry_run or yes or as_json or lines is not None or secrets) and sys.stdin.isatty():
        preview = run(sessions, since, until, project, lines, regex, dir_, dry_run=True)
        from .output import forget_question

        if preview.sessions and not click.confirm(forget_question(preview), err=True):
            raise click.exceptions.Abort()
    report = run(sessions, since, until, project, lines, regex, dir_, dry_run=dry_run, secrets=secrets)
    if as_json:
        _dump(report.to_json())
        return
    from .output import emit, forget_lines

    emit(forget_lines(report))


@cli.command()
@click.argument("action", type=click.Choice(["add", "remove", "list"]), default="list")
@click.argument("paths", nargs=-1, metavar="[PATH|GLOB|URL]...")
@click.option("--json", "as_json", is_flag=True, help="Print the excluded projects as JSON.")
def exclude(action, paths, as_json):
    """Keep projects out of memory: `add`, `remove` or `list` (default).

    A session whose working directory is inside an excluded project (a folder, or a glob
    such as '~/clients/*') is never captured and gets no recall, and sessions kept before
    it was excluded are never injected. A repository's folder excludes that repository on
    every machine too (a peer's sessions of it; its remote URL alone does the same).
    `chrollo forget --project PATH` removes those.
    """
    from .forget import exclude as run
    from .privacy import rules

    if action == "list":
        if paths:
            raise UsageError("`exclude list` takes no paths", kind="bad_usage")
        current = rules().exclude
    elif not paths:
        raise UsageError(f"`exclude {action}` needs a PATH", "e.g. chrollo exclude add ~/work/client-x",
                         kind="bad_usage")
    else:
        current = run(list(paths), remove=action == "remove")
    if as_json:
        _dump({"exclude": current})
    else:
        from .output import exclude_lines

        _echo(exclude_lines(current))


# the settings `chrollo config` changes (privacy.json): name -> (key, kind)
SETTINGS = {"redact-capture": ("redact_capture", "switch"), "recall-log": ("recall_log", "switch"),
            "recall-log-max-mb": ("recall_log_max_mb", "number"), "recall-log-days": ("recall_log_days", "number")}


@cli.command()
@click.argument("key", required=False, type=click.Choice(sorted([*SETTINGS, "vault"])))
@click.argument("value", required=False)
@click.option("--unset", is_flag=True, help="With vault: back to the default, $CHROLLO_HOME/memories.")
@click.option("--files", "files", is_flag=True,
              help="List every file chrollo keeps settings in, what it holds and what changes it.")
@click.option("--json", "as_json", is_flag=True, help="Print the settings as one JSON object.")
def config(key, value, unset, files, as_json):
    """Show or change chrollo's settings.

    \b
    redact-capture  on: secrets (API keys, tokens, passwords in URLs and commands…) are
                    replaced by [REDACTED:kind] before a turn is written. Off by default:
                    memory is verbatim, and the detector then runs on every capture.
                    `chrollo forget --secrets` scrubs what was captured before.
    recall-log      on (default): every prompt the recall hook sees is logged, with what
                    it injected (`chrollo recall log`); off stops it and removes the log.
    recall-log-max-mb N   the log's most megabytes (default 5, 0.01 to 10000; the oldest
                          entries go).
    recall-log-days N     how long an entry is kept (default 90 days, 1 to 36500).
    vault [PATH]    where memory lives (the global vault); e.g. inside the Obsidian vault
                    you already use: chrollo config vault ~/Notes/"Agent memory".
                    Only session files and chrollo.base go there; state/, logs and keys
                    stay in $CHROLLO_HOME. A project's .chrollo/ vault and
                    CHROLLO_MEMORIES_DIR still come first. --unset: the default again.
    --files         every settings file (they live in $CHROLLO_HOME), whether it exists,
                    what it holds and the command that changes it.
    """
    if files:
        return _config_files(key, value, unset, as_json)
    if key == "vault":
        return _config_vault(value, unset, as_json)
    if unset:
        raise UsageError("--unset goes with `chrollo config vault`", kind="usage")
    from .privacy import set_setting, settings

    if value is not None:
        k, kind = SETTINGS[key]
        if kind == "switch":
            if value not in ("on", "off"):
                raise UsageError(f"{key} takes on or off, got {value!r}", kind="usage")
            set_setting(k, value == "on")
            if key == "recall-log" and value == "off":
                from .receipts import clear

                n = clear()
                if n:
                    from .output import recall_log_removed

                    _echo([], [recall_log_removed(n)])
        else:
            try:
                number = float(value)
                if not 0 < number <= 1e6:
                    raise ValueError
            except ValueError:
                raise UsageError(f"{key} takes a positive number, got {value!r}", kind="usage") from None
            number = int(number) if number.is_integer() else number
            from .receipts import settings as log_settings

            # (the range is the reader's: a value it would ignore, keeping the default, is refused)
            field = {"recall_log_max_mb": "max_mb", "recall_log_days": "days"}[k]
            if log_settings({k: number})[field] != number:
                raise UsageError(f"{key} {value} is out of range (chrollo would ignore it and keep "
                                 f"{log_settings({})[field]})", "See `chrollo config --help` for the range.",
                                 kind="usage")
            set_setting(k, number)
    from .receipts import settings as log_settings

    got, log = settings(), log_settings()
    current = {"redact-capture": "on" if got.get("redact_capture") is True else "off",
               "recall-log": "on" if log["enabled"] else "off",
               "recall-log-max-mb": log["max_mb"], "recall-log-days": log["days"]}
    shown = {key: current[key]} if key else current
    if not key:  # every setting, the vault too (`chrollo config vault` for where it comes from)
        from .vault import vault_source

        shown["vault"] = vault_source()[0]
    if as_json:
        _dump(shown)
    else:
        from .output import settings_lines

        _echo(settings_lines(shown))


@cli.group()
def recall():
    """What ambient recall injected, and why (receipts).

    Every prompt the recall hook sees is logged in $CHROLLO_HOME/logs/recall.jsonl (owner-only):
    when, harness, session, and for an injection the prompt's first words and each excerpt's
    file:line and size. Bounded (`chrollo config recall-log-max-mb N`, `recall-log-days N`),
    off with `chrollo config recall-log off`; `chrollo forget` removes what cites what it forgot.
    """


@recall.command("log")
@click.option("-n", "--limit", type=click.IntRange(0), default=20, show_default=True, help="Most entries (0: all).")
@click.option("--all", "all_", is_flag=True, help="Also the prompts nothing was injected into.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def recall_log(limit, all_, as_json):
    """The newest injections first: when, harness, session, prompt, excerpts (file:line)."""
    from . import receipts

    rows = receipts.entries(limit, injections_only=not all_)
    conf = receipts.settings()
    if as_json:
        _dump({"log": receipts.log_path(), "enabled": conf["enabled"], "entries": rows})
        return
    from .output import emit, receipt_lines, receipt_notes

    emit(receipt_lines(rows))
    _echo([], receipt_notes(conf["enabled"], rows, receipts.log_path()))


@recall.command("why")
@click.argument("prompt", nargs=-1, required=True)
@click.option("--session", metavar="ID", help="Answer as if in this session (its own lines "
              "and those already injected into it are left out).")
@click.option("--budget", metavar="SIZE", help="small, medium, large or a number of characters.")
@click.option("--dir", "dir_", metavar="PATH", help="Recall from this memory folder instead of the vault.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def recall_why(prompt, session, budget, dir_, as_json):
    """What recall would inject for PROMPT now, and why: its terms and their weights, each
    hit's verdict, the gate's decision and the block itself. Writes nothing.

    \b
    Example:
      chrollo recall why "why does the nightly backup job fail?"
    """
    import time

    from .harness import plain_id
    from .recall import check_budget, recall as run

    if session is not None and not plain_id(session):   # (click hands `--session --json` "--json")
        raise UsageError(f"--session takes a session id (letters, digits and ._@:+-, from a letter or digit), "
                         f"got {session!r}", "`chrollo sessions` lists them.", kind="bad_usage")
    if budget is not None:
        check_budget(budget)
    trace: dict = {}
    text = run(" ".join(prompt), session or "-", budget=budget, vault=dir_, started=time.monotonic(),
               trace=trace, dry=True)
    trace["block"] = text
    if as_json:
        _dump(trace)
        return
    from .output import emit, why_lines

    emit(why_lines(trace))


@cli.group()
def mesh():
    """Share session files with paired peers (other machines, other agents), safely.

    Each node has its own key pair and certificate; its ID is the certificate's fingerprint.
    Peers are paired explicitly by ID, on both sides, and exchange signed manifests.

    \b
    chrollo mesh init                          this node's identity (prints its ID)
    chrollo mesh peers add [HOST:PORT] --id ID --name NAME   pair a peer
    chrollo mesh sync --folder ~/Sync/chrollo  through a folder Syncthing/Dropbox/… replicates
    chrollo mesh sync --git REMOTE             through any git remote
    chrollo mesh serve --bind 0.0.0.0          LAN server (TLS 1.3, mutual auth) …
    chrollo mesh sync --all                    … and pull from every peer with an address
    chrollo mesh peers set NAME --recall       let a peer's files into ambient recall
    chrollo mesh status                        last sync, files, bytes, errors per peer
    """


def _migrate(*_):
    from .mesh.config import MIGRATE_HINT

    raise UsageError("swarm keys are gone: each node now has its own identity", MIGRATE_HINT, kind="mesh_migrate")


@mesh.command("init")
@click.option("--name", metavar="NAME", help="This node's name (default: the host name); a-z, 0-9, -.")
@click.option("--force", is_flag=True, help="Replace this node's identity (its peers must pair the new ID).")
@click.option("--join", hidden=True, callback=lambda c, p, v: _migrate() if v else v, expose_value=False)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def mesh_init(name, force, as_json):
    """Give this node its own key pair and certificate; prints its node ID."""
    from .mesh.config import init

    cfg, ident = init(name, force)
    if as_json:
        _dump({"name": cfg.name, "id": ident.id})
        return
    from .output import mesh_init_lines

    _echo(*mesh_init_lines(cfg.name, ident.id))


@mesh.command("id")
def mesh_id():
    """Print this node's ID (give it to the peers that should pair with it)."""
    from .mesh.config import mesh_dir
    from .mesh.identity import Identity

    click.echo(Identity.load(mesh_dir()).id)


@mesh.command("key", hidden=True)
def mesh_key():
    """Gone: swarm keys were replaced by per-node identities."""
    _migrate()


@mesh.command("serve")
@click.option("--bind", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=47470, show_default=True, help="Port (0: any free port).")
@click.option("--dir", "dir_", metavar="PATH", help="Serve this memory folder (default: the vault).")
@click.option("--announce", is_flag=True, help="Also announce this node over mDNS (needs zeroconf).")
def mesh_serve(bind, port, dir_, announce):
    """Serve this node's sessions to paired peers over TLS 1.3 (until Ctrl-C)."""
    from .mesh.server import serve
    from .output import serving_line

    def ready(host, real_port, node_id):
        click.echo(serving_line(host, real_port, node_id), err=True)
        sys.stderr.flush()

    serve(bind, port, dir_, ready, announce)


@mesh.group("peers", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the peers as JSON.")
@click.pass_context
def mesh_peers(ctx, as_json):
    """List the paired peers (subcommands: add, remove, set, list, discover)."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(mesh_peers_list, as_json=as_json)


@mesh_peers.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the peers as JSON.")
def mesh_peers_list(as_json):
    """List the paired peers and their switches."""
    from .mesh.config import MeshConfig

    cfg = MeshConfig.load()
    if as_json:
        _dump({"name": cfg.name, "peers": cfg.peers})
        return
    from .output import peers_lines

    _echo(*peers_lines(cfg.peers))


@mesh_peers.command("add")
@click.argument("address", metavar="[HOST:PORT]", required=False)
@click.option("--id", "node_id", required=True, metavar="ID", help="The peer's node ID (`chrollo mesh id` there).")
@click.option("--name", metavar="NAME", help="What to call it here: its files land in peers/NAME/.")
@click.option("--json", "as_json", is_flag=True, help="Print the peer as JSON.")
def mesh_peers_add(address, node_id, name, as_json):
    """Pair a peer by its ID (HOST:PORT for the LAN server; none for --git/--folder)."""
    from .mesh.config import MeshConfig

    cfg = MeshConfig.load()
    peer = cfg.add_peer(node_id, name, address)
    cfg.save()
    if as_json:
        _dump(peer)
        return
    from .output import peer_added_line

    click.echo(peer_added_line(peer))


@mesh_peers.command("remove")
@click.argument("peer", metavar="NAME|ID")
@click.option("--keep-files", is_flag=True, help="Keep the files received from it (still searchable).")
@click.option("--dir", "dir_", metavar="PATH", help="The memory folder its files are in (default: the vault).")
@click.option("--json", "as_json", is_flag=True, help="Print the removed peer as JSON.")
def mesh_peers_remove(peer, keep_files, dir_, as_json):
    """Unpair a peer: it is refused from now on, and the files received from it
    (<vault>/peers/NAME/) are deleted unless --keep-files."""
    from . import vault as _v
    from .mesh.config import MeshConfig
    from .mesh.manifests import drop_peer

    cfg = MeshConfig.load()
    gone = cfg.remove_peer(peer)
    cfg.save()
    gone = dict(gone, files_removed=drop_peer(gone, dir_ or _v.memories_path(), _v.home_path(), keep_files))
    if as_json:
        _dump(gone)
        return
    from .output import peer_removed_line

    click.echo(peer_removed_line(gone, keep_files))


@mesh_peers.command("set")
@click.argument("peer", metavar="NAME|ID")
@click.option("--searchable/--no-searchable", default=None, help="Search (and read_memory) sees its files.")
@click.option("--recall/--no-recall", default=None, help="Its files may be injected into prompts (default off).")
@click.option("--quota", "quota_mb", type=click.IntRange(0, 1 << 20), metavar="MB", help="Most megabytes taken from it.")
@click.option("--address", metavar="HOST:PORT", help="Its LAN server's address.")
@click.option("--json", "as_json", is_flag=True, help="Print the peer as JSON.")
def mesh_peers_set(peer, searchable, recall, quota_mb, address, as_json):
    """Change a peer's switches: searchable, recall, quota, address."""
    from .mesh.config import MeshConfig

    cfg = MeshConfig.load()
    p = cfg.set_peer(peer, searchable=searchable, recall=recall, quota_mb=quota_mb, address=address)
    cfg.save()
    if as_json:
        _dump(p)
        return
    from .output import peer_set_line

    click.echo(peer_set_line(p))


@mesh_peers.command("discover")
@click.option("--timeout", type=float, default=3.0, show_default=True, help="Seconds to listen.")
@click.option("--add", "add", is_flag=True, help="Record the address of every paired peer found.")
@click.option("--json", "as_json", is_flag=True, help="Print what was found as JSON.")
def mesh_peers_discover(timeout, add, as_json):
    """Find nodes announcing themselves on the local network (mDNS). Finding never pairs:
    --add only records addresses of peers already paired by ID."""
    from .mesh.config import MeshConfig
    from .mesh.discovery import discover

    from .mesh.client import probe
    from .sanitize import clean_obj

    cfg = MeshConfig.load()
    paired = cfg.by_id()
    # what an announcement says is a stranger's word: shown sanitized, and an address is
    # recorded only when the node answering there proves the paired ID in a TLS handshake
    found = [clean_obj(dict(f, paired=f.get("id") in paired)) for f in discover(timeout) if f["node"] != cfg.name]
    if add:
        for f in found:
            if f["paired"]:
                f["verified"] = probe(f["address"]) == f["id"]
                if f["verified"]:
                    paired[f["id"]]["address"] = f["address"]
        cfg.save()
    if as_json:
        _dump({"found": found, "added": add})
    else:
        from .output import discover_lines

        _echo(*discover_lines(found))


@mesh.command("sync")
@click.argument("peer", required=False, metavar="[NAME|ID]")
@click.option("--all", "all_", is_flag=True, help="Every paired peer (the default with --git/--folder).")
@click.option("--git", "remote", metavar="REMOTE", help="Swap through this git remote.")
@click.option("--folder", metavar="PATH", help="Swap through this folder (one a sync tool replicates).")
@click.option("--dir", "dir_", metavar="PATH", help="The memory folder to sync (default: the vault).")
@click.option("--timeout", type=click.FloatRange(1, None), default=1800.0, show_default=True, metavar="SECONDS",
              help="Seconds for everything from one peer; what is left waits for the next sync.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def mesh_sync(peer, all_, remote, folder, dir_, timeout, as_json):
    """Publish this node's sessions (redacted, signed) and take what is new from paired peers
    into <vault>/peers/<name>/. Exit 1 if a peer failed.

    With --git or --folder this node publishes too, sealed for the paired peers whose
    certificate it has seen (a peer's first publication shows it): right after pairing, run
    it on each side, then once more. Without them it pulls from the peers' LAN servers.
    """
    from .console import run_mesh_sync

    sys.exit(run_mesh_sync({"peer": peer, "all_": all_, "remote": remote, "folder": folder, "dir_": dir_,
                            "timeout": timeout, "as_json": as_json}))


@mesh.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as one JSON object.")
def mesh_status(as_json):
    """Per peer: last sync, files, bytes, errors."""
    from .mesh.config import MeshConfig
    from .mesh.manifests import status

    st = status(MeshConfig.load())
    if as_json:
        _dump(st)
        return
    from .output import mesh_status_lines

    _echo(mesh_status_lines(st))


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
             add_help_option=False)
@click.pass_context
def hook(ctx):
    """Run by a harness's hooks: capture and recall (JSON on stdin; `chrollo hook --help`)."""
    from .hook import main as hook_main

    sys.exit(hook_main(list(ctx.args)))


def main(argv=None) -> None:
    """Entry point: maps every failure onto an exit code and, with --json, the error envelope."""
    args = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in args
    try:
        cli.main(args=args, prog_name="chrollo", standalone_mode=False)
    except ChrolloError as e:
        _fail(e, as_json)
    except getattr(click.exceptions, "NoArgsIsHelpError", ()) as e:  # click>=8.2: bare group
        click.echo(e.ctx.get_help() if e.ctx else str(e), err=True)
        sys.exit(2)
    except click.UsageError as e:
        if as_json:
            _fail(UsageError(e.format_message(), "See `chrollo --help`."), True)
        e.show()
        sys.exit(2)
    except click.exceptions.Abort:
        _aborted()
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except ImportError as e:
        missing = _missing_module(e)
        if missing is None:
            raise
        _fail(missing, as_json)
    except BrokenPipeError:
        sys.stderr.close()  # `chrollo search … | head` is fine
        sys.exit(0)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as e:  # the system refused a file the user named (too long a name, a folder…)
        _fail(_os_error(e), as_json)
    except Exception as e:  # a bug: say so plainly, keep the envelope promise
        if as_json:
            _fail(ChrolloError("internal", f"{type(e).__name__}: {e}",
                               "This is a bug in chrollo; please report it with the command you ran."), True)
        raise
    sys.exit(0)
