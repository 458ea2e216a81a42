"""`pip install .` brings everything the README documents; a module missing anyway (a broken
install) is an error with the pip command that fixes it, never a traceback."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, cli_env


def _without(module: str, args: list, home):
    code = (f"import sys; sys.modules[{module!r}] = None; sys.argv = ['chrollo', *{args!r}]; "
            "from chrollo.entry import main; main()")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(home),
                          cwd=str(ROOT), timeout=60)


def test_a_missing_module_is_exit_1_with_a_hint(home):
    p = _without("click", ["stats"], home)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "chrollo: error: the Python package 'click' is not installed" in p.stderr
    assert "hint: pip install 'click'" in p.stderr


@pytest.mark.parametrize("module", ["cryptography", "zeroconf"])
@pytest.mark.parametrize("args", [["mesh", "init", "--name", "n1"], ["mesh", "sync", "--all"],
                                  ["mesh", "peers", "discover", "--timeout", "0.1"], ["mesh", "status"]])
def test_mesh_without_its_libraries_never_tracebacks(home, module, args):
    p = _without(module, args, home)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode in (0, 1, 2)
    if module in p.stderr:
        assert p.returncode == 1 and "pip install" in p.stderr


def test_missing_module_json_envelope(home):
    p = _without("click", ["stats", "--json"], home)
    assert p.returncode == 1
    err = json.loads(p.stdout)["error"]
    assert err["kind"] == "missing_module" and err["hint"].startswith("pip install 'click'")


def test_mesh_libraries_are_dependencies_not_extras():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = " ".join(project["dependencies"])
    assert "cryptography" in deps and "zeroconf" in deps
    assert set(project["optional-dependencies"]) <= {"test", "thesaurus"}
    assert not any(d.startswith("mcp") for d in project["dependencies"])  # the server needs no SDK


def test_the_recall_hook_imports_no_heavy_library(home, tmp_path):
    """The recall hook's cold path loads neither click, rich, the mesh libraries nor the MCP SDK
    (the MCP server's start is checked in test_mcp.py)."""
    payload = json.dumps({"session_id": "s1", "prompt": "which port does the staging proxy use?",
                          "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit"})
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "chrollo", "hook", "UserPromptSubmit",
                        "--harness", "claude-code"], input=payload, capture_output=True, text=True,
                       env=cli_env(home), cwd=str(ROOT), timeout=60)
    assert p.returncode == 0
    loaded = {ln.split("|")[-1].strip().split(".")[0] for ln in p.stderr.splitlines() if ln.startswith("import time:")}
    assert "chrollo" in loaded
    assert not loaded & {"click", "rich", "cryptography", "zeroconf", "mcp", "mcp_types", "pydantic", "anyio",
                         "detect_secrets", "nltk"}
