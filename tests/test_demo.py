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


def test_installed_console_script_runs_from_anywhere(home, tmp_path):
    """The `chrollo` script of this environment (a plain `pip install .` in CI) carries its data."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    script = Path(sys.executable).with_name("chrollo")
    assert script.exists(), f"no chrollo console script next to {sys.executable}: install the package"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",) and not k.startswith("CHROLLO_")}
    env["CHROLLO_HOME"] = str(home)
    p = subprocess.run([str(script), "demo"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "$ chrollo read" in p.stdout
    # the bundled thesaurus ships too: expansion works from the installed package
    p = subprocess.run([str(script), "demo", "--keep", str(tmp_path / "s")], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=120)
    q = subprocess.run([str(script), "search", "intermittent", "--dir", str(tmp_path / "s"), "--json"],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert q.returncode == 0 and '"expanded": {"intermittent": ["flaky"]}' in q.stdout, q.stdout[:300]
