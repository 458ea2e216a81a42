"""#29: every file chrollo keeps in $CHROLLO_HOME is named once, in chrollo.layout."""
from __future__ import annotations

import ast

from conftest import ROOT, docstring_ids

LAYOUT = ROOT / "chrollo" / "layout.py"
# (file, name): the same name for something that is not in $CHROLLO_HOME
ELSEWHERE = {("chrollo/thesaurus.py", "thesaurus.json"),   # the bundled chrollo/data/thesaurus.json
             # the harnesses' own files of that name (Copilot CLI's ~/.copilot/config.json,
             # OpenCode's ~/.config/opencode/config.json), never chrollo's state
             ("chrollo/harness/copilot.py", "config.json"), ("chrollo/harness/opencode.py", "config.json")}


def _strings(path) -> list:
    """(node, its parent) for every string constant of ``path`` that is not a docstring."""
    tree = ast.parse(path.read_text("utf-8"))
    docs = docstring_ids(tree)
    parents = {id(c): n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    return [(n, parents.get(id(n))) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def _file_names() -> set:
    """The names layout spells: settings and record files, lock and record name prefixes."""
    names = set()
    for n, _ in _strings(LAYOUT):
        v = n.value
        if (len(v) > 2 and v.endswith("-")) or ("." in v.strip(".") and not v.startswith(".") and " " not in v):
            names.add(v)
    return names


def _builds_a_path(node, parent) -> bool:
    """``"state"`` handed to a path join (os.path.join, Path(...), ``/``)."""
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div):
        return True
    if isinstance(parent, ast.Call):
        f = parent.func
        return getattr(f, "attr", None) == "join" or getattr(f, "id", None) in ("Path", "join")
    return False


def test_layout_names_the_files_the_test_looks_for():
    names = _file_names()
    for expected in ("forgotten.json", "config.json", "privacy.json", "capture-", "write-",
                     "forgotten.lock", "publish.lock", "trusted-projects.json", "node.key"):
        assert expected in names


def test_no_state_path_or_state_file_name_is_built_outside_the_layout_module():
    names = _file_names()
    bad = []
    for p in sorted((ROOT / "chrollo").rglob("*.py")):
        if p == LAYOUT:
            continue
        for node, parent in _strings(p):
            v = node.value
            if (str(p.relative_to(ROOT)), v) in ELSEWHERE:
                continue
            if (v == "state" and _builds_a_path(node, parent)) or v.startswith("state/") \
                    or "/state/" in v or v in names or any(v.startswith(n) for n in names if n.endswith("-")):
                bad.append(f"{p.relative_to(ROOT)}:{node.lineno}: {v!r}")
    assert bad == []


def test_the_check_sees_a_path_built_by_hand(tmp_path):
    p = tmp_path / "m.py"
    p.write_text('import os\nx = os.path.join(home, "state", "capture")\ny = "forgotten.json"\n')
    found = [(n.value, _builds_a_path(n, par)) for n, par in _strings(p)]
    assert ("state", True) in found and "forgotten.json" in _file_names()


def test_forget_takes_the_very_locks_capture_and_the_writer_take(monkeypatch, tmp_path):
    """forget's lock order is capture's then the writer's, by the names they really use."""
    monkeypatch.setenv("CHROLLO_HOME", str(tmp_path))
    from chrollo import forget
    from chrollo.capture import Capture
    from chrollo.session import SessionMeta, SessionWriter

    sid = "a-session-id"
    cap = Capture(sid, "codex", vault=str(tmp_path / "v"))
    writer = SessionWriter(SessionMeta(session_id=sid, harness="codex", cwd=str(tmp_path),
                                       started="2026-11-25T10:00:00"), vault=tmp_path / "v")
    assert forget._locks(sid) == [cap.lock_path, str(writer._lock)]
    import chrollo.layout as layout

    assert cap.state_path in layout.session_records(sid)
    assert str(writer._record) in layout.session_records(sid)
    assert "Lock order" in layout.__doc__


def test_config_files_lists_every_settings_file_from_the_layout(tmp_path):
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "CHROLLO_HOME": str(tmp_path)}
    (tmp_path / "privacy.json").write_text("{}")
    p = subprocess.run([sys.executable, "-m", "chrollo", "config", "--files", "--json"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    rows = {r["file"]: r for r in json.loads(p.stdout)["files"]}
    for name in ("config.json", "privacy.json", "trusted-projects.json", "redact.json", "thesaurus.json"):
        assert str(tmp_path / name) in rows
    assert str(tmp_path / "mesh" / "config.json") in rows
    assert rows[str(tmp_path / "privacy.json")]["exists"] is True
    assert rows[str(tmp_path / "config.json")]["exists"] is False
    bad = subprocess.run([sys.executable, "-m", "chrollo", "config", "vault", "--files"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 2
