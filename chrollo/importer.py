"""Backfill: existing harness transcripts → session files, through the same adapters and the
same exactly-once capture as the live hooks (so a session captured live and imported later is
one file, and re-running an import writes nothing).

Per file: the adapter says which session it holds (``session_of``), a :class:`Capture` pass
reads it from the session's watermark and appends what is new. Files whose size and mtime are
unchanged since the last import are not even opened (``state/import/files.json``). Nothing
aborts a run: a file that cannot be read or parsed is counted with its reason.

Sources: every adapter of :func:`chrollo.harness.importers` — the hook harnesses and the
import-only tools (Cursor, Aider, Cline, …) — from their default folders or ``--source`` (a file may hold many sessions: ``session_of``
then lists them, each read in its own pass and skipped on its own by the privacy rules); ``all``
(every one of them, each from its default place); ``jsonl`` (generic one-message-per-line files)
and ``chrollo-vault`` (a folder of session files written by the original TypeScript Chrollo,
adopted as they are). The list with where each is read: docs/import.md.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from pathlib import Path

from . import vault as _vault
from .errors import ChrolloError, UsageError

OTHER_SOURCES = ("all", "jsonl", "chrollo-vault")


def sources() -> tuple:
    """Every SOURCE of ``chrollo import``: each harness, then :data:`OTHER_SOURCES`."""
    from .harness import importers

    return importers() + OTHER_SOURCES
MAX_FILE = 2 << 30   # a transcript over 2 GiB is skipped, not parsed
GUESS_MAX = 64 << 20  # a file no turn was found in is read by the other adapters up to this size


class FileResult:
    __slots__ = ("path", "harness", "status", "reason", "turns", "bytes", "session_id")

    def __init__(self, path: str, harness: str, status: str, reason: str = "", turns: int = 0,
                 nbytes: int = 0, session_id: str | None = None):
        self.path, self.harness, self.status, self.reason = path, harness, status, reason
        self.turns, self.bytes, self.session_id = turns, nbytes, session_id

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


class Summary:
    """What an import did; ``to_json`` is `chrollo import --json`."""

    STATUSES = ("imported", "updated", "unchanged", "skipped", "failed")

    def __init__(self, sources: list, dry_run: bool):
        self.sources, self.dry_run = sources, dry_run
        self.results: list = []
        self.roots: dict = {}
        self.seconds = 0.0

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    def problems(self) -> list:
        """Files skipped or failed, and files imported with something left out (their reason)."""
        return [r for r in self.results if r.status in ("skipped", "failed") or r.reason]

    def to_json(self) -> dict:
        out = {"sources": self.sources, "roots": self.roots, "dry_run": self.dry_run,
               "files": len(self.results), "bytes": sum(r.bytes for r in self.results),
               "turns": sum(r.turns for r in self.results), "seconds": round(self.seconds, 3)}
        out.update({s: self.count(s) for s in self.STATUSES})
        out["problems"] = [r.to_json() for r in self.problems()]
        return out


# ----------------------------------------------------------------------------- where transcripts live

def default_root(harness: str) -> Path:
    """Where ``harness`` keeps its transcripts (its adapter's TRANSCRIPTS under its home)."""
    from .harness import adapter, importers

    if harness not in importers():
        raise UsageError(f"{harness} has no default location: pass --source", kind="bad_usage")
    mod = adapter(harness)
    return Path(mod.home_dir()) / mod.TRANSCRIPTS[0]


def discover(harness: str, root: Path) -> list:
    """The candidate transcript files under ``root`` (or ``root`` itself), sorted."""
    if root.is_file() or root.is_symlink() or root.exists() and not root.is_dir():
        return [root]  # (a FIFO or a link given as --source is reported, not passed over in silence)
    from .harness import adapter

    find = getattr(adapter(harness), "find", None)  # (where no glob can say: files spread over a home)
    if find is not None:
        return sorted(find(root))
    left_out = getattr(adapter(harness), "left_out", None)  # subagents live capture leaves out
    found = set()
    for pat in adapter(harness).TRANSCRIPTS[1]:
        found.update(p for p in root.glob(pat) if not (left_out and p.parent.name == "subagents"
                                                     and left_out(p.stem[len("agent-"):])))
    # In the order live capture met them: a session before its subagents, older sessions
    # first. Format 2 links a session to its parent's file and to the project's previous
    # session as they exist when it is created (docs/design.md §4), so this order is what makes an
    # import write the same bytes as live capture. A session's order is when it started (its
    # transcript's first timestamp), not the file's mtime: a session resumed after the next
    # one began, or transcripts copied from another machine, have mtimes out of that order.
    return sorted(found, key=lambda p: ("subagents" in p.parts, _started(p), p))


_FIRST_STAMP = re.compile(rb'"(?:timestamp|startTime)"\s*:\s*"([^"]{10,40})"')


def _started(p: Path) -> float:
    """When the transcript's session started: its first timestamp, else the file's mtime."""
    from .harness.common import parse_time

    try:
        with _vault.open_regular(p) as fh:  # (a FIFO named *.jsonl would block a plain open)
            m = _FIRST_STAMP.search(fh.read(65536))
        t = parse_time(m.group(1).decode("ascii", "replace")) if m else None
        if t is not None:
            return t.timestamp()
        return p.stat().st_mtime
    except (OSError, ValueError, OverflowError):
        return 0.0


# ----------------------------------------------------------------------------- the run

def run_import(source: str, root: str | os.PathLike | None = None, since: str | None = None,
               dry_run: bool = False, as_harness: str = "jsonl", progress=None) -> Summary:
    """Import ``source`` (see :func:`sources`); ``progress(done_bytes, total_bytes, path)``."""
    if source not in sources():
        raise UsageError(f"unknown source {source!r}", f"One of: {', '.join(sources())}.", kind="bad_source")
    since_ts = _since(since)
    from .harness import importers

    harnesses = list(importers()) if source == "all" else [source]
    if root is not None and source == "all":
        raise UsageError("--source needs one harness, not all", "e.g. chrollo import codex --source DIR",
                         kind="bad_usage")
    if root is None and source in ("jsonl", "chrollo-vault"):
        raise UsageError(f"import {source} needs --source PATH", kind="bad_usage")
    summary = Summary(harnesses, dry_run)
    started = time.monotonic()
    if source == "chrollo-vault":
        _adopt_vault(Path(os.path.expanduser(root)), summary, dry_run)
        summary.seconds = time.monotonic() - started
        return summary
    jobs = []
    for h in harnesses:
        base = Path(os.path.expanduser(root)) if root is not None else default_root(h)
        if root is not None and not base.exists():
            raise ChrolloError("source_not_found", f"no such file or folder: {base}",
                               "Pass the folder that holds the transcripts (or one file).")
        summary.roots[h] = str(base)
        jobs += [(h, p) for p in discover(h, base)] if base.exists() else []
    # What was imported is remembered per vault: an import into a new, empty vault reads
    # everything again instead of calling it unchanged.
    all_seen = _vault.read_json(_seen_path())
    by_vault = all_seen.get("vaults") if isinstance(all_seen.get("vaults"), dict) else {}
    here = _vault.memories_path()
    seen = by_vault.get(here) if isinstance(by_vault.get(here), dict) else {}
    indexes: dict = {}  # one listing of each vault for the whole run
    vaults: dict = {}   # cwd -> its vault, resolved once (it walks the folders up)
    sizes = {}
    for _h, p in jobs:
        try:
            sizes[p] = p.stat().st_size if p.is_file() else 0
        except OSError:
            sizes[p] = 0
    total, done = sum(sizes.values()), 0
    try:
        for h, p in jobs:
            r = _one(h, p, since_ts, dry_run, seen, as_harness, indexes, vaults)
            summary.results.append(r)
            done += sizes[p]
            if progress:
                progress(done, total, str(p))
    finally:
        if not dry_run:
            _vault.write_private(str(_seen_path()), json.dumps({"vaults": {**by_vault, here: seen}}))
            os.sync()  # import writes without an fsync per file; one sync at the end
    if not dry_run and (summary.count("imported") or summary.count("updated")):
        from .index.build import ensure

        for v in set(vaults.values()):  # (the search index: built or extended, only what changed is read)
            ensure(v, create=True)
    summary.seconds = time.monotonic() - started
    return summary


def _one(h: str, p: Path, since_ts, dry_run: bool, seen: dict, as_harness: str, indexes: dict,
         vaults: dict) -> FileResult:
    from .capture import Capture
    from .harness import adapter, plain_id

    path = str(p)
    try:
        st = os.stat(path)
    except OSError as e:
        return FileResult(path, h, "failed", f"cannot stat: {e.strerror}")
    if p.is_symlink() or not p.is_file():  # a link is not followed, as in live capture
        return FileResult(path, h, "skipped", "not a regular file")
    if st.st_size > MAX_FILE:
        return FileResult(path, h, "skipped", "larger than 2 GiB", nbytes=st.st_size)
    if since_ts is not None and st.st_mtime < since_ts:
        return FileResult(path, h, "skipped", "not modified since --since", nbytes=st.st_size)
    stamp = [st.st_size, st.st_mtime_ns] + _log_stamp(path)
    mod = adapter(h)
    stamp += getattr(mod, "stamp", lambda _path: [])(path)  # (where the file is not all that grows)
    if seen.get(path) == stamp:
        return FileResult(path, h, "unchanged", nbytes=st.st_size)
    try:
        who = mod.session_of(path)
    except (OSError, ValueError, RecursionError, UnicodeError) as e:
        return FileResult(path, h, "skipped", f"not a {h} transcript ({type(e).__name__}: {e})"[:300],
                          nbytes=st.st_size)
    sid = who.get("session_id")
    if not plain_id(sid):
        return FileResult(path, h, "skipped", "no usable session id", nbytes=st.st_size)
    name = as_harness if h == "jsonl" else h
    from .privacy import capture_off

    passes = [(sid, who.get("parent"), who.get("agent_id"))]
    notes = []
    cwds = who.get("cwds") if isinstance(who.get("cwds"), dict) else {}
    # one pass per session the file holds (the adapter reads one at a time); a session forgotten
    # or excluded is passed over, not the file's others with it
    if who.get("sessions"):
        passes = [(s, None, s) for s in who["sessions"]
                  if plain_id(s) and not capture_off(s, cwds.get(s) or who.get("cwd") or None)]
        if who.get("more"):
            notes.append(f"{who['more']} more sessions in the file not read (at most {mod.MAX_SESSIONS} per file)")
    off = capture_off(sid, cwds.get(sid) or who.get("cwd") or None)
    if not passes or off and not who.get("sessions"):
        return FileResult(path, h, "skipped", off or "every session in it forgotten or excluded", nbytes=st.st_size,
                          session_id=sid)
    turns, created, skipped_lines, recognised, known = 0, False, 0, 0, False
    try:
        while passes:
            session, parent, agent = passes.pop(0)
            cwd = cwds.get(session) or who.get("cwd") or ""
            vault = vaults.get(cwd) or vaults.setdefault(cwd, _vault.memories_path(cwd or None))
            with Capture(session, name, cwd, parent, vault=vault, fsync=False, dry_run=dry_run,
                         indexes=indexes) as cap:
                fresh = not cap.state
                known = known or not fresh
                units = cap.read_transcript(mod, path, agent)
                if units is None:
                    return FileResult(path, h, "failed", "could not read the file", nbytes=st.st_size)
                tr = cap.last_transcript
                skipped_lines = max(skipped_lines, tr.skipped)  # (each pass reads the same lines)
                recognised += len(units)
                if fresh and not units:
                    continue  # nothing of it here: no state, no file, nothing marked done
                written = cap.run(units)
                turns += len(written)
                created = created or (fresh and bool(written))
                if tr.sidechains and agent is None:
                    # inline subagents of old Claude Code versions (records without agentId)
                    passes.append((f"{sid}:sidechain", sid, "*"))
    except Exception as e:  # noqa: BLE001 — one bad file never stops the run
        return FileResult(path, h, "failed", f"{type(e).__name__}: {e}"[:300], nbytes=st.st_size)
    if not recognised and not known:
        # A wrong source (a Claude Code transcript read as jsonl) is not "unchanged", and is
        # not remembered as done: the right source must still find it new.
        return FileResult(path, h, "skipped", _unrecognised(h, path), nbytes=st.st_size, session_id=sid)
    if not dry_run:
        seen[path] = stamp
    status = "imported" if created else "updated" if turns else "unchanged"
    if skipped_lines:
        notes.insert(0, f"{skipped_lines} unreadable {'line' if skipped_lines == 1 else 'lines'} skipped")
    return FileResult(path, h, status, "; ".join(notes), turns, st.st_size, sid)


def _log_stamp(path: str) -> list:
    """A database's write-ahead log (``<file>-wal``: SQLite keeps new rows there until a
    checkpoint): its size and mtime, so a database whose own file did not change is read again."""
    try:
        st = os.stat(path + "-wal")
    except OSError:
        return []
    return [st.st_size, st.st_mtime_ns]


def _unrecognised(h: str, path: str) -> str:
    """Why a file gave no turns, naming the source that does read it if one does."""
    from .harness import adapter, importers

    why = f"no {h} turns recognised in it"
    try:
        if os.path.getsize(path) > GUESS_MAX:
            return why
    except OSError:
        return why
    for other in importers() + ("jsonl",):
        if other == h:
            continue
        try:
            if adapter(other).read_transcript(path, 0, None).units:
                return f"{why}: it looks like a {other} transcript (chrollo import {other} --source {path})"
        except Exception:  # noqa: BLE001 — a guess only: any adapter may choke on another's file
            continue
    return why


def _adopt_vault(src: Path, summary: Summary, dry_run: bool) -> None:
    """Copy session files written by the original TypeScript Chrollo into the vault, as they are
    (but for what the user forgot or excluded)."""
    if not src.is_dir():
        raise ChrolloError("source_not_found", f"no such folder: {src}", "Pass the old vault's folder.")
    summary.roots["chrollo-vault"] = str(src)
    dest = Path(_vault.memories_path())
    from .fileformat import parse_frontmatter
    from .forget import keep_forgotten, kept_name
    from .privacy import forgotten_file, rules

    tombstones = rules(reload=True)
    for p in sorted(src.iterdir()):
        if not p.name.endswith(".md"):
            continue
        size = p.stat().st_size if p.is_file() else 0
        r = FileResult(str(p), "chrollo-vault", "imported", nbytes=size)
        if not p.is_file() or p.is_symlink() or not _vault.SESSION_NAME_RE.fullmatch(p.name):
            r.status, r.reason = "skipped", "not a session file (YYYY-MM-DD_HHMMSS_id.md)"
            summary.results.append(r)
            continue
        # the tombstones outrank an import of any source: a forgotten session stays forgotten,
        # a forgotten line stays the marker, an excluded project's session is not taken
        data = p.read_bytes()
        head = parse_frontmatter(data[:16384].decode("utf-8", "replace").split("\n"))[0]
        cwd, repository = head.get("cwd"), head.get("repository")
        if forgotten_file(p.name, data):
            r.status, r.reason = "skipped", "forgotten (chrollo forget)"
        elif tombstones.excluded(cwd if isinstance(cwd, str) else None,
                                 repository if isinstance(repository, str) else ""):
            r.status, r.reason = "skipped", "excluded project"
        elif (dest / kept_name(p.name)).exists():  # (a slug holding a forgotten line is not brought back)
            same = (dest / kept_name(p.name)).read_bytes() == keep_forgotten(data)
            r.status, r.reason = ("unchanged", "") if same else ("skipped", "a different file of that name is in the vault")
        if r.status == "imported":
            from .fileformat import header_dates

            r.turns = len(header_dates(data))  # (the summary's turns: it said 0 for every session)
        if r.status == "imported" and not dry_run:
            _vault.ensure_dir(dest)
            tmp = dest / f".{p.name}.{os.getpid()}.tmp"
            with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _vault.FILE_MODE), "wb") as fh:
                fh.write(keep_forgotten(data))
            os.replace(tmp, dest / kept_name(p.name))
        summary.results.append(r)


def _since(since) -> float | None:
    if since is None:
        return None
    from .dates import parse

    when = parse(since, option="--since")  # (the one date grammar: 2026-06-01, 7d, …)
    if when is None:
        raise UsageError("--since needs a date, got an empty value", "e.g. 2026-06-01, yesterday, 7d",
                         kind="bad_date")
    return when.timestamp()


def _seen_path() -> Path:
    from .layout import import_record

    return Path(import_record())
