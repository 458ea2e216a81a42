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
  read from the loose objects when its commits are files, else asked of ``git``;
* else nothing: the session's project is its folder, as before.

Cheap and bounded, because a cloned repository is hostile input: ``.git`` (a folder, or a
file saying ``gitdir:`` — worktrees, submodules) and the config are read from files, never
more than :data:`MAX_CONFIG` bytes, never through a symlink, a FIFO or a device; ``include``
directives are not followed; a value that is not a well-formed remote gives no key (so no
control character can reach a file or a terminal). Only a root commit behind packed objects
needs ``git``: the root commit is found at most once per repository (the answer is kept in
``state/repositories/``), and git runs with no network
(``protocol.allow=never``: a partial clone's lazy fetch could run a hostile transport), no
terminal, and a deadline. Stdlib only: the capture hook imports it when it creates a file.
"""
from __future__ import annotations

import os
import re

MAX_CONFIG = 64 * 1024     # bytes of .git/config read (a real one is a few hundred)
MAX_POINTER = 4096         # bytes of a `.git` file (gitdir:) or a `commondir` file
MAX_URL = 2048
GIT_DEADLINE = 2.0         # seconds `git rev-list` may take to name the root commit
MAX_WALK = 2000            # loose commits followed to the root before git is asked instead
MAX_OBJECT = 64 * 1024     # bytes of a loose commit read (and inflated): its headers come first
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
    from .homedir import git_root

    root = git_root(cwd)
    if root is None:
        return None
    gitdir = _gitdir(os.path.join(root, ".git"))
    if gitdir is None:
        return None
    common = _common_dir(gitdir)
    url = _remote_url(_read(os.path.join(common, "config"), MAX_CONFIG))
    key = normalise_url(url) if url else None
    if key:
        return Repository(key, name_of(key), root)
    sha = _root_commit(gitdir, common)
    if sha:
        return Repository(ROOT_PREFIX + sha, os.path.basename(root.rstrip("/")), root)
    return None


def _read(path: str, limit: int) -> str:
    """The whole lines within the first ``limit`` bytes of a regular file (no symlink, FIFO or
    device), as text — a longer file's cut line (a URL cut short) is left out; "" if it
    cannot be read."""
    from .vault import open_regular

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


def _remote_url(config: str) -> str | None:
    """The URL of ``origin``, else of the first remote (by name) with one, from a config's
    text (git's syntax: sections, quoted values, escapes, comments; includes not followed)."""
    urls: dict = {}
    section = None
    for raw in config.split("\n"):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = _section(line)
            if section is None or "]" not in line:
                continue
            line = line[line.index("]") + 1:].strip()  # (a key may follow on the header's line)
            if not line:
                continue
        if section is None or section[0] != "remote" or section[1] is None:
            continue
        k, sep, v = line.partition("=")
        if sep and k.strip().lower() == "url" and section[1] not in urls:
            value = _value(v)
            if value:
                urls[section[1]] = value
    if "origin" in urls:
        return urls["origin"]
    for name in sorted(urls):
        if normalise_url(urls[name]):
            return urls[name]
    return None


def _section(line: str):
    """(section lowercased, subsection or None) of a ``[section "sub"]`` / ``[section.sub]``
    header; None if malformed."""
    m = re.match(r'\[\s*([A-Za-z0-9.-]+)\s*(?:"((?:[^"\\]|\\.)*)")?\s*\]', line)
    if not m:
        return None
    name, sub = m.group(1), m.group(2)
    if sub is not None:
        return name.lower(), re.sub(r"\\(.)", r"\1", sub)
    head, dot, rest = name.partition(".")  # the old [remote.origin] form
    return (head.lower(), rest.lower()) if dot else (name.lower(), None)


def _value(text: str) -> str:
    """A config value: quotes removed, escapes read, a trailing comment dropped."""
    out, quoted, i = [], False, 0
    text = text.strip()
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
        i += 1
    return "".join(out).strip()


# ----------------------------------------------------------------------------- the root commit

def _root_commit(gitdir: str, common: str) -> str | None:
    """The root of HEAD's first-parent chain: from ``state/repositories/`` if this repository
    (its common git directory, by path and inode) was asked before, else from ``git``."""
    from . import layout as _layout
    from .homedir import read_json, write_private

    try:
        st = os.stat(os.path.join(common, "objects"))
    except OSError:
        return None
    record = _layout.repository_record(f"{os.path.realpath(common)}\0{st.st_dev}:{st.st_ino}")
    sha = read_json(record).get("root")
    if isinstance(sha, str) and _SHA.match(sha):
        return sha
    sha = _root_from_files(gitdir, common) or _ask_git(gitdir)
    if sha:
        try:
            import json

            write_private(record, json.dumps({"root": sha, "git_dir": os.path.realpath(common)},
                                             ensure_ascii=False))
        except OSError:
            pass
    return sha


def _root_from_files(gitdir: str, common: str) -> str | None:
    """HEAD's first-parent root read from loose objects (a young repository's commits are
    files); None as soon as anything is not (a packed object, alternates, a shallow boundary,
    more than :data:`MAX_WALK` commits): then git answers."""
    import zlib

    head = _read(os.path.join(gitdir, "HEAD"), MAX_POINTER).split("\n", 1)[0].strip()
    sha = head
    if head.startswith("ref:"):
        ref = head[4:].strip()
        if not ref.startswith("refs/") or ".." in ref.split("/") or "\0" in ref:
            return None
        sha = next((t for d in (gitdir, common)
                    if (t := _read(os.path.join(d, ref), MAX_POINTER).split("\n", 1)[0].strip())), "")
        if not sha:  # (a fresh clone keeps its refs in packed-refs: "<sha> <ref>" lines)
            suffix = " " + ref
            sha = next((ln[:-len(suffix)] for ln in _read(os.path.join(common, "packed-refs"), MAX_CONFIG).split("\n")
                        if ln.endswith(suffix)), "")
    objects = os.path.join(common, "objects")
    if not sha or any(os.path.lexists(p) for p in (os.path.join(objects, "info", "alternates"),
                                                   os.path.join(common, "shallow"))):
        return None
    for _ in range(MAX_WALK):
        if not _SHA.match(sha):
            return None
        try:
            from .vault import open_regular

            with open_regular(os.path.join(objects, sha[:2], sha[2:])) as fh:
                raw = fh.read(MAX_OBJECT)
            data = zlib.decompressobj().decompress(raw, MAX_OBJECT)  # (bounded, whatever it claims)
        except (OSError, zlib.error):
            return None
        kind, _, body = data.partition(b"\0")
        if not kind.startswith(b"commit "):
            return None
        parent = None
        for line in body.split(b"\n", 64)[:64]:  # tree, then parents: the first is the first parent
            if line.startswith(b"parent "):
                parent = line[7:].decode("ascii", "replace").strip()
                break
            if not line.startswith(b"tree "):
                break
        if parent is None:
            return sha
        sha = parent
    return None


def _ask_git(gitdir: str) -> str | None:
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        return None
    # (no GIT_* of the caller's: GIT_DIR, GIT_OBJECT_DIRECTORY… would answer for another repository)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", GIT_CONFIG_NOSYSTEM="1")
    try:
        p = subprocess.run([git, "-c", "protocol.allow=never", "-c", "core.fsmonitor=false",
                            f"--git-dir={gitdir}", "rev-list", "--first-parent", "--max-parents=0",
                            "--max-count=1", "HEAD"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           env=env, timeout=GIT_DEADLINE, cwd=gitdir)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = p.stdout[:200].decode("ascii", "replace").strip()
    return sha if p.returncode == 0 and _SHA.match(sha) else None
