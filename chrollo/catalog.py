"""The vault's sessions as rows — ``chrollo sessions`` — and a session found by file, id or
id prefix (``chrollo read SESSION``).

Fast at 250,000 sessions: a session file's name starts with its local start time
(``YYYY-MM-DD_HHMMSS_…``), so names sort newest first and a date range is a range of names.
The newest names come from the cached listing (:mod:`chrollo.listing`, no listing of the
whole vault while no folder changed); only the files of rows about to be shown are opened —
their frontmatter head for the filters, the whole file for the turn count — and the walk
stops at the first page (or at the first name older than ``since``).
"""
from __future__ import annotations

import os
import re

from . import listing as _listing
from . import vault as _vault
from .dates import name_stamp
from .errors import ChrolloError
from .fileformat import HEADER_BYTES_RE, parse_frontmatter

HEAD = 8192
_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2})_(\d{2})(\d{2})(\d{2})")
_LINK = re.compile(r"\[\[([^\]|#]*)")
MIN_PREFIX = 4  # an id prefix shorter than this names too many sessions to be useful


class Row:
    """One session as ``sessions`` lists it (see :meth:`to_json` for the stable schema)."""

    __slots__ = ("path", "id", "session_id", "started", "title", "project", "cwd", "harness",
                 "turns", "bytes", "peer", "parent", "repository")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


class Listing:
    """A page of sessions, newest first; ``more``: further sessions match; ``files``: session
    files in the vault (before any filter)."""

    def __init__(self, vault: str, rows: list, more: bool, files: int):
        self.vault, self.rows, self.more, self.files = vault, rows, more, files

    def to_json(self) -> dict:
        return {"vault": self.vault, "files": self.files, "count": len(self.rows), "more": self.more,
                "sessions": [r.to_json() for r in self.rows]}


class Filters:
    """What ``sessions`` and ``search`` select by: project (a name; or a path: that folder and
    below, and — a repository's root folder, or a remote URL — every session recorded in that
    repository, on any machine), harness, peer / no peers, started in [since, until] (naive
    local datetimes)."""

    def __init__(self, project: str | None = None, harness: str | None = None, peer: str | None = None,
                 peers: bool = True, since=None, until=None):
        self.harness, self.peer, self.peers = harness, peer, peers and True
        self.since, self.until = since, until
        self.project_name = self.project_path = self.project_repo = None
        if project:
            if os.sep in project or project in (".", "..") or project.startswith("~"):
                from .repository import key_for

                self.project_path = os.path.realpath(os.path.expanduser(project))
                self.project_repo = key_for(project)
            else:
                self.project_name = project.casefold()
        self.lo = name_stamp(since) if since else None
        self.hi = name_stamp(until) if until else None

    @property
    def needs_head(self) -> bool:
        return bool(self.harness or self.project_name or self.project_path)

    def name_ok(self, name: str) -> bool:
        """Whether a file named ``name`` can be in range (undated names always can)."""
        stamp = name[:17]
        if not _STAMP.fullmatch(stamp):
            return True
        return not ((self.lo and stamp < self.lo) or (self.hi and stamp > self.hi))

    def meta_ok(self, meta: dict) -> bool:
        if self.harness and str(meta.get("harness") or "").lower() != self.harness.lower():
            return False
        if self.project_name and project_of(meta).casefold() != self.project_name:
            cwd = meta.get("cwd")
            if not (isinstance(cwd, str) and os.path.basename(cwd.rstrip("/")).casefold() == self.project_name):
                return False
        if self.project_path and not in_project(meta, self.project_path, self.project_repo):
            return False
        return True


def in_project(meta: dict, path: str | None, repository: str | None = None) -> bool:
    """Was the session ``meta`` describes captured in the folder ``path`` (or below it), or —
    ``repository`` given — in that repository on any machine? (``--project PATH``,
    ``forget --project``)"""
    if repository and meta.get("repository") == repository:
        return True
    cwd = meta.get("cwd")
    if not path:
        return False
    root = path.rstrip("/")
    return isinstance(cwd, str) and (cwd == root or cwd.startswith(root + "/"))


def filters(project=None, harness=None, peer=None, no_peers: bool = False, since=None, until=None) -> Filters:
    """The command line's filters, checked and parsed (one date grammar: :mod:`chrollo.dates`)."""
    from .dates import parse
    from .errors import UsageError

    if peer and no_peers:
        raise UsageError("--peer and --no-peers cannot be used together", kind="bad_usage")
    lo, hi = parse(since, option="--since"), parse(until, end=True, option="--until")
    if lo and hi and lo > hi:
        raise UsageError(f"--since ({since}) is after --until ({until})", kind="bad_date")
    return Filters(project, harness, peer, not no_peers, lo, hi)


def project_of(meta: dict) -> str:
    """A session's project: its ``project`` link's name (format 2), else its repository's name,
    else its cwd's folder name."""
    p = meta.get("project")
    if isinstance(p, str) and p:
        m = _LINK.search(p)
        return (m.group(1) if m else p).strip()
    from .repository import name_of

    if name := name_of(meta.get("repository")):
        return name
    cwd = meta.get("cwd")
    return os.path.basename(cwd.rstrip("/")) if isinstance(cwd, str) and cwd.strip("/") else ""


def vault_for(dir: str | None = None, cwd: str | None = None) -> str:
    """The folder to list: ``dir``, else the vault for ``cwd``; it must exist."""
    root = os.path.realpath(os.path.expanduser(dir)) if dir else _vault.memories_path(cwd)
    _vault.require_dir(root, "memory folder" if dir else "vault")
    return root


def sessions(dir: str | None = None, filters: Filters | None = None, limit: int = 20,
             cwd: str | None = None) -> Listing:
    """The newest ``limit`` sessions (0: all) that pass ``filters``, newest first."""
    f = filters or Filters()
    root = vault_for(dir, cwd)
    if f.peer:
        _peer_folder(root, f.peer)
    include_peers = f.peers or bool(f.peer)
    rows: list = []
    more = False
    newest, total = _listing.cached(root, include_peers)
    for key in _keys(root, newest, total, include_peers, f.lo):
        row = _row(root, key, f)
        if row is None:
            continue
        if limit and len(rows) >= limit:
            more = True
            break
        rows.append(row)
    return Listing(root, rows, more, total)


def _keys(root: str, newest: list, total: int, include_peers: bool, lo: str | None):
    """Session keys to list, newest first, then the undated names (no timestamp) sorted; none
    older than ``lo`` — and then no undated ones either, as a ``--since`` asks for dates."""
    undated: list = []
    for key in _walk(root, newest, total, include_peers):
        name = key.partition("\0")[0]
        if not _STAMP.match(name):
            undated.append(key)
        elif lo and name[:17] < lo:
            return  # every name from here on is older
        else:
            yield key
    yield from sorted(undated)


def _walk(root: str, newest: list, total: int, include_peers: bool):
    """Every session key of ``root``, newest first: the cached newest names, then — only if
    a caller reads past them — the rest of a full listing, sorted in batches."""
    yield from newest
    if total <= len(newest):
        return
    floor = newest[-1] if newest else None
    rest = [k for k in _listing.session_files(root, include_peers) if floor is None or k < floor]
    for batch in _listing.newest_keys(rest, 1000):
        yield from batch


def _peer_folder(root: str, peer: str) -> None:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", peer) or not os.path.isdir(
            os.path.join(root, _vault.PEERS, peer)):
        raise ChrolloError("peer_not_found", f"no files from a peer named {peer!r} in {root}",
                           "`chrollo sessions` without --peer shows where each session came from.")


def _row(root: str, key: str, f: Filters) -> Row | None:
    name, _, rel = key.partition("\0")
    rel = rel or name
    if not f.name_ok(name):
        return None
    path = os.path.join(root, rel)
    peer = _vault.peer_of(path, root)
    if f.peer and peer != f.peer:
        return None
    if not f.peers and not f.peer and peer is not None:
        return None
    try:
        with _vault.open_regular(path) as fh:
            data = fh.read(HEAD)
            meta = parse_frontmatter(data.decode("utf-8", "replace").split("\n"))[0]
            if not f.meta_ok(meta):
                return None
            if len(data) == HEAD:
                data += fh.read()
    except OSError:
        return None  # vanished, a FIFO, a symlink: not a session to list
    started = _started(name, meta)
    return Row(path=path, id=_name_id(name), session_id=_str(meta.get("session_id")), started=started,
               title=_title(meta, data), project=project_of(meta) or None, cwd=_str(meta.get("cwd")),
               harness=_str(meta.get("harness")), turns=len(HEADER_BYTES_RE.findall(data)), bytes=len(data),
               peer=peer, parent=_str(meta.get("parent_session")), repository=_str(meta.get("repository")))


def _str(v) -> str | None:
    return None if v is None else str(v)


def _name_id(name: str) -> str | None:
    from .fileformat import name_id

    return name_id(name)


def _started(name: str, meta: dict) -> str | None:
    m = _STAMP.match(name)
    if m:
        return f"{m.group(1)} {m.group(2)}:{m.group(3)}:{m.group(4)}"
    s = meta.get("started") or meta.get("date")
    return str(s).replace("T", " ") if s else None


def _title(meta: dict, data: bytes) -> str:
    """The frontmatter title (format 2), else the first line of the first user turn."""
    t = meta.get("title")
    if isinstance(t, str) and t.strip():
        return t.strip()
    m = re.search(rb"^(?:## )?\[[^\]]*\] \[User\][ \t]*(\S[^\n]*)?\n((?:[ \t]*\n)*)([^\n]*)", data, re.M)
    if not m:
        return ""
    line = (m.group(1) or m.group(3) or b"").decode("utf-8", "replace").strip()
    return line[:80] + ("…" if len(line) > 80 else "")


# ----------------------------------------------------------------------------- find one

def find(target: str, roots: list) -> str:
    """The session file ``target`` names: a path (absolute or relative to a root), a file name,
    a session id or an id prefix (≥ 4 characters, as `sessions` shows it). Exit-1 errors:
    ``file_not_found`` when nothing matches, ``ambiguous`` when a prefix names several."""
    looks_like_path = os.sep in target or target.endswith(".md")
    if looks_like_path:
        return str(_vault.confine(target, roots))
    if len(target) < MIN_PREFIX or not re.fullmatch(r"[A-Za-z0-9:._-]+", target):
        raise ChrolloError("file_not_found", f"no session {target!r}: give a file, a session id or "
                           f"an id prefix of at least {MIN_PREFIX} characters",
                           "`chrollo sessions` lists sessions with their ids.")
    want = target.lower()
    found: list = []
    for root in roots:
        root = os.path.realpath(root)
        for key in _listing.session_files(root, True):
            name, _, rel = key.partition("\0")
            nid = (_name_id(name) or "").lower()
            if not nid or not (nid.startswith(want) or want.startswith(nid)):
                continue
            path = os.path.join(root, rel or name)
            if len(want) > len(nid):  # longer than the name holds: the frontmatter decides
                from .fileformat import read_frontmatter

                sid = str(read_frontmatter(path).get("session_id") or "").lower()
                if not sid.startswith(want):
                    continue
            found.append(path)
    if not found:
        raise ChrolloError("file_not_found", f"no session matches {target!r} in "
                           + ", ".join(os.fspath(r) for r in roots),
                           "`chrollo sessions` lists sessions with their ids.")
    if len(found) > 1:
        found = _parent_of_all(found)
    if len(found) > 1:
        shown = ", ".join(os.path.basename(p) for p in sorted(found, reverse=True)[:5])
        raise ChrolloError("ambiguous", f"{target!r} names {len(found)} sessions: {shown}"
                           + (" …" if len(found) > 5 else ""),
                           "Give more characters of the id, or the file name.")
    return found[0]


def _parent_of_all(paths: list) -> list:
    """[the parent] when ``paths`` are one session and its subagents' files (which share its
    id's first characters), else ``paths``."""
    from .fileformat import read_frontmatter

    ids = {p: str(read_frontmatter(p).get("session_id") or "") for p in paths}
    tops = [p for p, sid in ids.items() if sid and ":" not in sid]
    if len(tops) == 1 and all(p == tops[0] or sid.startswith(ids[tops[0]] + ":") for p, sid in ids.items()):
        return tops
    return paths
