"""One session file (DESIGN §4): naming, frontmatter, the locked atomic writer, the reader.

File layout::

    ---
    session_id: "…"
    date: "YYYY-MM-DD"
    harness: "claude-code"
    cwd: "/home/user/project"
    chrollo_format: 1
    ---

    [YYYY-MM-DD HH:MM:SS] [User]
    user text, verbatim


    [YYYY-MM-DD HH:MM:SS] [Agent]
    > agent text, every line quoted
    > <tool>$ ls -la</tool>


Writer contract: the file appears on the first turn with content (never empty), is only
ever appended to, every append is one ``write(2)`` under an exclusive ``flock`` keyed by the
session id, and a deleted file is recreated from the metadata saved in ``state/``.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import itertools
import json
import os
import re
from pathlib import Path

from . import vault as _vault
from .fileformat import (FORMAT_VERSION, HEADER_RE, TOOL_LINE_RE, TS_FMT, ToolCall, file_date,
                         parse_frontmatter, read_frontmatter, safe_id_prefix, yaml_quote)
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

    __slots__ = ("session_id", "started", "harness", "cwd", "parent_session", "machine")

    def __init__(self, session_id: str, started: dt.datetime, harness: str, cwd: str = "",
                 parent_session: str | None = None, machine: str | None = None):
        self.session_id, self.started, self.harness, self.cwd = session_id, started, harness, cwd
        self.parent_session, self.machine = parent_session, machine

    def to_json(self) -> dict:
        return {"session_id": self.session_id, "started": self.started.strftime(TS_FMT),
                "harness": self.harness, "cwd": self.cwd,
                "parent_session": self.parent_session, "machine": self.machine}

    @classmethod
    def from_json(cls, d: dict) -> "SessionMeta":
        return cls(d["session_id"], dt.datetime.strptime(d["started"], TS_FMT), d["harness"],
                   d.get("cwd", ""), d.get("parent_session"), d.get("machine"))


# ----------------------------------------------------------------------------- rendering

def local_time(when: dt.datetime) -> dt.datetime:
    """Aware datetimes are converted to local time; naive ones are taken as local."""
    return when.astimezone().replace(tzinfo=None) if when.tzinfo else when


def render_frontmatter(meta: SessionMeta) -> str:
    fields = [("session_id", meta.session_id), ("date", local_time(meta.started).strftime("%Y-%m-%d")),
              ("harness", meta.harness), ("cwd", meta.cwd)]
    if meta.parent_session:
        fields.append(("parent_session", meta.parent_session))
    fields.append(("machine", meta.machine or os.uname().nodename))
    lines = ["---"] + [f"{k}: {yaml_quote(str(v))}" for k, v in fields]
    lines += [f"chrollo_format: {FORMAT_VERSION}", "---", "", ""]
    return "\n".join(lines)


def render_turn(turn: Turn) -> str:
    """One turn as stored: header, body, then two blank lines. Empty string if no content."""
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
    return f"[{stamp}] [{head}]\n" + "\n".join(body) + "\n\n\n"


def session_file_name(meta: SessionMeta, n: int = 1) -> str:
    base = f"{local_time(meta.started):%Y-%m-%d_%H%M%S}_{safe_id_prefix(meta.session_id)}"
    return f"{base}.md" if n == 1 else f"{base}-{n}.md"


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
                 index: "VaultIndex | None" = None, known: str | None = None, record: bool = True):
        # ``known``/``record``: a caller that keeps the file's path itself (capture keeps it in
        # its own state) spares the per-session record file — one file creation fewer, which
        # is most of an import's cost per session on a slow disk.
        self.meta, self.index, self.known, self.record = meta, index, known, record
        self.vault = Path(vault) if vault else _vault.memories_dir(meta.cwd or None)
        self.fsync = fsync
        key = _vault.state_key(meta.session_id)
        self._record = _vault.state_dir() / "sessions" / f"{key}.json"
        # 256 shared lock files, not one per session: creating a file costs ~0.4 ms here, and
        # an import creates thousands of sessions. Unrelated sessions rarely wait on each other.
        self._lock = _vault.state_dir() / "locks" / f"write-{key[:2]}.lock"

    # -- public -------------------------------------------------------------
    def append(self, turns: list[Turn], before=None) -> Path | None:
        """Append the turns that have content; returns the file (None if nothing to write).

        ``before(path, size, length)`` is called under the lock just before the bytes go out
        (``path`` None: the file is being created), so a caller can record what it is about
        to write and tell, after a crash, a whole append from a torn one."""
        text = "".join(render_turn(t) for t in turns)
        if not text:
            return None
        from .privacy import rules

        lock_fd = _vault.open_lock(self._lock)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            # Lines `chrollo forget --lines` removed stay removed; read under the lock, so an
            # append that waited on a running forget scrubs what that forget just added.
            text = rules(reload=True).scrub_lines(text)
            if rules().redact_capture:  # off by default: the detector is imported only then
                from .redact import Redactor

                text = Redactor.from_config(_vault.home_path()).redact(text)[0]
            data = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").encode("utf-8")
            path = self._locate()
            if path is None or not path.exists():
                if before is not None:
                    before(None, 0, len(data))
                path = self._create(data, path)
            else:
                self._append(path, data, before)
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
        if isinstance(recorded, str) and Path(recorded).parent == self.vault:  # (not another vault's)
            return Path(recorded)
        return find_session_file(self.vault, self.meta.session_id, self.index)

    def _save_record(self, path: Path) -> None:
        _vault.write_private(str(self._record), json.dumps({"path": str(path), "meta": self.meta.to_json()}))

    def _create(self, body: bytes, previous: Path | None) -> Path:
        """Write frontmatter + body to a temp file, then link it into place (never half-visible)."""
        folder = previous.parent if previous else self.vault
        _vault.ensure_dir(folder)
        data = render_frontmatter(self.meta).encode("utf-8") + body
        prefix = safe_id_prefix(self.meta.session_id)
        _set_aside_stale_tmp(folder, prefix)
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
            names = ([previous.name] if previous else []) + [session_file_name(self.meta)]
            for name in itertools.chain(names, (session_file_name(self.meta, n) for n in range(2, 1000))):
                try:
                    _link(src, folder, name)
                except FileExistsError:
                    continue
                if self.record:
                    self._save_record(folder / name)
                if self.index is not None and folder == self.index.vault:
                    self.index.add(name)
                return folder / name
            raise OSError(f"no free file name for session {self.meta.session_id!r}")
        finally:
            os.close(fd)
            if tmp is not None:
                os.unlink(tmp)

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
    lock_fd = _vault.open_lock(_vault.state_dir() / "locks" / f"write-{_vault.state_key(session_id)[:2]}.lock")
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


def _set_aside_stale_tmp(folder: Path, prefix: str) -> None:
    """Hidden ``.<id>.<pid>.tmp`` files a crashed writer (before O_TMPFILE, or on a filesystem
    without it) left in the vault: moved out to ``state/torn/``."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(f".{prefix}.") and n.endswith(".tmp")]
    except OSError:
        return
    for name in names:
        pid = name[len(prefix) + 2:-len(".tmp")]
        if pid.isdigit() and _alive(int(pid)):
            continue
        dest = _vault.make_private_dirs(str(_vault.state_dir() / "torn"))
        try:
            os.replace(folder / name, os.path.join(dest, name.lstrip(".")))
        except OSError:  # (another filesystem) a partial copy of a turn that is written again
            try:
                os.unlink(folder / name)
            except OSError:
                pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass
    return True


class VaultIndex:
    """The vault's session files by id prefix, listed once (for bulk writers such as import:
    without it every new session lists the whole folder, which is quadratic in a big vault)."""

    def __init__(self, vault: Path):
        self.vault = Path(vault)
        self.by_prefix: dict = {}
        try:
            names = sorted(os.listdir(vault))
        except OSError:
            names = []
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        m = _vault.SESSION_NAME_RE.fullmatch(name)
        if m:  # keyed by the id part without a "-2" collision suffix
            self.by_prefix.setdefault(re.sub(r"-\d+$", "", m.group(3)), []).append(name)

    def candidates(self, session_id: str) -> list:
        prefix = safe_id_prefix(session_id)
        names = self.by_prefix.get(prefix, []) + (self.by_prefix.get(session_id[:8], [])
                                                   if session_id[:8] != prefix else [])
        return sorted(set(names))


def find_session_file(vault: Path, session_id: str, index: VaultIndex | None = None) -> Path | None:
    """The local (non-peer) file whose frontmatter holds ``session_id``, if any."""
    prefix = safe_id_prefix(session_id)
    if index is not None:
        names = index.candidates(session_id)
    else:
        try:
            names = sorted(os.listdir(vault))
        except OSError:
            return None
    for name in names:
        m = _vault.SESSION_NAME_RE.fullmatch(name)
        if m and (m.group(3) in (prefix, session_id[:8]) or m.group(3).startswith(prefix + "-")):
            p = Path(vault) / name
            if read_frontmatter(p).get("session_id") == session_id:
                return p
    return None


def append_turns(meta: SessionMeta, turns: list[Turn], vault: Path | None = None) -> Path | None:
    """Library entry point for capture: append ``turns`` to the session's file."""
    return SessionWriter(meta, vault).append(turns)


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
            body = [b[1:] if b.startswith("\\[") and HEADER_RE.match(b[1:]) else b for b in body]
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
