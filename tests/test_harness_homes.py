"""Where each harness keeps its data: the one place (harness.home_dir) honours the harness's
own environment variable, and install, import and doctor all go through it (issue 18, item 8)."""
from __future__ import annotations

import json
import shutil

from conftest import run, run_json
from recorded import materialise

from chrollo.session import read_session


def test_gemini_cli_home_is_honoured_by_install_import_and_doctor(home, tmp_path):
    user_home, gemini_home = tmp_path / "h", tmp_path / "gh"
    user_home.mkdir()
    env = {"HOME": user_home, "GEMINI_CLI_HOME": gemini_home}
    p = run(["install", "gemini"], home, **env)
    assert p.returncode == 0, p.stderr
    settings = gemini_home / ".gemini" / "settings.json"  # Gemini reads $GEMINI_CLI_HOME/.gemini
    assert "--harness gemini" in settings.read_text()
    assert not (user_home / ".gemini").exists()
    _, report = run_json(["doctor", "--harness", "gemini"], home, **env)
    gem = report["harnesses"]["gemini"]
    assert gem["config"] == str(settings) and gem["status"] == "ok", gem
    # import (no --source) reads $GEMINI_CLI_HOME/.gemini/tmp
    src = materialise("gemini-0.61.0", tmp_path / "rec", tmp_path / "work")
    shutil.copytree(src, gemini_home / ".gemini" / "tmp")
    _, out = run_json(["import", "gemini"], home, **env)
    assert out["roots"]["gemini"] == str(gemini_home / ".gemini" / "tmp")
    assert out["imported"] == 1, out
    (f,) = (home / "memories").glob("*.md")
    assert read_session(f).meta["cwd"] == str(tmp_path / "work")  # from .project_root


def test_gemini_project_root_that_is_not_a_folder_path_is_ignored(tmp_path):
    from chrollo.harness import adapter

    chat = tmp_path / "p" / "chats" / "session-x.jsonl"
    chat.parent.mkdir(parents=True)
    chat.write_text(json.dumps({"sessionId": "s-1", "projectHash": "x"}) + "\n")
    gem = adapter("gemini")
    assert gem.session_of(str(chat)) == {"session_id": "s-1", "cwd": None}
    for bad in ("relative/path", "/a\nb", "/x" * 3000):
        (tmp_path / "p" / ".project_root").write_text(bad)
        assert gem.session_of(str(chat))["cwd"] is None
    (tmp_path / "p" / ".project_root").write_text("/home/user/project\n")
    assert gem.session_of(str(chat))["cwd"] == "/home/user/project"
