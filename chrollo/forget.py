"""``chrollo forget``: remove sessions, or scrub lines, for good (see :mod:`chrollo.privacy`).

Whole sessions are deleted with their subagents' files and chrollo's state about them, after
a tombstone is written, so no later capture, import or mesh sync brings them back. Matched
lines are replaced by :data:`chrollo.privacy.MARKER` in place: each file is rewritten
atomically (temp file + rename) under the same per-session lock the writer appends under,
so a live session loses no turn; every other byte stays as it was.
"""
from __future__ import annotations

import fcntl
import os
import re
from pathlib import Path

from . import clock as _clock
from . import privacy
from . import vault as _vault
from .errors import ChrolloError, UsageError
from .fileformat import parse_frontmatter, read_frontmatter


class Report:
    """What a forget did (or, with ``dry_run``, would do)."""

    def __init__(self, vault: Path, dry_run: bool):
        self.vault, self.dry_run = vault, dry_run
        self.sessions: list = []   # {"path", "session_id", "status"}
        self.lines: list = []      # {"path", "lines": [numbers]}
        self.pattern: str | None = None
        self.already: list = []    # targets forgotten by an earlier run
        self.receipts = 0          # recall receipts removed with them (chrollo.receipts)
        self.renamed: dict = {}    # {old path: new path}: a scrubbed title's words left the name
        self.relinked: list = []   # other files whose link to a removed or renamed one changed
        # ``--project FOLDER``: the repository the folder claims, and its sessions elsewhere (kept)
        self.repository: dict | None = None

    def to_json(self) -> dict:
        return {"vault": str(self.vault), "dry_run": self.dry_run, "sessions": self.sessions,
                "already_forgotten": self.already, "receipts_removed": self.receipts,
                **({"same_repository_kept": self.repository} if self.repository else {}),
                "lines": {"pattern_added": self.pattern, "files": self.lines,
                          "count": sum(len(f["lines"]) for f in self.lines),
                          "renamed": [{"from": a, "to": b} for a, b in self.renamed.items()]},
                "relinked": self.relinked}


def forget(targets=(), since: str | None = None, until: str | None = None, project: str | None = None,
           lines: str | None = None, regex: bool = False, dir: str | None = None,
           dry_run: bool = False, secrets: bool = False) -> Report:
    """Forget the sessions selected by ``targets`` (paths or ids), a date range or a project —
    or, with ``lines``, only the lines matching it, or with ``secrets`` only the secrets the
    detector of :mod:`chrollo.redact` finds (in the selected sessions, else everywhere)."""
    vault = Path(os.path.realpath(os.path.expanduser(dir)) if dir else _vault.memories_path())
    selecting = bool(targets or since or until or project)
    if selecting or dir or vault.exists():
        _vault.require_dir(vault)  # (a pattern is remembered even before there is a vault)
    if lines is not None and secrets:
        raise UsageError("--lines and --secrets cannot be used together", kind="bad_usage")
    if not selecting and lines is None and not secrets:
        raise UsageError("nothing to forget: name sessions (path or id), a range (--since/--until), "
                         "a project (--project), --lines PATTERN or --secrets",
                         "See `chrollo forget --help`.", kind="bad_usage")
    lo, hi = _date(since, "--since"), _date(until, "--until")
    pattern = privacy.compile_pattern(lines, regex) if lines is not None else None
    report = Report(vault, dry_run)
    files = _select(vault, targets, lo, hi, project, report) if selecting else None
    transform = None  # (what a forget of text does to any stored text)
    if secrets:
        transform = _forget_secrets(vault, files, report)
    elif pattern is not None:
        transform = _forget_lines(vault, files, pattern, lines, regex, report)
    else:
        _forget_sessions(vault, files, report)
    if not dry_run:
        from . import traces

        _relink(vault, [Path(x["path"]) for x in report.sessions], report)
        _rename(report)
        from .changes import drop as drop_changes
        from .listing import drop

        drop()  # (cached listings hold file names; a format-2 name holds the title)
        drop_changes()  # (so do the mesh's journals of changed files)
        report.receipts = traces.follow(  # receipts, records, torn remnants, the mesh's records
            removed=[s["path"] for s in report.sessions], renamed=report.renamed,
            sessions=[s["session_id"] for s in report.sessions], transform=transform)
    return report


# ----------------------------------------------------------------------------- selection

def _date(value, option: str):
    """The day (YYYY-MM-DD) a --since/--until value names, in the one date grammar
    (:mod:`chrollo.dates`: 2026-06-01, yesterday, 7d, …); sessions are selected by day."""
    if value is None:
        return None
    from .dates import parse

    when = parse(value, end=option == "--until", option=option)
    if when is None:  # (an empty value: never "no bound" for a command that deletes)
        raise UsageError(f"{option} needs a date, got an empty value", "e.g. 2026-06-01, yesterday, 7d",
                         kind="bad_date")
    return when.date().isoformat()


def _sessions(vault: Path, peers: bool) -> list:
    return [p for p in _vault.iter_session_files(vault, peers=peers) if p.is_file()]


def _select(vault: Path, targets, lo, hi, project, report: Report) -> list:
    files = _sessions(vault, peers=True)
    metas = {p: read_frontmatter(p) for p in files}
    chosen: list = []
    known = privacy.rules(reload=True)
    for t in targets:
        found = _resolve(vault, t, files, metas)
        if found:
            chosen += [p for p in found if p not in chosen]
        elif known.forgotten(t) or known.forgotten_name(os.path.basename(t)) or any(
                len(t) >= 8 and sid.startswith(t) for sid in known.sessions):
            report.already.append(t)
        elif os.sep not in t and not t.endswith(".md") and len(t) < 8:
            raise UsageError(f"{t!r} is too short to name a session: an id needs 8 or more characters",
                             "Give 8+ characters of the session id, or its file as `chrollo search` prints it.",
                             kind="bad_usage")
        else:
            raise ChrolloError("file_not_found", f"no session {t!r} in {vault}",
                               "Pass a session file (as `chrollo search` prints it) or a session id.")
    if lo or hi or project:
        from .catalog import in_project

        root, repo, claimed = _project_target(project) if project else (None, None, None)
        elsewhere = []
        for p in files:  # (peers' copies too: they are sessions in your vault, docs/privacy.md "Forget")
            if p in chosen:
                continue
            meta = metas[p]
            day = str(meta.get("date") or "")[:10] or None
            if day is None:
                from .fileformat import file_date

                day = file_date(p.name)
            if lo and (day is None or day < lo):
                continue
            if hi and (day is None or day > hi):
                continue
            if project and not in_project(meta, root, repo):
                if claimed and meta.get("repository") == claimed:
                    elsewhere.append(str(p))
                continue
            chosen.append(p)
        if claimed:
            report.repository = {"repository": claimed, "files": elsewhere}
    # a session goes with its subagents (their files name it as parent)
    ids = {metas[p].get("session_id") for p in chosen} - {None}
    chosen += [p for p in files if p not in chosen and metas[p].get("parent_session") in ids]
    return chosen


def _project_target(project: str):
    """(folder, repository key, claimed key) ``--project`` selects by. A repository named by
    the user (its URL, or ``root:<sha>``) is matched on every machine. A folder is matched by
    the working directory sessions recorded — what the user can verify — and never by the
    identity its ``.git`` claims: a downloaded archive's config can name any origin, and
    deleting every session of the user's real repository on that word would be a silent loss.
    The claimed key is returned so the report can say what else records it (kept)."""
    from .repository import key_for

    path = os.path.realpath(os.path.expanduser(project))
    key = key_for(project)
    if os.path.isdir(path):
        return path, None, key
    return (None if key else path), key, None


def _resolve(vault: Path, target: str, files: list, metas: dict) -> list:
    """The files a target names: a path inside the vault, a session id, or an id prefix (≥ 8)."""
    if os.sep in target or target.endswith(".md"):
        try:
            real = _vault.confine(target, [vault])
        except ChrolloError as e:
            if e.kind == "outside_vault":
                raise ChrolloError("outside_vault", f"refusing to forget a file outside the vault: {target}",
                                   f"chrollo forget deletes only session files inside {vault} (symlinks are "
                                   "resolved first); name one as `chrollo search` prints it, or a session id.") from None
            return []
        return [p for p in files if p.resolve() == real]
    exact = [p for p in files if metas[p].get("session_id") == target]
    if exact or len(target) < 8:
        return exact
    found = [p for p in files if str(metas[p].get("session_id") or "").startswith(target)]
    if len({metas[p].get("session_id") for p in found}) > 1:
        raise UsageError(f"{target!r} names more than one session", "Give more of the id, or the file.",
                         kind="ambiguous")
    return found


# ----------------------------------------------------------------------------- sessions

def _locks(session_id: str):
    """The capture lock, then the writer's: the order capture takes them in (chrollo.layout)."""
    from .layout import session_locks

    return session_locks(session_id)


class _Held:
    def __init__(self, paths: list):
        self.paths, self.fds = paths, []

    def __enter__(self):
        for p in self.paths:
            fd = _vault.open_lock(p)
            fcntl.flock(fd, fcntl.LOCK_EX)
            self.fds.append(fd)
        return self

    def __exit__(self, *exc):
        for fd in reversed(self.fds):
            os.close(fd)


def _forget_sessions(vault: Path, files: list, report: Report) -> None:
    when = _clock.now().isoformat(timespec="seconds")
    entries = {}
    for p in files:
        sid = read_frontmatter(p).get("session_id")
        sid = sid if isinstance(sid, str) and sid else privacy.file_session_id(p.name)
        entries[sid] = privacy.tombstone(p.name, when)
        report.sessions.append({"path": str(p), "session_id": sid,
                                "status": "would remove" if report.dry_run else "removed"})
    if report.dry_run or not entries:
        return
    # The tombstones first: from here on no capture writes these sessions again, so the
    # files removed below cannot come back, whatever a running session does meanwhile.
    privacy.add_session_tombstones(entries)
    by_id: dict = {}
    for p, item in zip(files, report.sessions):
        by_id.setdefault(item["session_id"], []).append(p)
    for sid, paths in by_id.items():
        with _Held(_locks(sid)):
            _unindex(vault, paths)
            for p in paths:
                try:
                    os.unlink(p)
                except FileNotFoundError:
                    pass
            _drop_state(sid)


def _unindex(vault, paths: list) -> None:
    """Take ``paths``' words out of the search index, and their redacted copies out of the
    redaction cache, before they are removed or scrubbed (neither may keep anything forgotten:
    docs/index.md)."""
    from .index.update import forget as forget_in_index

    contents = {}
    for p in paths:
        try:
            with _vault.open_regular(p) as fh:
                contents[str(p)] = fh.read()
        except OSError:
            contents[str(p)] = b""
    forget_in_index(str(vault), contents)
    _uncache(contents.values())


def _uncache(contents) -> None:
    """Drop what publishing's redaction cache holds of these file contents (never fatal)."""
    from .redact import forget_cached

    forget_cached(_vault.home_path(), contents)


def forget_ids(ids: list, vault: str | None = None, capture_locked: bool = False) -> list:
    """Forget whole sessions by id (a prompt marked its session private): tombstones first,
    then their files in ``vault`` (and their subagents'); returns the files removed.
    ``capture_locked``: the caller is a capture pass already holding the capture lock."""
    from .fileformat import safe_id_prefix

    folder = vault or _vault.memories_path()
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    when = _clock.now(strict=False).isoformat(timespec="seconds")
    found: dict = {}
    for sid in ids:
        prefix = safe_id_prefix(sid)  # a session's and its subagents' files carry it
        found[sid] = [p for p in (Path(folder) / n for n in names if prefix in n and n.endswith(".md"))
                      if sid in _ids(read_frontmatter(p))]
    privacy.add_session_tombstones({sid: privacy.tombstone(found[sid][0].name if found[sid] else None, when)
                                    for sid in ids})
    removed = []
    for sid, paths in found.items():
        locks = _locks(sid)
        with _Held(locks[1:] if capture_locked else locks):
            _unindex(folder, paths)
            for p in paths:
                try:
                    os.unlink(p)
                    removed.append(p)
                except FileNotFoundError:
                    pass
            _drop_state(sid)
    if removed:
        from .changes import drop as drop_changes
        from .listing import drop

        drop()
        drop_changes()
    from . import traces

    traces.follow(removed=removed, sessions=ids)
    return removed


def _drop_state(session_id: str) -> None:
    """chrollo's own records of a session (watermarks, the pending prompt, recall dedup)."""
    from .layout import session_records

    for path in session_records(session_id):
        try:
            os.unlink(path)
        except OSError:
            pass


# ----------------------------------------------------------------------------- links

LINK_KEYS = ("previous", "parent")  # the frontmatter links (format 2) that name another session's file


def _relink(vault: Path, removed: list, report: Report) -> None:
    """Other session files whose ``previous``/``parent`` link names a removed or renamed file
    (a format-2 name holds a title's words): the link goes, or follows the new name. Each such
    file is rewritten as a scrub is (locked, atomic) and counted in ``report.relinked``."""
    stems = {p.stem: None for p in removed}
    stems.update({Path(a).stem: Path(b).stem for a, b in report.renamed.items()})
    if not stems:
        return
    folders = sorted({p.parent for p in removed} | {Path(a).parent for a in report.renamed})
    gone = set(map(str, removed))
    # a link names an earlier session (previous) or the parent of a subagent started later:
    # only files named (by their start) no earlier than the first of these are read
    earliest = min(s[:17] for s in stems)
    for folder in folders:
        for p in _sessions(folder, peers=False) if folder.is_dir() else []:
            if p.name[:17] < earliest or str(p) in gone or not _links_any(p, stems):
                continue
            sid = read_frontmatter(p).get("session_id")
            with _Held(_locks(sid) if isinstance(sid, str) and sid else []):
                try:
                    with _vault.open_regular(p) as fh:
                        data = fh.read()
                except OSError:
                    continue
                out = _relinked(data, stems)
                if out == data:
                    continue
                _uncache([data])
                _write(p, out)
                from .index.update import update

                update(str(vault), [p])
            report.relinked.append(str(p))


def _links_any(path: Path, stems: dict) -> bool:
    from .fileformat import FRONTMATTER_HEAD

    try:
        with _vault.open_regular(path) as fh:
            head = fh.read(FRONTMATTER_HEAD)  # (the links come before the frontmatter's id fields)
    except OSError:
        return False
    return any(f"[[{s}]]".encode("utf-8", "surrogateescape") in head for s in stems)


def _relinked(data: bytes, stems: dict) -> bytes:
    """``data`` with each frontmatter link to one of ``stems`` dropped (None) or renamed."""
    from .fileformat import frontmatter_end_of, yaml_quote

    end = frontmatter_end_of(data)  # (the closing line, 1-based; 0: none)
    if end <= 1:
        return data
    lines = data.split(b"\n")
    out = lines[:1]
    for raw in lines[1:end - 1]:
        ln = raw.decode("utf-8", "surrogateescape")
        key = ln.partition(": ")[0]
        hit = next((s for s in stems if f"[[{s}]]" in ln), None) if key in LINK_KEYS else None
        if hit is None:
            out.append(raw)
        elif stems[hit] is not None:
            out.append(f"{key}: {yaml_quote('[[' + stems[hit] + ']]')}".encode("utf-8", "surrogateescape"))
    return b"\n".join(out + lines[end - 1:])


# ----------------------------------------------------------------------------- lines

def _forget_lines(vault: Path, files, pattern, text: str, regex: bool, report: Report) -> None:

    if files is None:
        files = _sessions(vault, peers=True) if vault.is_dir() else []
    if not report.dry_run:
        # remembered first, so a turn captured while the files are scrubbed is scrubbed too
        when = _clock.now().isoformat(timespec="seconds")
        if privacy.add_line_tombstone(text, regex, when):
            report.pattern = text
    def line_out(line: str) -> str:
        return privacy.forget_line(line) if pattern.search(line) else line

    def transform(body: str) -> str:
        return "\n".join(line_out(ln) for ln in body.split("\n"))
    _scrub_all(files, transform, report)
    return transform


def _forget_secrets(vault: Path, files, report: Report) -> None:
    """Redact, in place, what the secret detector finds in what was captured (for instance
    before capture-time redaction was turned on)."""
    from .redact import Redactor

    if files is None:
        files = _sessions(vault, peers=True) if vault.is_dir() else []
    redactor = Redactor.from_config(_vault.home_path())

    def transform(body: str) -> str:
        return redactor.redact(body)[0]
    _scrub_all(files, transform, report)
    return transform


def _scrub_all(files: list, transform, report: Report) -> None:
    """Each file scrubbed (locked, atomic); the renames its title asks for planned in
    ``report.renamed`` — made by :func:`_rename` once the links to them follow (a forget
    killed midway leaves links and names the next forget completes)."""
    from .obsidian import forget_slug

    _sweep({p.parent for p in files})
    for p in files:
        sid = read_frontmatter(p).get("session_id")
        locks = _locks(sid) if isinstance(sid, str) and sid else []
        with _Held(locks):
            hit, title = _scrub_file(p, transform, report.dry_run, report.vault)
            new = None
            if not report.dry_run:
                # a changed title's words leave the file name too (format 2) — only a file this
                # forget changed, and only if its title changed or its name holds what was forgotten:
                # a title edited by hand is no reason to rename a file (#44); or a file whose title
                # holds a forget's marker but not its name yet (a forget killed before renaming it)
                taken = set(report.renamed.values())
                new = forget_slug(p, taken) if hit and (title or _name_holds(p.name, transform)) else \
                    forget_slug(p, taken, marks=_MARKS) if not hit else None
            if new is not None:
                report.renamed[str(p)] = str(new)
                if os.path.lexists(new):  # (a rename cut after its link: the old name goes now,
                    os.unlink(p)          # before a rewrite of either name parts them)
            elif hit and not report.dry_run:
                from .index.update import update

                update(str(report.vault), [p])
        if hit:
            report.lines.append({"path": str(new or p), "lines": hit})


_MARKS = (privacy.MARKER, "[REDACTED:")  # what --lines and --secrets (redact.Redactor) write in a title


def _rename(report: Report) -> None:
    """The planned renames made (after :func:`_relink`), each indexed under its new name."""
    from .index.update import update
    from .obsidian import rename_forgotten

    for old, new in list(report.renamed.items()):
        sid = read_frontmatter(Path(old if os.path.lexists(old) else new)).get("session_id")
        with _Held(_locks(sid) if isinstance(sid, str) and sid else []):  # (as a writer appends)
            try:
                done = rename_forgotten(old, new) if os.path.lexists(old) else os.path.lexists(new)
            except OSError:
                done = False
        if done:
            update(str(report.vault), [old, new])
        else:
            del report.renamed[old]


def _sweep(folders) -> None:
    """Temporary files a forget killed while writing left (a dead process's): removed."""
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            m = _TMP_RE.match(name)
            if m and not _vault.pid_alive(int(m.group(1))):
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    pass


def _name_holds(name: str, transform) -> bool:
    """Does the title slug in a format-2 file ``name`` hold what ``transform`` takes out?"""
    m = _vault.SESSION_NAME_RE.match(name)
    if not m or "_" not in m.group(3):
        return False
    words = m.group(3).rpartition("_")[0].replace("_", " ")
    return transform(words) != words


def _scrub_file(path: Path, transform, dry_run: bool, vault=None) -> tuple[list, bool]:
    """Rewrite one file's body through ``transform`` (atomically; turn headers and the
    frontmatter are kept as they are); the 1-based numbers of the lines that changed, and
    whether its title (format 2) was one of them."""
    try:
        with _vault.open_regular(path) as fh:   # (a link, a FIFO: not scrubbed, never waited on)
            data = fh.read()
    except OSError:
        return [], False
    out, hit, title = _scrub(data, transform)
    if hit and not dry_run:
        if vault is not None:
            from .index.update import forget as forget_in_index

            forget_in_index(str(vault), {str(path): data})
        _uncache([data])
        _write(path, out)
    return hit, title


def _write(path: Path, out: bytes) -> None:
    """``path``'s content replaced by ``out``, atomically (a temp file beside it, renamed)."""
    tmp = path.with_name(f".{path.name}.forget.{os.getpid()}.tmp")  # (its form: _TMP_RE)
    wfd = -1
    try:
        wfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _vault.FILE_MODE)
        view = memoryview(out)
        while view:
            view = view[os.write(wfd, view):]
        os.fsync(wfd)
        os.close(wfd)
        wfd = -1
        os.replace(tmp, path)
    finally:
        if wfd >= 0:
            os.close(wfd)
        if tmp.exists():
            os.unlink(tmp)


_TMP_RE = re.compile(r"^\..+\.forget\.(\d+)\.tmp$")


def scrub_bytes(data: bytes, transform) -> tuple[bytes, list]:
    """A session file's bytes with each turn's body (and format 2's title) put through
    ``transform``, headers and the rest of the frontmatter kept; and the 1-based numbers of the
    lines that changed. What ``forget --lines`` does to a file, and what a file taken later
    (import, a peer's copy) goes through so that it stays forgotten."""
    return _scrub(data, transform)[:2]


def _scrub(data: bytes, transform) -> tuple[bytes, list, bool]:
    """:func:`scrub_bytes`, and whether the title (or its aliases) changed."""
    from .fileformat import HEADER_RE
    from .obsidian import forget_title

    text = data.decode("utf-8", "surrogateescape")
    lines = text.split("\n")
    hit = []
    # each turn's body on its own, so that nothing a transform does can touch a header
    start = parse_frontmatter(lines)[1]  # (where the frontmatter ends, as every reader finds it)
    heads = [i for i in range(start, len(lines)) if HEADER_RE.match(lines[i])] + [len(lines)]
    chunks = [(start, heads[0])] + [(a + 1, b) for a, b in zip(heads, heads[1:])]
    for a, b in reversed(chunks):
        old = lines[a:b]
        new = transform("\n".join(old)).split("\n")
        if new != old:
            hit += [a + 1 + k for k, ln in enumerate(old) if k >= len(new) or new[k] != ln]
            lines[a:b] = new
    title = forget_title(lines, start, transform)  # format 2's title and aliases
    hit = sorted(hit + title)
    return ("\n".join(lines).encode("utf-8", "surrogateescape") if hit else data), hit, bool(title)


def keep_forgotten(data: bytes) -> bytes:
    """``data`` (a session file's bytes) with every line a ``forget --lines`` pattern matches
    replaced as that forget would have (unchanged when no pattern is kept)."""
    transform = _kept_lines()
    return scrub_bytes(data, transform)[0] if transform else data


def kept_name(name: str) -> str:
    """The name a session file taken later (import) is kept under: without its title slug
    (``DATE_TIME_id.md``) when the slug holds a line ``forget --lines`` removed — as that forget
    renamed the file it scrubbed — else ``name``."""
    transform = _kept_lines()
    if not transform:
        return name
    from .fileformat import name_key

    return (name_key(name) or name) if _name_holds(name, transform) else name


def _kept_lines():
    """The transform the kept ``forget --lines`` patterns make of a body (each matching line
    replaced as that forget did), or None when none is kept."""
    pats = privacy.rules().patterns()
    if not pats:
        return None

    def transform(body: str) -> str:
        return "\n".join(privacy.forget_line(ln) if any(p.search(ln) for p in pats) else ln
                         for ln in body.split("\n"))
    return transform


def _ids(meta: dict) -> tuple:
    """A session file's own id and its parent's (one frontmatter read answers both)."""
    return meta.get("session_id"), meta.get("parent_session")


# ----------------------------------------------------------------------------- excluded projects

def exclude(paths: list, remove: bool = False) -> list:
    """Add (or remove) excluded projects; returns the list in force. Paths are stored
    absolute and resolved; a glob (``*``, ``?``, ``[``) is stored as given, made absolute. A
    repository's root folder brings its repository's key along (its sessions on every machine
    are excluded too, and removing the folder removes the key); a remote URL that is no
    folder here is stored as the key alone (chrollo.repository)."""
    from .repository import key_for

    current = list(privacy.rules(reload=True).exclude)
    for raw in paths:
        if not raw.strip():
            raise UsageError("an empty path cannot be excluded", kind="bad_usage")
        path = os.path.expanduser(raw)
        glob = any(ch in path for ch in "*?[")
        key = None if glob else key_for(raw)
        if key and not os.path.isdir(path):
            rules = [key]  # a repository named by its URL
        else:
            path = os.path.abspath(path) if glob else os.path.realpath(path)
            rules = [path] + ([key] if key else [])
        if remove:
            if rules[0] not in current:
                raise ChrolloError("not_excluded", f"{rules[0]} is not an excluded project",
                                   "`chrollo exclude list` shows them.")
            current = [r for r in current if r not in rules]
        else:
            current += [r for r in rules if r not in current]
    privacy.set_excludes(current)
    return current
