"""git's config files read as git reads them, without running git (docs/design.md §4).

What identity needs of them: a remote's URL (``remote.<name>.url``) and the rewrites that
turn it into the URL git really uses (``url.<base>.insteadOf``). Read, in git's order, from
the system file (``/etc/gitconfig``, unless ``GIT_CONFIG_NOSYSTEM``), the user's
(``GIT_CONFIG_GLOBAL``, else ``$XDG_CONFIG_HOME/git/config`` then ``~/.gitconfig``) and the
repository's, each with its ``[include]`` and ``[includeIf "gitdir:…"]`` /
``"gitdir/i:…"`` / ``"onbranch:…"`` files (other conditions are never met here).

The repository's file is hostile input (a downloaded archive carries one): every file is
read bounded (:data:`MAX_CONFIG`), regular files only, includes at most
:data:`MAX_DEPTH` deep and :data:`MAX_FILES` in all, and an included file must belong to
this user (or root) — the same rule the repository itself must pass. Only the user's own
files (``~/.gitconfig`` is often a dotfiles symlink) are followed through a symlink.
"""
from __future__ import annotations

import os
import re
import stat

MAX_CONFIG = 64 * 1024     # bytes of one config file read (a real one is a few hundred)
MAX_DEPTH = 10             # nested includes (git's own limit)
MAX_FILES = 32             # config files read for one repository, includes counted

_HEADER = re.compile(r'\[\s*([A-Za-z0-9.-]+)\s*(?:"((?:[^"\\\n]|\\.)*)")?\s*\]')
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?\Z", re.S)


def owned(st: os.stat_result) -> bool:
    """Does a file or folder belong to this user (or root, as system files do)?"""
    return st.st_uid in (os.geteuid(), 0)


def read_file(path: str, follow: bool = False) -> str | None:
    """The whole lines of the first :data:`MAX_CONFIG` bytes of a regular file that belongs
    to this user or root (``follow``: through a symlink), as text; None if it cannot be read."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not owned(st):
            return None
        data = os.read(fd, MAX_CONFIG + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) > MAX_CONFIG:  # (a cut line — half a URL — is left out)
        data = data[:MAX_CONFIG].rpartition(b"\n")[0]
    return data.decode("utf-8", "replace")


def parse(text: str):
    """``(section, subsection, key, value)`` of every entry, in order: section and key
    lowercased, subsection as written (``[remote.origin]``'s old form lowercased); a key
    without ``=`` has the value None (git's boolean true). Malformed lines are skipped."""
    section = sub = None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            m = _HEADER.match(line)
            if not m:
                section = sub = None
                continue
            name, quoted = m.group(1), m.group(2)
            if quoted is not None:
                section, sub = name.lower(), re.sub(r"\\(.)", r"\1", quoted)
            else:
                head, dot, rest = name.partition(".")
                section, sub = (head.lower(), rest.lower()) if dot else (name.lower(), None)
            line = line[m.end():].strip()  # (a key may follow on the header's line)
            if not line or line[0] in "#;":
                continue
        if section is None:
            continue
        while line.endswith("\\") and not line.endswith("\\\\") and i < len(lines):  # a continued value
            line = line[:-1] + lines[i]
            i += 1
        m = _KEY.match(line)
        if not m:
            continue
        yield section, sub, m.group(1).lower(), None if m.group(2) is None else value(m.group(2))


def value(text: str) -> str:
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


class Config:
    """Every entry of the config files git would read for a repository, in git's order."""

    def __init__(self, gitdir: str | None = None, common: str | None = None, branch: str | None = None):
        self.gitdir, self.branch = gitdir, branch
        self.entries: list = []
        self._files = 0
        if not os.environ.get("GIT_CONFIG_NOSYSTEM"):
            self._load("/etc/gitconfig", follow=True)
        home = os.path.expanduser("~")
        glob = os.environ.get("GIT_CONFIG_GLOBAL")
        if glob is not None:
            if glob:
                self._load(os.path.expanduser(glob), follow=True)
        else:
            xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
            self._load(os.path.join(xdg, "git", "config"), follow=True)
            self._load(os.path.join(home, ".gitconfig"), follow=True)
        if common:
            self._load(os.path.join(common, "config"), follow=False)

    def _load(self, path: str, follow: bool, depth: int = 0) -> None:
        if depth > MAX_DEPTH or self._files >= MAX_FILES:
            return
        self._files += 1
        text = read_file(path, follow=follow)
        if text is None:
            return
        for section, sub, key, val in parse(text):
            if key == "path" and val and (section == "include" and sub is None
                                          or section == "includeif" and sub and self._met(sub, path)):
                target = os.path.expanduser(val)
                if not os.path.isabs(target):
                    target = os.path.join(os.path.dirname(path), target)
                self._load(os.path.normpath(target), follow=True, depth=depth + 1)
            else:
                self.entries.append((section, sub, key, val))

    def _met(self, condition: str, path: str) -> bool:
        """An ``includeIf`` condition, as git evaluates it (``gitdir``, ``gitdir/i``, ``onbranch``)."""
        kind, _, pattern = condition.partition(":")
        if kind in ("gitdir", "gitdir/i") and self.gitdir and pattern:
            if pattern.startswith("./"):
                pattern = os.path.join(os.path.dirname(path), pattern[2:])
            pattern = os.path.expanduser(pattern)
            if not pattern.startswith("/"):
                pattern = "**/" + pattern
            if pattern.endswith("/"):
                pattern += "**"
            target = os.path.realpath(self.gitdir)
            fold = kind == "gitdir/i"
            return any(glob_match(pattern, t, fold) for t in {self.gitdir, target})
        if kind == "onbranch" and self.branch and pattern:
            return glob_match(pattern + "**" if pattern.endswith("/") else pattern, self.branch, False)
        return False

    def get_all(self, section: str, key: str, sub: str | None = None) -> list:
        return [(s, v) for sec, s, k, v in self.entries
                if sec == section and k == key and (sub is None or s == sub)]

    def remote_url(self) -> str | None:
        """The URL git fetches ``origin`` from (else the first remote by name with one),
        rewritten by ``insteadOf`` as git would."""
        urls: dict = {}
        for name, val in self.get_all("remote", "url"):
            if name is not None and val and name not in urls:
                urls[name] = val
        if not urls:
            return None
        from . import normalise_url

        name = "origin" if "origin" in urls else next(
            (n for n in sorted(urls) if normalise_url(self.rewrite(urls[n]))), None)
        return self.rewrite(urls[name]) if name else None

    def rewrite(self, url: str) -> str:
        """``url`` with the longest matching ``url.<base>.insteadOf`` prefix replaced."""
        best = None
        for base, prefix in self.get_all("url", "insteadof"):
            if base and prefix and url.startswith(prefix) and (best is None or len(prefix) > len(best[1])):
                best = (base, prefix)
        return best[0] + url[len(best[1]):] if best else url


def glob_match(pattern: str, text: str, fold: bool) -> bool:
    """git's wildmatch with ``**`` (any folders) and ``*``/``?`` within one folder."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.fullmatch("".join(out), text, re.S | (re.I if fold else 0)) is not None
