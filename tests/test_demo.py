"""`chrollo demo` runs on the bundled sample memory with nothing else set up."""
from __future__ import annotations

from conftest import run


def test_demo_runs_searches_and_a_read(home):
    p = run(["demo"], home)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("$ chrollo search") >= 3
    assert "$ chrollo read" in p.stdout and "→" in p.stdout
    assert "peer laptop" in p.stdout  # a hit received from a mesh peer
    assert "README" in p.stdout
    assert not (home / "memories").exists()  # the demo never touches the real vault


def test_demo_keep(home, tmp_path):
    p = run(["demo", "--keep", tmp_path / "sample"], home)
    assert p.returncode == 0
    assert len(list((tmp_path / "sample").rglob("*.md"))) >= 8
