"""A session's project across machines: the repository it ran in (docs/design.md §4).

The same repository cloned at ``~/src/app`` on one machine and ``/work/shop`` on another is
one project. Its identity key, recorded at capture (and import) as the frontmatter's
``repository``, is, in this order:

* the normalised URL of its ``origin`` remote (else of the first remote by name that has a
  URL): ``git@github.com:Org/App.git``, ``https://user:token@github.com/org/app`` and
  ``ssh://git@github.com:22/org/app.git`` are all ``github.com/org/app`` — scheme, user,
  credentials, port and ``.git`` dropped, lowercased. A remote on this machine (a path,
  ``file://``) says nothing across machines and is skipped;
* else the repository's root commit: ``root:<sha>`` (the root of HEAD's first-parent chain),
  read from its object files — loose and packed (:mod:`.objects`);
* else nothing: the session's project is its folder, as before.

**No git process, ever.** A repository's own config can name commands git would run (a
partial clone's promisor remote, ``uploadpack``, fsmonitor…), and the folder an agent works
in may be a downloaded archive. So chrollo reads the files git would: ``.git`` (a folder, or a
file saying ``gitdir:`` — worktrees, submodules), the config files with their includes and
``insteadOf`` rewrites (:mod:`.config`), refs and objects. Bounded, because a repository is
hostile input: never more than a few KB of a pointer or 64 KB of a config, never through a
symlink, a FIFO or a device; a value that is not a well-formed remote gives no key (so no
control character can reach a file or a terminal). A repository (its folder, ``.git`` and
git directory) this user does not own is not read at all, as git's ``safe.directory``
refuses it. The root commit is walked at most once per repository (the answer, or the HEAD
a walk gave up at, is kept in ``state/repositories/``). Stdlib only: the capture hook
imports it when it creates a file.
"""
from __future__ import annotations

import os
import re

MAX_REFS = 1 << 20         # bytes of packed-refs read
MAX_POINTER = 4096         # bytes of a `.git` file (gitdir:), `commondir`, HEAD, a ref
MAX_URL = 2048
MAX_WALK = 200_000         # commits followed to the root
WALK_DEADLINE = 1.0        # seconds a walk may take (once per repository; kept, as is giving up)
ROOT_PREFIX = "root:"

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://(.*)\Z", re.S)
_SCP = re.compile(r"(?:[^@/:]+@)?([^@/:]+):(?!//)(.*)\Z", re.S)  # [user@]host:path (git's scp form)
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9_.-]*[a-z0-9])?\Z")
_SEGMENT = re.compile(r"[\w.~+%-]+\Z")
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?\Z")
_LOCAL_SCHEMES = {"file"}


class Repository:
    """``key``: the identity recorded in the frontmatter; ``name``: the project's readable
    name (its link in Obsidian); ``root``: the folder holding ``.git`` on this machine."""

    __slots__ = ("key", "name", "root")

    def __init__(self, key: str, name: str, root: str):
        self.key, self.name, self.root = key, name, root

    def __repr__(self) -> str:
        return f"Repository({self.key!r}, {self.name!r}, {self.root!r})"


def normalise_url(url: str, bare: bool = False) -> str | None:
    """The identity of a remote URL (``host/path``, lowercased), or None for a local path,
    a malformed or oversized value. ``bare``: also take ``host.tld/path`` without a scheme
    (what a user may type; a config never holds that form)."""
    if not isinstance(url, str) or len(url) > MAX_URL:
        return None
    u = url.strip()
    if not u or any(ch.isspace() or not ch.isprintable() for ch in u):
        return None
    m = _SCHEME.match(u)
    if m:
        scheme = m.group(1).lower()
        if scheme in _LOCAL_SCHEMES:
            return None
        authority, _, path = m.group(2).partition("/")
        host = authority.rpartition("@")[2]  # userinfo (user:token) never recorded
        host = host[1:host.find("]")] if host.startswith("[") else host.partition(":")[0]
    elif (m := _SCP.match(u)) and not re.match(r"[A-Za-z]:[\\/]", u) and "/" not in u.partition(":")[0]:
        host, path = m.group(1), m.group(2)
    elif bare and "/" in u and "." in u.partition("/")[0] and not u.startswith((".", "/", "~")):
        host, _, path = u.partition("/")
    else:
        return None  # a path on this machine
    host = host.lower().rstrip(".")
    if not _HOST.match(host):
        return None
    segments = [s for s in path.lower().replace("\\", "/").split("/") if s and s != "~"]
    if segments and segments[-1].endswith(".git"):
        segments[-1] = segments[-1][:-4]
    segments = [s for s in segments if s]
    if host.endswith("dev.azure.com"):  # Azure Repos: ssh's v3/org/project/repo is https's org/project/_git/repo
        host = "dev.azure.com"
        segments = [s for s in segments if s != "_git"]
        if segments[:1] == ["v3"]:
            segments = segments[1:]
    if not segments or any(s in (".", "..") or not _SEGMENT.match(s) for s in segments):
        return None
    return host + "/" + "/".join(segments)


def name_of(key: str) -> str:
    """The readable name a URL key gives (its last segment); "" for a root-commit key."""
    if not isinstance(key, str) or key.startswith(ROOT_PREFIX) or "/" not in key:
        return ""
    return key.rsplit("/", 1)[1]


def identify(cwd: str) -> Repository | None:
    """The repository ``cwd`` is in (see the module doc), or None. Never raises."""
    if not cwd:
        return None
    try:  # (not cached per process: ~50 µs, and a long-lived server must see a remote changed)
        return _identify(os.path.normpath(cwd))
    except (OSError, ValueError, UnicodeError):
        return None


def key_for(arg: str) -> str | None:
    """The repository a user's ``--project``/``exclude``/``forget --project`` argument names:
    a folder that is a repository's root (it holds ``.git``) gives that repository's key; a
    remote URL (any form, or ``host.tld/org/app``) gives its normalised key; anything else
    (a folder inside a repository, a plain folder, a name) None — it keeps meaning a folder."""
    if not arg:
        return None
    path = os.path.realpath(os.path.expanduser(arg))
    if os.path.isdir(path):
        if not os.path.lexists(os.path.join(path, ".git")):
            return None
        repo = identify(path)
        return repo.key if repo else None
    if arg.startswith(ROOT_PREFIX) and _SHA.match(arg[len(ROOT_PREFIX):]):
        return arg
    return normalise_url(arg, bare=True)


# ----------------------------------------------------------------------------- reading .git

def _identify(cwd: str) -> Repository | None:
    from ..homedir import git_root
    from .config import Config

    root = git_root(cwd)
    if root is None or not _mine(root):
        return None
    gitdir = _gitdir(os.path.join(root, ".git"))
    if gitdir is None:
        return None
    common = _common_dir(gitdir)
    if not _mine(gitdir) or not _mine(common):
        return None
    head = _read(os.path.join(gitdir, "HEAD"), MAX_POINTER).split("\n", 1)[0].strip()
    branch = head[4:].strip().removeprefix("refs/heads/") if head.startswith("ref:") else None
    config = Config(gitdir, common, branch)
    url = config.remote_url()
    key = normalise_url(url) if url else None
    if key:
        return Repository(key, name_of(key), root)
    sha = _root_commit(gitdir, common, head, config)
    if sha:
        return Repository(ROOT_PREFIX + sha, os.path.basename(root.rstrip("/")), root)
    return None


def _mine(path: str) -> bool:
    """Is ``path`` (not followed) this user's? A repository someone else owns — a ``.git``
    planted in a shared folder above the working one — is never read, as git's own
    ``safe.directory`` check refuses it."""
    try:
        return os.lstat(path).st_uid == os.geteuid()
    except OSError:
        return False


def _read(path: str, limit: int) -> str:
    """The whole lines within the first ``limit`` bytes of a regular file (no symlink, FIFO or
    device), as text — a longer file's cut line (a URL cut short) is left out; "" if it
    cannot be read."""
    from ..vault import open_regular

    try:
        with open_regular(path) as fh:
            data = fh.read(limit + 1)
    except OSError:
        return ""
    if len(data) > limit:
        data = data[:limit].rpartition(b"\n")[0]
    return data.decode("utf-8", "replace")


def _gitdir(dot_git: str) -> str | None:
    """The git directory ``.git`` stands for: itself if a folder, else what its ``gitdir:``
    line names (relative to the folder holding it)."""
    if os.path.isdir(dot_git) and not os.path.islink(dot_git):
        return dot_git
    text = _read(dot_git, MAX_POINTER)
    line = text.split("\n", 1)[0].strip()
    if not line.startswith("gitdir:"):
        return None
    target = line[len("gitdir:"):].strip()
    if not target or "\0" in target:
        return None
    target = os.path.normpath(os.path.join(os.path.dirname(dot_git), target))
    return target if os.path.isdir(target) else None


def _common_dir(gitdir: str) -> str:
    """A linked worktree's git directory names the main one in ``commondir``: config and
    objects live there."""
    text = _read(os.path.join(gitdir, "commondir"), MAX_POINTER).split("\n", 1)[0].strip()
    if text and "\0" not in text:
        common = os.path.normpath(os.path.join(gitdir, text))
        if os.path.isdir(common):
            return common
    return gitdir


# ----------------------------------------------------------------------------- the root commit

def _root_commit(gitdir: str, common: str, head: str, config) -> str | None:
    """The root of HEAD's first-parent chain: from ``state/repositories/`` if this repository
    (its common git directory, by path and inode) was walked before — a walk that gave up is
    kept too, by the HEAD it started from, and tried again only when HEAD moves — else
    walked through the object files (:mod:`.objects`)."""
    from .. import layout as _layout
    from ..homedir import read_json, write_private

    try:
        st = os.stat(os.path.join(common, "objects"))
    except OSError:
        return None
    start = _resolve_head(gitdir, common, head)
    if not start:
        return None
    record = _layout.repository_record(f"{os.path.realpath(common)}\0{st.st_dev}:{st.st_ino}")
    kept = read_json(record)
    sha = kept.get("root")
    if isinstance(sha, str) and _SHA.match(sha):
        return sha
    if kept.get("gave_up_at") == start:
        return None
    sha = _walk_to_root(common, start, config)
    try:
        import json

        write_private(record, json.dumps({"root": sha, "git_dir": os.path.realpath(common)} if sha else
                                         {"gave_up_at": start, "git_dir": os.path.realpath(common)},
                                         ensure_ascii=False))
    except OSError:
        pass
    return sha


def _resolve_head(gitdir: str, common: str, head: str) -> str | None:
    """The commit HEAD names: itself, or its branch's loose or packed ref."""
    if not head.startswith("ref:"):
        return head if _SHA.match(head) else None
    ref = head[4:].strip()
    if not ref.startswith("refs/") or ".." in ref.split("/") or "\0" in ref:
        return None
    sha = next((t for d in (gitdir, common)
                if (t := _read(os.path.join(d, ref), MAX_POINTER).split("\n", 1)[0].strip())), "")
    if not sha:  # (a fresh clone keeps its refs in packed-refs: "<sha> <ref>" lines)
        suffix = " " + ref
        sha = next((ln[:-len(suffix)] for ln in _read(os.path.join(common, "packed-refs"), MAX_REFS).split("\n")
                    if ln.endswith(suffix)), "")
    return sha if _SHA.match(sha) else None


def _walk_to_root(common: str, sha: str, config) -> str | None:
    """HEAD's first-parent root, read from loose objects and packs; None as soon as a commit
    cannot be read (a partial or shallow clone, a damaged pack), past :data:`MAX_WALK`
    commits or :data:`WALK_DEADLINE` seconds."""
    import time

    from .objects import Objects

    if os.path.lexists(os.path.join(common, "shallow")):
        return None  # (a shallow clone's oldest commit is where it was cut, not the root)
    sha256 = any(v and v.lower() == "sha256" for _, v in config.get_all("extensions", "objectformat"))
    stores = [Objects(os.path.join(common, "objects"), 32 if sha256 else 20)]
    stores += [Objects(d, stores[0].hash_len) for d in _alternates(common)]
    deadline = time.monotonic() + WALK_DEADLINE
    try:
        for n in range(MAX_WALK):
            if not _SHA.match(sha) or (n & 255 == 255 and time.monotonic() > deadline):
                return None
            parent = next((p for s in stores if (p := s.commit(sha)) is not None), None)
            if parent is None:
                return None
            if not parent:
                return sha
            sha = parent
    finally:
        for s in stores:
            s.close()
    return None


def _alternates(common: str) -> list:
    """The object folders ``objects/info/alternates`` borrows from (``clone --shared``,
    ``--reference``): at most four, each this user's."""
    out = []
    objects = os.path.join(common, "objects")
    for line in _read(os.path.join(objects, "info", "alternates"), MAX_POINTER).split("\n"):
        line = line.strip()
        if not line or line.startswith("#") or "\0" in line:
            continue
        d = os.path.normpath(os.path.join(objects, line))
        if os.path.isdir(d) and _mine(d):
            out.append(d)
        if len(out) == 4:
            break
    return out
