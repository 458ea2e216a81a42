"""Where memory lives (docs/design.md §3)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from chrollo import project_trust as trust
from chrollo import vault


def test_home_and_global_vault(home):
    assert vault.home() == home
    assert vault.memories_dir("/") == home / "memories"


def test_env_override(home, monkeypatch, tmp_path):
    monkeypatch.setenv("CHROLLO_MEMORIES_DIR", str(tmp_path / "elsewhere"))
    assert vault.memories_dir() == (tmp_path / "elsewhere").resolve()


def test_project_vault_walks_up_to_the_git_root(home, tmp_path):
    repo = tmp_path / "repo"
    deep = repo / "src" / "pkg"
    deep.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert vault.memories_dir(deep) == home / "memories"
    (repo / ".chrollo").mkdir()
    assert vault.memories_dir(deep) == home / "memories"  # not trusted yet (test_project_trust)
    trust.trust(str(repo))
    assert vault.memories_dir(deep) == repo.resolve() / ".chrollo" / "memories"
    # a .chrollo above the git root does not count
    outer = tmp_path / "outer"
    inner = outer / "inner"
    (outer / ".chrollo").mkdir(parents=True)
    inner.mkdir()
    subprocess.run(["git", "init", "-q", str(inner)], check=True)
    assert vault.memories_dir(inner) == home / "memories"
    # without a git repo the walk goes to the top
    plain = outer / "a" / "b"
    plain.mkdir(parents=True)
    trust.trust(str(outer))
    assert vault.memories_dir(plain) == outer.resolve() / ".chrollo" / "memories"


def test_peer_of():
    v = Path("/v")
    assert vault.peer_of(Path("/v/peers/lap/x.md"), v) == "lap"
    assert vault.peer_of(Path("/v/x.md"), v) is None
    assert vault.peer_of(Path("/v/peers/x.md"), v) is None
