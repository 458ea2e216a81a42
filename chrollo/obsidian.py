"""What Obsidian browses by (format 2, docs/design.md §4): titles, file-name slugs, links, the view.

Computed once, when a session's file is created (see :class:`chrollo.session.SessionWriter`):

* ``title`` — one bounded line from the first prompt, also the file name's slug;
* ``project`` — the name of the project the session ran in (its repository's name, else its
  git root's or cwd's folder name: :mod:`chrollo.repository`);
* ``previous`` — the newest earlier top-level session of the same project in the same folder;
* ``parent`` — the file of the parent session (subagents, forks), when it is in the vault;
* ``chrollo.base`` — an Obsidian Bases view over every session, written once per vault.

Also answers ``doctor``'s question: can Obsidian see the vault (:func:`visibility`)?
"""
from __future__ import annotations

import os
import re
import unicodedata

from . import vault as _vault
from .fileformat import read_frontmatter

TITLE_CHARS = 80          # the title property: one line, at most this many characters
SLUG_CHARS = 48           # the title's part of a file name
PREVIOUS_SCAN = 200       # earlier files read (frontmatter only) to find the previous session
BASE_NAME = "chrollo.base"

# Characters that break a wikilink or a tag inside a link target, a title or an alias.
_LINK_HOSTILE = re.compile(r"[\[\]|#^\\]+")


def title_from(text: str) -> str:
    """A short, one-line title for a session whose first prompt is ``text`` ("" if none).

    Control and format characters (bidi overrides, zero-width) go, markdown markers at line
    starts go, link syntax goes, whitespace collapses; cut at a word boundary. Every word of
    the title is a word of ``text``, so a search never finds in it what the body lacks.
    """
    out = []
    for line in text.split("\n"):
        line = re.sub(r"^\s*(?:[#>*+-]+|\d+[.)])\s+", " ", line)  # headings, quotes, list markers
        out.append(line)
    s = "".join(ch if unicodedata.category(ch)[0] not in "CZ" else " " for ch in " ".join(out))
    s = _LINK_HOSTILE.sub(" ", s.replace("`", " "))
    s = " ".join(s.split())
    if len(s) <= TITLE_CHARS:
        return s
    cut = s[:TITLE_CHARS - 1]
    if " " in cut[TITLE_CHARS // 2:]:
        cut = cut[:cut.rindex(" ")]
    return cut.rstrip(" ,.;:-") + "…"


def slug(title: str) -> str:
    """The title as a file-name part: ASCII letters and digits joined by ``_``, bounded.

    ASCII only, so the name is the same on every filesystem (no NFC/NFD differences, no
    characters Windows refuses) and safe to paste into a shell. Underscores, not hyphens:
    ripgrep's word boundaries do not split ``fix_login_bug``, so a link to this file in
    another session's ``previous`` never counts as a match of the title's words.
    """
    ascii_ = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    # Long tokens mixing letters and digits are ids, hashes or keys: no use in a name, and a
    # secret pasted into a prompt should not be copied into a file name.
    words = [w for w in re.findall(r"[a-z0-9]+", ascii_.lower())
             if len(w) <= 24 and not (len(w) >= 12 and re.search(r"\d", w) and re.search(r"[a-z]", w))]
    out = ""
    for w in words:
        if len(out) + len(w) + 1 > SLUG_CHARS:
            break
        out = f"{out}_{w}" if out else w
    return out or (words[0][:SLUG_CHARS] if words else "")


def git_project(cwd: str) -> str:
    """The project a cwd belongs to: its git root if it still exists on disk, else the cwd."""
    if not cwd:
        return ""
    d = os.path.normpath(cwd)
    return _vault.git_root(d) or d


def project_name(cwd: str, repository: str | None = None) -> str:
    """The project's name as a link target and tag ("" without a cwd): the repository's name
    when its key is a remote URL (the same on every machine, whatever the clone's folder is
    called), else the git root's or the cwd's folder name."""
    from .repository import name_of

    name = name_of(repository or "")
    if not name:
        root = git_project(cwd)
        name = os.path.basename(root.rstrip("/")) if root else ""
    return " ".join(_LINK_HOSTILE.sub(" ", name).split())


def tag(value: str) -> str:
    """An Obsidian tag for ``value``: letters, digits, ``_ - /``; never all digits."""
    t = re.sub(r"[^\w/-]+", "-", value, flags=re.UNICODE).strip("-/")
    return f"x-{t}" if t.isdigit() else t


def wikilink(target: str) -> str:
    return f"[[{target}]]"


def find_previous(folder: str, before: str, cwd: str, names: list | None = None,
                  repository: str | None = None) -> str | None:
    """The file name (without ``.md``) of the newest top-level session in ``folder`` that
    started before ``before`` (a session file name) in the same project as ``cwd``: the same
    ``repository`` when both sessions have one, else the same git root (or cwd).

    Reads at most PREVIOUS_SCAN frontmatters, newest first; ``names``: the folder's session
    file names if the caller has them (a bulk import lists the folder once); else the
    newest come from the cached listing (chrollo/listing.py: no listing of 250,000 names
    for each new session), and the folder is listed only when they are not enough.
    """
    root = git_project(cwd)
    if not root:
        return None
    stamp = before[:17]  # YYYY-MM-DD_HHMMSS
    if names is None:
        from .listing import cached

        try:
            newest, total = cached(folder, True)
            names = [n for n in newest if "\0" not in n and n[:17] < stamp]
            if len(names) < PREVIOUS_SCAN and total > len(newest):
                names = os.listdir(folder)  # (an old session imported into a large vault)
        except OSError:
            return None
        names = [n for n in names if _vault.SESSION_NAME_RE.match(n)]
    earlier = sorted(n for n in names if n[:17] < stamp and n.endswith(".md"))
    roots: dict = {}
    for name in reversed(earlier[-PREVIOUS_SCAN:]):
        meta = read_frontmatter(os.path.join(folder, name))
        other = meta.get("cwd")
        if meta.get("parent_session") or not isinstance(other, str):
            continue
        theirs = meta.get("repository")
        if repository and isinstance(theirs, str) and theirs:
            if theirs == repository:
                return name[:-3]
            continue
        if other not in roots:
            roots[other] = git_project(other)
        if roots[other] == root:
            return name[:-3]
    return None


# ----------------------------------------------------------------------------- the view

BASE_TEXT = """\
# chrollo: every captured session of this memory folder (Obsidian Bases, core since 1.9).
# Written once by chrollo and never again: edit it freely.
filters:
  or:
    - file.hasTag("chrollo")
    - file.hasProperty("session_id")
properties:
  note.started:
    displayName: Started
  note.title:
    displayName: Title
  note.project:
    displayName: Project
  note.harness:
    displayName: Harness
  note.machine:
    displayName: Machine
views:
  - type: table
    name: All sessions
    order:
      - file.name
      - started
      - title
      - project
      - harness
      - machine
    sort:
      - property: started
        direction: DESC
  - type: table
    name: By project
    groupBy:
      property: project
      direction: ASC
    order:
      - file.name
      - started
      - title
      - harness
      - machine
    sort:
      - property: started
        direction: DESC
  - type: table
    name: By harness
    groupBy:
      property: harness
      direction: ASC
    order:
      - file.name
      - started
      - title
      - project
      - machine
    sort:
      - property: started
        direction: DESC
"""


def ensure_base(vault: str) -> bool:
    """Write ``chrollo.base`` at the vault's root if chrollo never did; True if written.

    Written once: a file already there (the user's edits) is never replaced, and a base the
    user deleted does not come back (chrollo remembers, in state/, that it wrote one).
    """
    from .layout import obsidian_marker

    marker = obsidian_marker(os.path.realpath(vault))
    if os.path.exists(marker):
        return False
    path = os.path.join(vault, BASE_NAME)
    written = False
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _vault.FILE_MODE)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(BASE_TEXT)
        written = True
    _vault.write_private(marker, path + "\n")
    return written


# ----------------------------------------------------------------------------- visibility

def obsidian_root(path: str) -> str | None:
    """The nearest folder at or above ``path`` that is an Obsidian vault (has ``.obsidian/``)."""
    return _vault.nearest_holding(os.path.realpath(path), ".obsidian", os.path.isdir)


def visibility(vault: str) -> dict:
    """Whether Obsidian can show ``vault``: the Obsidian vault holding it (if any) and the
    dot-folders on the way (Obsidian never shows those)."""
    real = os.path.realpath(vault)
    root = obsidian_root(real) if os.path.exists(real) else obsidian_root(os.path.dirname(real))
    inside = os.path.relpath(real, root) if root else None
    parts = real.split(os.sep) if root is None else ([] if inside == "." else inside.split(os.sep))
    hidden = [p for p in parts if p.startswith(".") and p not in (".", "..")]
    return {"vault": real, "obsidian_vault": root, "relative": inside, "hidden_by": hidden,
            "visible": root is not None and not hidden}


def use_vault(path: str | None) -> dict:
    """``chrollo config vault``: make ``path`` the global vault (None: the default again).

    Returns what a user needs to know: the folder, whether Obsidian can see it, whether
    ``chrollo.base`` was written, and how many sessions stay behind in the previous folder.
    """
    old, source = _vault.global_vault_path()
    new = path
    try:
        new = _vault.set_global_vault(path)
        _vault.make_private_dirs(new)
        written = ensure_base(new)
    except OSError as e:  # (a name too long, a file in the way, /proc…): the setting goes back
        _vault.set_global_vault(old if source == "config" else None)
        from .errors import ChrolloError

        raise ChrolloError("bad_vault", f"cannot keep memory in {new}: {e.strerror}",
                           "Pick a folder you can create and write.") from None
    behind = 0
    if os.path.realpath(old) != os.path.realpath(new) and os.path.isdir(old):
        behind = sum(1 for n in os.listdir(old) if _vault.SESSION_NAME_RE.match(n))
    return {"vault": new, "previous_vault": old, "left_behind": behind, "base_written": written,
            "obsidian": visibility(new)}


# ----------------------------------------------------------------------------- forget

def forget_title(lines: list, body: int, transform) -> list:
    """``chrollo forget``: the frontmatter's title and aliases go through ``transform`` (the
    forget's own: a forgotten line becomes the marker, a secret is redacted), in place;
    returns the 1-based numbers of the lines that changed. (The title repeats the first
    prompt, so what is forgotten there must go from here too.)"""
    import json

    from .fileformat import yaml_quote

    hit, key = [], None
    for i in range(1, max(body - 1, 1)):
        ln = lines[i]
        if not ln.startswith((" ", "-")):
            key = ln.partition(":")[0]
        head = "title: " if key == "title" and ln.startswith("title: ") else \
            "  - " if key == "aliases" and ln.startswith("  - ") else None
        if head is None:
            continue
        raw = ln[len(head):]
        try:
            value = json.loads(raw) if raw.startswith('"') else raw
        except ValueError:
            value = raw
        new = transform(value)
        if new != value:
            lines[i] = head + yaml_quote(new)
            hit.append(i + 1)
    return hit


def forget_slug(path, taken: set = frozenset(), marks: tuple = ()):
    """After a forget, the name a session file whose title no longer gives the slug in its
    name is to be renamed to (``DATE_TIME_id.md``, or ``…-N.md`` when that is another file's
    or in ``taken``), or None. With ``marked``, only a title holding a forget's own marker
    counts: a rename a killed forget had not made yet, never a title edited by hand (#44).
    (A name already linked to this file, a rename cut between its link and unlink, is the one.)"""
    from pathlib import Path

    p = Path(path)
    m = _vault.SESSION_NAME_RE.match(p.name)
    if not m or "_" not in m.group(3):
        return None
    slug_, _, ident = m.group(3).rpartition("_")
    title = read_frontmatter(p).get("title")
    if not isinstance(title, str) or slug(title) == slug_:
        return None
    if marks and not any(mark in title for mark in marks):
        return None
    for n in range(1, 1000):
        new = p.with_name(f"{m.group(1)}_{m.group(2)}_{ident}{'' if n == 1 else f'-{n}'}.md")
        if str(new) in taken:
            continue
        try:
            if not os.path.lexists(new) or os.path.samefile(p, new):
                return new
        except OSError:
            continue
    return None


def rename_forgotten(old, new) -> bool:
    """``old`` renamed ``new`` (see :func:`forget_slug`), never over another file: a link,
    then the old name goes (a link already made by a forget killed in between is kept)."""
    try:
        os.link(old, new)
    except FileExistsError:
        if not os.path.samefile(old, new):
            return False
    os.unlink(old)
    return True