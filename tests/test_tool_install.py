"""chrollo installs as a tool, the way the README says (issue 31): `uv tool install .` and
`pipx install .` from a clone, and from a git URL, each into its own folder on a PATH with no
virtualenv on it; the installed `chrollo` runs `chrollo demo`. uv and pipx are the PyPI packages
(the test extras); chrollo's dependencies come from PyPI as a user's would."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

# dependencies are downloaded once per machine, not once per test run
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "chrollo-tests"


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """This checkout as a user's clone: its files (tracked and new, not ignored), committed."""
    src = tmp_path_factory.mktemp("clone") / "chrollo"
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for f in filter(None, files):
        if (ROOT / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f, follow_symlinks=False)
    git = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": os.environ["PATH"], "HOME": str(src.parent)}
    for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "clone"]):
        subprocess.run(["git", *cmd], cwd=src, env=git, check=True, capture_output=True)
    return src


def _env(tmp_path: Path, **extra) -> dict:
    bin_dir = tmp_path / "home" / ".local" / "bin"   # where both put tools by default
    # the machine's network settings (proxies, CA certificates) stay; no virtualenv, no chrollo
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("CHROLLO_", "VIRTUAL_ENV", "PYTHON", "UV_", "PIPX_"))}
    return {**keep, "HOME": str(tmp_path / "home"), "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
            "LANG": "C.UTF-8", "NO_COLOR": "1", "CHROLLO_HOME": str(tmp_path / "chrollo-home"),
            "UV_TOOL_DIR": str(tmp_path / "uv-tools"), "UV_TOOL_BIN_DIR": str(bin_dir),
            "UV_CACHE_DIR": str(CACHE / "uv"), "UV_PYTHON_DOWNLOADS": "never",
            "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(bin_dir),
            "PIP_CACHE_DIR": str(CACHE / "pip"), **extra}


def _tool(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


@pytest.mark.parametrize("how", ["uv-clone", "uv-git", "pipx-clone", "pipx-git"])
def test_tool_install_runs_chrollo_demo(clone, tmp_path, how):
    tool, where = how.split("-")
    source = "." if where == "clone" else f"git+file://{clone}"
    cmd = ([_tool("uv"), "tool", "install", "--python", sys.executable, source] if tool == "uv"
           else [sys.executable, "-m", "pipx", "install", "--python", sys.executable, source])
    env = _env(tmp_path)
    p = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    chrollo = tmp_path / "home" / ".local" / "bin" / "chrollo"
    assert chrollo.is_file()
    assert Path(chrollo.resolve()).is_relative_to(tmp_path), chrollo.resolve()   # its own venv, not ours
    demo = subprocess.run(["chrollo", "demo"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert demo.returncode == 0, demo.stderr
    assert "chrollo demo" in demo.stdout + demo.stderr and "---" in demo.stdout
    # the packages' shim finds it there even off PATH (a harness started from a desktop launcher)
    hook = subprocess.run(["sh", str(clone / "hooks" / "claude-code" / "bin" / "chrollo-hook"), "claude-code", "mcp"],
                          input="", env={**env, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)
    assert hook.returncode == 0 and "not installed" not in hook.stderr, hook.stderr
