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


def _loaded(args: list, home, stdin: str | None = None, **env) -> set:
    """The modules a real `chrollo ARGS` process imported (``-X importtime``)."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "chrollo", *args], input=stdin,
                       capture_output=True, text=True, env=cli_env(home, **env), cwd=str(ROOT), timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    return {ln.split("|")[-1].strip() for ln in p.stderr.splitlines() if ln.startswith("import time:")}


def _claude_turn(sid: str, i: int, cwd: str) -> list:
    base = {"sessionId": sid, "cwd": cwd, "isSidechain": False}
    return [{**base, "type": "user", "uuid": f"u{i}", "timestamp": f"2026-11-25T09:{i:02d}:00.000Z",
             "message": {"role": "user", "content": f"step {i}: which port does the staging proxy use?"}},
            {**base, "type": "assistant", "uuid": f"a{i}", "timestamp": f"2026-11-25T09:{i:02d}:05.000Z",
             "message": {"id": f"m{i}", "role": "assistant", "content": [{"type": "text", "text": f"Port 84{i:02d}."}]}}]


# Loaded by nothing these paths need where no index exists: hashlib's OpenSSL binding (2-3 ms),
# shutil (with bz2, lzma, zlib: 2 ms), the index's modules (1 ms with array; its front door,
# chrollo/index/__init__.py, is os alone). bench/before_after.py holds search and the hooks to
# the start-up of 4f6b716, which loaded none of them.
COLD_PATH_SPARES = {"hashlib", "_hashlib", "shutil", "chrollo.index.store", "chrollo.index.terms",
                    "chrollo.index.update", "chrollo.index.plan", "chrollo.index.newest", "chrollo.index.universe",
                    "chrollo.index.build", "chrollo.index.scope"}


def test_search_and_the_hooks_load_nothing_they_do_not_use(home, tmp_path):
    vault = home / "memories"
    vault.mkdir(parents=True)
    from conftest import write_session

    write_session(vault, "s0", "2026-11-20T10:00:00", [("user", "10:00:00", "which port does the staging proxy use?"),
                                                        ("agent", "10:00:05", "The staging proxy listens on 8443.")])
    search = _loaded(["search", "staging proxy port", "--json"], home)
    assert "chrollo.retrieval.collect" in search  # (it searched)
    assert search & COLD_PATH_SPARES == set()
    prompt = json.dumps({"session_id": "s1", "prompt": "which port does the staging proxy use?",
                         "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit"})
    recall = _loaded(["hook", "UserPromptSubmit", "--harness", "claude-code"], home, prompt)
    assert "chrollo.recall" in recall
    assert recall & COLD_PATH_SPARES == set()
    transcript = tmp_path / "t.jsonl"
    sid = "0b6f7a52-7c0e-4a53-9d43-1d7f2e0c9a11"
    stop = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(tmp_path), "hook_event_name": "Stop"}
    for i in range(2):  # the first Stop, then a turn's (capture's per-turn path)
        with open(transcript, "a", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in _claude_turn(sid, i, str(tmp_path)))
        capture = _loaded(["hook", "Stop", "--harness", "claude-code"], home, json.dumps(stop))
    assert "chrollo.session" in capture and len(list(vault.glob("*.md"))) == 2  # (it wrote the turn)
    assert capture & COLD_PATH_SPARES == set()


def test_sha256_without_hashlib_is_hashlibs_digest():
    """State files are named by these keys: the cheap SHA-256 must be hashlib's, byte for byte."""
    import hashlib

    from chrollo.layout import state_key
    from chrollo.sha256 import hexdigest

    for data in (b"", b"abc", "s\u00e9ssion-\U0001f600".encode(), bytes(range(256)) * 300):
        assert hexdigest(data) == hashlib.sha256(data).hexdigest()
    assert state_key("/home/u/.chrollo/memories") == hashlib.sha256(b"/home/u/.chrollo/memories").hexdigest()[:32]


def test_sessions_loads_neither_click_nor_rich(home):
    """`chrollo sessions` (#32: its first page ≤150 ms at 250,000 sessions) parses a well-formed
    command line without click, and piped or --json prints without rich (~50 ms of imports)."""
    from conftest import write_session

    vault = home / "memories"
    write_session(vault, "s0", "2026-11-20T10:00:00", [("user", "10:00:00", "which port does the staging proxy use?")])
    for args in (["sessions"], ["sessions", "-n", "5", "--json", "--since", "7d"]):
        loaded = {m.split(".")[0] for m in _loaded(args, home)}
        assert "chrollo" in loaded and not loaded & {"click", "rich"}, args
