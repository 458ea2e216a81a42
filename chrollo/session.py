"""One session file (docs/design.md §4): naming, frontmatter, the locked atomic writer, the reader.

File layout (format 2; format 1 is the same without the first block of properties and
with plain ``[...] [User]`` paragraphs instead of headings)::

    ---
    title: "fix the login bug"               # from the first prompt, see chrollo.obsidian
    aliases:
      - "fix the login bug"
    tags:
      - chrollo
      - claude-code
      - project
    started: YYYY-MM-DDTHH:MM:SS
    project: "[[project]]"
    previous: "[[YYYY-MM-DD_HHMMSS_slug_id]]"  # when there is one
    parent: "[[…]]"                           # subagents and forks, when in the vault
    day: "[[YYYY-MM-DD]]"
    session_id: "…"
    date: YYYY-MM-DD
    harness: "claude-code"
    cwd: "/home/user/project"
    repository: "github.com/org/project"      # when the cwd is in a repository (chrollo.repository)
    machine: "laptop"
    chrollo_format: 2
    ---

    ## [YYYY-MM-DD HH:MM:SS] [User]
    user text, verbatim


    ## [YYYY-MM-DD HH:MM:SS] [Agent]
    > agent text, every line quoted
    > <tool>$ ls -la</tool>


Writer contract: the file appears on the first turn with content (never empty), is only
ever appended to, every append is one ``write(2)`` under an exclusive ``flock`` keyed by the
session id, and a deleted file is recreated from the metadata saved in ``state/``.
"""
from __future__ import annotations

import bisect
import datetime as dt
import fcntl
import itertools
import json
import os
from contextlib import nullcontext
from pathlib import Path

from . import vault as _vault
from . import clock as _clock
from . import layout as _layout
from .fileformat import (FORMAT_VERSION, HEADER_RE, HEADING, TOOL_LINE_RE, TS_FMT, ToolCall,
                         file_date, name_id, parse_frontmatter, read_frontmatter, safe_id_prefix,
                         yaml_quote)
from .fileformat import clean_text as _clean

# ----------------------------------------------------------------------------- records

class Turn:
    """A finished turn: role ``user`` or ``agent``; agent parts are text and tool calls in order.

    (Plain classes in this module: capture runs on every turn, and dataclasses costs ~12 ms
    of imports there.)
    """

    __slots__ = ("role", "when", "parts", "message_id")

    def __init__(self, role: str, when: dt.datetime, parts: list | None = None,
                 message_id: str | None = None):
        self.role, self.when = role, when
        self.parts = parts if parts is not None else []  # str | ToolCall
        self.message_id = message_id

    @classmethod
    def user(cls, text: str, when: dt.datetime, message_id: str | None = None) -> "Turn":
        return cls("user", when, [text], message_id)

    @classmethod
    def agent(cls, parts: list, when: dt.datetime, message_id: str | None = None) -> "Turn":
        return cls("agent", when, list(parts), message_id)

    def has_content(self) -> bool:
        return any(isinstance(p, ToolCall) or (isinstance(p, str) and p.strip()) for p in self.parts)

    def __repr__(self) -> str:
        return f"Turn({self.role!r}, {self.when!r}, {self.parts!r})"


class SessionMeta:
    """What the frontmatter says; also saved in ``state/`` to recreate a deleted file."""

    __slots__ = ("session_id", "started", "harness", "cwd", "parent_session", "machine", "repository")

    def __init__(self, session_id: str, started: dt.datetime, harness: str, cwd: str = "",
                 parent_session: str | None = None, machine: str | None = None,
                 repository: str | None = None):
        self.session_id, self.started, self.harness, self.cwd = session_id, started, harness, cwd
        self.parent_session, self.machine = parent_session, machine
        # the project's identity across machines (chrollo.repository); None: found from cwd
        # when the file is created, "" none
        self.repository = repository

    def to_json(self) -> dict:
        return {"session_id": self.session_id, "started": self.started.strftime(TS_FMT),
                "harness": self.harness, "cwd": self.cwd,
                "parent_session": self.parent_session, "machine": self.machine,
                "repository": self.repository}

    @classmethod
    def from_json(cls, d: dict) -> "SessionMeta":
        return cls(d["session_id"], dt.datetime.strptime(d["started"], TS_FMT), d["harness"],
                   d.get("cwd", ""), d.get("parent_session"), d.get("machine"), d.get("repository"))


# ----------------------------------------------------------------------------- rendering

local_time = _clock.local  # (aware datetimes are converted to local time; naive ones taken as local)


class Links:
    """Format 2's Obsidian properties, computed once when the file is created."""

    __slots__ = ("title", "project", "previous", "parent")

    def __init__(self, title: str = "", project: str = "", previous: str | None = None,
                 parent: str | None = None):
        self.title, self.project, self.previous, self.parent = title, project, previous, parent


def render_frontmatter(meta: SessionMeta, links: Links | None = None) -> str:
    """The frontmatter: format 2 with ``links``, format 1 without.

    Format 2 puts what Obsidian browses by (title, tags, links) first and ends with format
    1's fields in format 1's order, so the lines nearest the first turn hold the same words
    in both formats and the title sits farther than retrieval.tuning.NEIGHBOR_LINES from the body:
    a title never counts as a match next to a line of the first turn.
    """
    started = local_time(meta.started)
    day = started.strftime("%Y-%m-%d")
    lines = ["---"]
    if links is not None:
        from .obsidian import tag, wikilink

        if links.title:
            lines += [f"title: {yaml_quote(links.title)}", "aliases:", f"  - {yaml_quote(links.title)}"]
        tags = dict.fromkeys(t for t in ("chrollo", tag(meta.harness), tag(links.project)) if t)
        lines += ["tags:"] + [f"  - {yaml_quote(t)}" for t in tags]
        lines.append(f"started: {started.strftime('%Y-%m-%dT%H:%M:%S')}")
        for key, target in (("project", links.project), ("previous", links.previous),
                            ("parent", links.parent), ("day", day)):
            if target:
                lines.append(f"{key}: {yaml_quote(wikilink(target))}")
    fields = [("session_id", meta.session_id), ("date", day), ("harness", meta.harness), ("cwd", meta.cwd)]
    if meta.repository:
        fields.append(("repository", meta.repository))
    if meta.parent_session:
        fields.append(("parent_session", meta.parent_session))
    fields.append(("machine", meta.machine or os.uname().nodename))
    for k, v in fields:  # (format 2's date is a YAML date, format 1's a string)
        lines.append(f"{k}: {v}" if k == "date" and links is not None else f"{k}: {yaml_quote(str(v))}")
    lines += [f"chrollo_format: {FORMAT_VERSION if links is not None else 1}", "---", "", ""]
    return "\n".join(lines)


def render_turn(turn: Turn, heading: bool = True) -> str:
    """One turn as stored: header, body, then two blank lines. Empty string if no content.

    ``heading``: the header as a markdown heading (format 2); False for a format-1 file.
    """
    if not turn.has_content():
        return ""
    stamp = local_time(turn.when).strftime(TS_FMT)
    if turn.role == "user":
        text = _clean("".join(p for p in turn.parts if isinstance(p, str))).strip("\n")
        # A user line that looks like a turn header would split the turn when read back;
        # a markdown escape keeps it rendering the same in Obsidian.
        body = ["\\" + ln if HEADER_RE.match(ln) else ln for ln in text.split("\n")]
        head = "User"
    elif turn.role == "agent":
        body = []
        for p in turn.parts:
            if isinstance(p, ToolCall):
                body.append(p.render())
            elif p.strip():
                body.extend(_clean(p).strip("\n").split("\n"))
        body = [f"> {ln}" if ln.strip() else ">" for ln in body]
        head = "Agent"
    else:
        raise ValueError(f"unknown role {turn.role!r}")
    return f"{HEADING if heading else ''}[{stamp}] [{head}]\n" + "\n".join(body) + "\n\n\n"


def session_file_name(meta: SessionMeta, n: int = 1, slug: str = "") -> str:
    """``YYYY-MM-DD_HHMMSS[_slug]_<id prefix>[-n].md``: start time first so names sort, the
    title's slug so the file explorer shows what the session was about; the id prefix last
    (lookups by id, and retrieval's sample picks names by their last hex digits)."""
    base = f"{local_time(meta.started):%Y-%m-%d_%H%M%S}_{slug + '_' if slug else ''}{safe_id_prefix(meta.session_id)}"
    return f"{base}.md" if n == 1 else f"{base}-{n}.md"


def file_format(path) -> int:
    """The format a session file is in (1 for format 1 and the legacy layouts)."""
    v = read_frontmatter(path).get("chrollo_format")
    return v if isinstance(v, int) and v >= 1 else 1


# ----------------------------------------------------------------------------- writer

def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


class SessionWriter:
    """Appends turns to the one file of a session. Safe across processes.

    ``vault`` defaults to :func:`chrollo.vault.memories_dir` for the session's cwd.
    """

    def __init__(self, meta: SessionMeta, vault: Path | None = None, fsync: bool = True,
                 index: "VaultIndex | None" = None, known: str | None = None, record: bool = True,
                 fmt: int = FORMAT_VERSION, scrub=None):
        # ``known``/``record``: a caller that keeps the file's path itself (capture keeps it in
        # its own state) spares the per-session record file — one file creation fewer, which
        # is most of an import's cost per session on a slow disk.
        self.meta, self.index, self.known, self.record = meta, index, known, record
        # ``scrub()``: the caller's policy (chrollo.capture hands privacy's), asked under the
        # lock for the text filter to apply — read there, an append that waited on a running
        # `forget --lines` scrubs what that forget just added. The writer knows no policy.
        self.scrub = scrub
        self.vault = Path(vault) if vault else _vault.memories_dir(meta.cwd or None)
        self.fsync = fsync
        self._listed: list | None = None  # the vault's top-level names (see _vault_names)
        self.fmt = fmt  # the format of a file this writer creates (1: for comparisons and tests)
        self._slug = ""
        self._record = Path(_layout.writer_record(meta.session_id))
        # 256 shared lock files, not one per session: creating a file costs ~0.4 ms here, and
        # an import creates thousands of sessions. Unrelated sessions rarely wait on each other.
        self._lock = _layout.writer_lock(meta.session_id)  # (lock 2 of the order: chrollo.layout)

    # -- public -------------------------------------------------------------
    def append(self, turns: list[Turn], before=None) -> Path | None:
        """Append the turns that have content; returns the file (None if nothing to write).

        ``before(path, size, length)`` is called under the lock just before the bytes go out
        (``path`` None: the file is being created), so a caller can record what it is about
        to write and tell, after a crash, a whole append from a torn one.

        A new file is written in format 2; an existing file keeps its own format.
        """
        turns = [t for t in turns if t.has_content()]
        if not turns:
            return None
        lock_fd = _vault.open_lock(self._lock)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            self._listed = None  # (listed afresh under each lock: a forget may rename the file)
            scrub = self.scrub() if self.scrub is not None else None
            path = self._locate()
            if path is None or not path.exists():
                body = _encode(turns, self.fmt >= 2, scrub)  # (the title comes from this scrubbed body)
                if before is not None:
                    before(None, 0, len(body))
                path = self._create(body, path)
            else:
                self._append(path, _encode(turns, file_format(path) >= 2, scrub), before)
            return path
        finally:
            os.close(lock_fd)  # releases the flock

    def path(self) -> Path | None:
        """The session's file if it was written before."""
        p = self._locate()
        return p if p and p.exists() else None

    # -- internals ------------------------------------------------------------
    def _locate(self) -> Path | None:
        if self.known and os.path.exists(self.known):
            return Path(self.known)
        recorded = _vault.read_json(self._record).get("path")
        recorded = Path(recorded) if isinstance(recorded, str) and Path(recorded).parent == self.vault \
            else None  # (not another vault's)
        if recorded is not None and recorded.exists():
            return recorded
        # (a recorded file that is gone may have been renamed: `forget --lines` takes a
        # title's words out of the name; only if it is nowhere is it recreated where it was)
        return find_session_file(self.vault, self.meta.session_id, self.index,
                                 None if self.index is not None else self._vault_names()) or recorded

    def _vault_names(self) -> list:
        """The vault's top-level names, listed once per append (finding the session's file,
        its parent's and stale temp files would list a vault of 250,000 sessions thrice)."""
        if self._listed is None:
            try:
                self._listed = os.listdir(self.vault)
            except OSError:
                self._listed = []
        return self._listed

    def _save_record(self, path: Path) -> None:
        _vault.write_private(str(self._record), json.dumps({"path": str(path), "meta": self.meta.to_json()}))

    def _create(self, body: bytes, previous: Path | None) -> Path:
        """Write frontmatter + body to a temp file, then link it into place (never half-visible)."""
        folder = previous.parent if previous else self.vault
        _vault.ensure_dir(folder)
        if self.meta.repository is None:  # (once per file: found from the cwd, a few small reads)
            from .repository import identify

            repo = identify(self.meta.cwd)
            self.meta.repository = repo.key if repo else ""
        links = self._links(folder, body) if self.fmt >= 2 else None
        data = render_frontmatter(self.meta, links).encode("utf-8") + body
        prefix = safe_id_prefix(self.meta.session_id)
        _set_aside_stale_tmp(folder, prefix, self._vault_names() if folder == self.vault else None)
        # An unnamed file (O_TMPFILE) that a crash or a full disk can never leave behind in
        # the vault; a named hidden one where the filesystem has no O_TMPFILE.
        fd, tmp = None, None
        if hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd"):
            try:
                fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY, _vault.FILE_MODE)
            except OSError:
                fd = None
        if fd is None:
            tmp = folder / f".{prefix}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, _vault.FILE_MODE)
        src = tmp if tmp is not None else f"/proc/self/fd/{fd}"
        try:
            _write_all(fd, data)
            if self.fsync:
                os.fsync(fd)
            names = ([previous.name] if previous else []) + [session_file_name(self.meta, slug=self._slug)]
            # A top-level creation is noted for the cached listings (chrollo/listing.py), unless
            # a named temp file came and went in the folder (then the next search lists it).
            from .listing import Creating

            with Creating(str(folder)) if folder == self.vault and tmp is None else nullcontext() as noting:
                for name in itertools.chain(names, (session_file_name(self.meta, n, self._slug)
                                                    for n in range(2, 1000))):
                    try:
                        _link(src, folder, name)
                    except FileExistsError:
                        continue
                    if folder == self.vault:
                        from .obsidian import ensure_base

                        ensure_base(str(folder))
                    if noting is not None:
                        noting.done(name)
                    break
                else:
                    raise OSError(f"no free file name for session {self.meta.session_id!r}")
            if self.record:
                self._save_record(folder / name)
            if self.index is not None and folder == self.index.vault:
                self.index.add(name)
            return folder / name
        finally:
            os.close(fd)
            if tmp is not None:
                os.unlink(tmp)

    def _links(self, folder: Path, body: bytes) -> Links:
        """Title (from the first prompt as written), project, previous and parent session."""
        from . import obsidian

        turns = parse_lines(body.decode("utf-8").split("\n")).turns
        first = next((t for t in turns if t.role == "user" and t.text.strip()), None) or \
            next((t for t in turns if t.text.strip()), None)
        title = obsidian.title_from(first.text) if first else ""
        self._slug = obsidian.slug(title)
        parent = None
        if self.meta.parent_session:
            own = self.index if self.index is not None and folder == self.index.vault else None
            p = find_session_file(folder, self.meta.parent_session, own,
                                  self._vault_names() if own is None and folder == self.vault else None)
            parent = p.stem if p else None
        previous = None
        if not self.meta.parent_session:
            names = self.index.names if self.index is not None and folder == self.index.vault else None
            previous = obsidian.find_previous(str(folder), session_file_name(self.meta, slug=self._slug),
                                              self.meta.cwd, names, self.meta.repository)
        return Links(title, obsidian.project_name(self.meta.cwd, self.meta.repository), previous, parent)

    def _append(self, path: Path, data: bytes, before=None) -> None:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW)  # never write through a link
        try:
            size = os.fstat(fd).st_size
            if size:
                # A file torn by an older writer (or by hand) ends mid-line: start clean.
                tail = os.pread(fd, 1, size - 1)
                if tail != b"\n":
                    data = b"\n\n\n" + data
            if before is not None:
                before(str(path), size, len(data))
            try:
                _write_all(fd, data)
                if self.fsync:
                    os.fsync(fd)
            except BaseException:
                # A full disk (or a file size limit) cut the write short: take the torn part
                # back out, so the turn is in the file whole or not at all.
                try:
                    os.ftruncate(fd, size)
                except OSError:
                    pass
                raise
        finally:
            os.close(fd)


def _link(src, folder: Path, name: str) -> None:
    """Give ``src`` the name ``folder/name``. (A folder fd makes os.link call linkat with
    AT_SYMLINK_FOLLOW, which an O_TMPFILE file's /proc/self/fd link needs; plain link(2)
    would not follow it.)"""
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.link(src, name, dst_dir_fd=dfd, follow_symlinks=True)
    finally:
        os.close(dfd)


def cut_back(session_id: str, path: str, size: int) -> bytes:
    """Truncate ``path`` to ``size`` under the session's writer lock; returns the bytes cut
    (what a killed writer left of a turn it never finished)."""
    lock_fd = _vault.open_lock(_layout.writer_lock(session_id))
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
        try:
            end = os.fstat(fd).st_size
            torn = os.pread(fd, end - size, size) if end > size else b""
            if torn:
                os.ftruncate(fd, size)
                os.fsync(fd)
            return torn
        finally:
            os.close(fd)
    finally:
        os.close(lock_fd)


def _set_aside_stale_tmp(folder: Path, prefix: str, names: list | None = None) -> None:
    """Hidden ``.<id>.<pid>.tmp`` files a crashed writer (before O_TMPFILE, or on a filesystem
    without it) left in the vault: moved out to ``state/torn/``. ``names``: the folder's, if
    the caller has listed it."""
    try:
        names = [n for n in (os.listdir(folder) if names is None else names)
                 if n.startswith(f".{prefix}.") and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        pid = name[len(prefix) + 2:-len(".tmp")]
        if pid.isdigit() and _vault.pid_alive(int(pid)):
            continue
        dest = _vault.make_private_dirs(_layout.torn_dir())
        try:
            os.replace(folder / name, os.path.join(dest, name.lstrip(".")))
        except OSError:  # (another filesystem) a partial copy of a turn that is written again
            try:
                os.unlink(folder / name)
            except OSError:
                pass


def _encode(turns: list, heading: bool, scrub=None) -> bytes:
    """Turns as stored; ``scrub``: the caller's text filter (forgotten lines, redaction)."""
    text = "".join(render_turn(t, heading) for t in turns)
    text = scrub(text) if scrub else text
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8")


class VaultIndex:
    """The vault's session files by id prefix, listed once (for bulk writers such as import:
    without it every new session lists the whole folder, which is quadratic in a big vault)."""

    def __init__(self, vault: Path):
        self.vault = Path(vault)
        self.by_prefix: dict = {}
        self.names: list = []  # every session file name, sorted
        try:
            names = sorted(os.listdir(vault))
        except OSError:
            names = []
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        key = name_id(name)
        if key is not None:  # keyed by the id part without a "-2" collision suffix
            self.by_prefix.setdefault(key, []).append(name)
            bisect.insort(self.names, name)

    def candidates(self, session_id: str) -> list:
        # (keyed as add() keys a name: an id part ending in "-<digits>" — "fault-00" of the id
        # "fault-0008" — loses them there as if they were a collision suffix; looked up under
        # the full part only, such a session's file was never found and was written again)
        keys = {k for p in (safe_id_prefix(session_id), session_id[:8]) for k in (p, _unsuffixed(p))}
        return sorted({n for k in keys for n in self.by_prefix.get(k, [])})


def _unsuffixed(part: str) -> str:
    """``part`` without a trailing "-<digits>" (as :func:`name_id` keys a name)."""
    head, dash, tail = part.rpartition("-")
    return head if dash and tail.isdigit() else part


def find_session_file(vault: Path, session_id: str, index: VaultIndex | None = None,
                      names: list | None = None) -> Path | None:
    """The local (non-peer) file whose frontmatter holds ``session_id``, if any; ``names``:
    the vault's top-level names if the caller has listed it."""
    prefix = safe_id_prefix(session_id)
    if index is not None:
        names = index.candidates(session_id)
    else:
        try:
            names = os.listdir(vault) if names is None else names
        except OSError:
            return None
        # (only names holding the id can match: a substring test first, then sort those —
        # not 250,000 regex matches and a sort of them all)
        names = sorted(n for n in names if prefix in n or session_id[:8] in n)
    for name in names:
        m = _vault.SESSION_NAME_RE.fullmatch(name)
        part = m.group(3).rpartition("_")[2] if m else ""  # (format 2: after the title's slug)
        if m and (part in (prefix, session_id[:8]) or part.startswith(prefix + "-")):
            p = Path(vault) / name
            if read_frontmatter(p).get("session_id") == session_id:
                return p
    return None


# ----------------------------------------------------------------------------- reader

class ParsedTurn:
    """One turn as read back: ``role`` user|agent, ``timestamp`` "YYYY-MM-DD HH:MM:SS",
    1-based ``header_line``, ``first_line`` (== header_line + 1) and ``last_line`` (last
    non-blank body line), ``text`` (body without quoting, escapes and tool lines) and
    ``tools`` (the tool-call lines, unquoted)."""

    __slots__ = ("role", "timestamp", "header_line", "first_line", "last_line", "text", "tools")

    def __init__(self, role, timestamp, header_line, first_line, last_line, text, tools=None):
        self.role, self.timestamp, self.header_line = role, timestamp, header_line
        self.first_line, self.last_line, self.text = first_line, last_line, text
        self.tools = tools if tools is not None else []


class Session:
    """A parsed session file: ``meta`` (frontmatter), ``turns``, ``body_start`` (1-based)."""

    __slots__ = ("path", "meta", "turns", "body_start")

    def __init__(self, path, meta: dict, turns: list, body_start: int):
        self.path, self.meta, self.turns, self.body_start = path, meta, turns, body_start


def parse_lines(lines: list[str], path: Path | None = None) -> Session:
    """Parse a session's lines (current format and the legacy variants)."""
    meta, start = parse_frontmatter(lines)
    default_date = str(meta.get("date") or (file_date(path.name) if path else "") or "1970-01-01")
    turns: list[ParsedTurn] = []
    cur = None  # [role, ts, header_idx, inline]

    def close(end: int):
        role, ts, h, inline = cur
        idx = list(range(h + 1, end))
        while idx and not lines[idx[-1]].strip():
            idx.pop()
        body = ([inline] if inline else []) + [lines[i].rstrip("\r") for i in idx]
        if role == "agent":
            body = [b[2:] if b.startswith("> ") else b[1:] if b.startswith(">") else b for b in body]
        else:
            body = [b[1:] if b.startswith("\\") and HEADER_RE.match(b[1:]) else b for b in body]
        tools = [b.strip() for b in body if TOOL_LINE_RE.match(b)]
        text = "\n".join(b for b in body if not TOOL_LINE_RE.match(b)).strip("\n")
        last = (idx[-1] + 1) if idx else h + 1
        turns.append(ParsedTurn(role, ts, h + 1, h + 2, last, text, tools))

    for i in range(start, len(lines)):
        m = HEADER_RE.match(lines[i])
        if m:
            if cur is not None:
                close(i)
            cur = ["user" if m.group(3) == "User" else "agent",
                   f"{m.group(1) or default_date} {m.group(2)}", i, m.group(4)]
    if cur is not None:
        close(len(lines))
    return Session(path, meta, turns, start + 1)


def read_session(path: str | os.PathLike) -> Session:
    """Parse one session file from disk (invalid UTF-8 is replaced, never fatal)."""
    p = Path(path)
    with _vault.open_regular(p) as fh:
        text = fh.read().decode("utf-8", "replace")
    return parse_lines(text.split("\n"), p)
