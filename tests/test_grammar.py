"""#29: the on-disk grammar (turn headers, frontmatter delimiters) has one home,
chrollo/fileformat.py, and the walk up the folders is one function, homedir.walk_up."""
from __future__ import annotations

import ast
import os

from conftest import ROOT

from chrollo.fileformat import (FRONTMATTER_CLOSING, FRONTMATTER_CLOSING_LINE, FRONTMATTER_OPENING, HEADER_BYTES_RE,
                                HEADER_RE, HEADER_START_RE)
from chrollo.homedir import find_project, git_root, walk_up
from chrollo.privacy import repo_opt_out


def _patterns(path) -> list:
    """(line, text) of the string and bytes constants of ``path`` that spell a header or a
    frontmatter delimiter pattern."""
    out = []
    for n in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)):
            v = n.value.decode("latin-1") if isinstance(n.value, bytes) else n.value
            if "User|Agent" in v or "---\\r*" in v:
                out.append((n.lineno, v))
    return out


def test_header_and_frontmatter_patterns_are_written_once_in_fileformat():
    elsewhere = {str(p.relative_to(ROOT)): _patterns(p) for p in (ROOT / "chrollo").rglob("*.py")
                 if p.name != "fileformat.py"}
    assert {k: v for k, v in elsewhere.items() if v} == {}
    own = _patterns(ROOT / "chrollo" / "fileformat.py")
    assert len([v for _, v in own if "User|Agent" in v]) == 1  # HEADER, once


def test_the_header_forms_agree():
    for line in ("## [2026-01-01 10:00:00] [User]", "[10:00:00] [Agent]", "[2026-01-01 10:00:00] [User] hi"):
        assert HEADER_RE.match(line) and HEADER_START_RE.match(line)
        assert HEADER_BYTES_RE.findall(line.encode() + b"\n")
    assert HEADER_START_RE.match("\\## [2026-01-01 10:00:00] [User]") and not HEADER_RE.match("\\## [x]")
    assert not HEADER_START_RE.match("x [10:00:00] [User]")
    head = b"---\nsession_id: x\n---\n\n"
    assert FRONTMATTER_OPENING.match(head) and FRONTMATTER_CLOSING.search(head)
    assert FRONTMATTER_CLOSING_LINE.search(head, 3)


def test_one_walk_up_with_its_stop_rules(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    repo = tmp_path / "outer" / "repo"
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    (tmp_path / "outer" / ".chrollo").mkdir()
    (tmp_path / "outer" / ".chrollo-private").write_text("")
    # the git root is looked at, never passed: nothing above it counts
    assert find_project(str(deep)) is None and repo_opt_out(str(deep)) is None
    assert git_root(str(deep)) == str(repo)
    (repo / ".chrollo").mkdir()
    (repo / "a" / ".chrollo-private").write_text("")
    assert find_project(str(deep)) == str(repo)
    assert repo_opt_out(str(deep)) == str(repo / "a" / ".chrollo-private")
    # without a repository the walk goes to the root
    assert walk_up(str(tmp_path / "outer"), lambda d: d == os.path.dirname(str(tmp_path))) == os.path.dirname(str(tmp_path))


def test_no_other_module_walks_up_by_hand():
    """A ``while`` loop that climbs with os.path.dirname lives in homedir only."""
    bad = []
    for p in (ROOT / "chrollo").rglob("*.py"):
        for n in ast.walk(ast.parse(p.read_text("utf-8"))):
            if isinstance(n, ast.While) and any(
                    isinstance(c, ast.Attribute) and c.attr == "dirname" for c in ast.walk(n)):
                bad.append(f"{p.relative_to(ROOT)}:{n.lineno}")
    assert all(b.startswith("chrollo/homedir.py") for b in bad), bad
