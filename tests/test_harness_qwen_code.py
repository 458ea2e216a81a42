"""Qwen Code (issue 46): its hook payloads, its chat JSONL and its settings.json, as the real
binary (0.24.4) writes them — the record shapes below are lines of a real run, shortened."""
from __future__ import annotations

import json

from conftest import run
from hookkit import hook, ok, vault_files

from chrollo.capture import to_turns
from chrollo.harness import adapter, canonical

SID = "a32c90d9-1b18-4d34-ba59-a324b97e3532"


def _rec(**kw) -> dict:
    base = {"uuid": kw.pop("uuid"), "parentUuid": None, "sessionId": SID, "timestamp": kw.pop("at"),
            "cwd": "/home/user/project", "version": "0.24.4"}
    return {**base, **kw}


def chat(tmp_path, context: str = "[chrollo-recall] past turns") -> str:
    """A prompt with hook context, a shell call, its result, the answer; then a typed follow-up."""
    recs = [
        _rec(uuid="u1", at="2026-12-02T05:50:38.820Z", type="user", provenance="real_user",
             message={"role": "user", "parts": [{"text": "run: echo hi-7\nsay: done it"},
                                                {"text": f"<qwen:user-prompt-submit-context>\n{context}\n"
                                                         "</qwen:user-prompt-submit-context>"}]},
             systemPayload={"displayText": "run: echo hi-7\nsay: done it", "hookContext": context}),
        _rec(uuid="s1", at="2026-12-02T05:50:38.941Z", type="system", provenance="system",
             subtype="attribution_snapshot", systemPayload={"snapshot": {"promptCount": 1}}),
        _rec(uuid="a1", at="2026-12-02T05:50:43.247Z", type="assistant", provenance="assistant_output",
             model="fake-model", message={"role": "model", "parts": [
                 {"text": "thinking it over", "thought": True},
                 {"functionCall": {"id": "call_1", "name": "run_shell_command", "args": {"command": "echo hi-7"}}}]}),
        _rec(uuid="t1", at="2026-12-02T05:50:45.061Z", type="tool_result", provenance="tool_result",
             message={"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "run_shell_command",
                                                                      "response": {"output": "hi-7"}}}]}),
        _rec(uuid="a2", at="2026-12-02T05:50:45.501Z", type="assistant", provenance="assistant_output",
             model="fake-model", message={"role": "model", "parts": [{"text": "done it"}]}),
        _rec(uuid="u2", at="2026-12-02T05:51:00.000Z", type="user", provenance="real_user",
             message={"role": "user", "parts": [{"text": "and now without any hook"}]}),
        _rec(uuid="a3", at="2026-12-02T05:51:01.000Z", type="assistant", provenance="assistant_output",
             message={"role": "model", "parts": [{"text": "fine"}]}),
    ]
    p = tmp_path / ".qwen" / "projects" / "-home-user-project" / "chats" / f"{SID}.jsonl"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    return str(p)


def test_qwen_code_is_registered_under_its_names():
    assert canonical("qwen") == canonical("Qwen-Code") == "qwen-code"


def test_transcript_keeps_what_the_user_typed_not_the_hook_context(tmp_path):
    tr = adapter("qwen-code").read_transcript(chat(tmp_path, "a memory the hook injected"), 0)
    turns = to_turns(tr.units)
    assert [t.role for t in turns] == ["user", "agent", "user", "agent"]
    assert turns[0].parts == ["run: echo hi-7\nsay: done it"]
    text = json.dumps([str(p) for t in turns for p in t.parts])
    assert "a memory the hook injected" not in text and "user-prompt-submit-context" not in text
    assert "thinking it over" not in text and "hi-7\"" not in text.replace("echo hi-7", "")
    assert [p.render() if hasattr(p, "render") else p for p in turns[1].parts][-1] == "done it"
    assert turns[1].parts[0].name == "$" and turns[1].parts[0].arg == "echo hi-7"
    assert turns[2].parts == ["and now without any hook"]
    assert tr.session_id == SID and tr.cwd == "/home/user/project" and tr.skipped == 0


def test_a_final_context_part_without_its_flag_is_still_not_the_user_s(tmp_path):
    p = tmp_path / "c.jsonl"
    rec = _rec(uuid="u1", at="2026-12-02T05:50:38.820Z", type="user", message={"role": "user", "parts": [
        {"text": "the prompt"}, {"text": "<qwen:user-prompt-submit-context>\ninjected\n</qwen:user-prompt-submit-context>"}]})
    p.write_text(json.dumps(rec) + "\n")
    units = adapter("qwen-code").read_transcript(str(p), 0).units
    assert [u.text for u in units] == ["the prompt"]


def _payload(event: str, transcript: str, **kw) -> dict:
    return {"session_id": SID, "transcript_path": transcript, "cwd": "/home/user/project",
            "hook_event_name": event, "timestamp": "2026-12-02T05:50:38.565Z", "permission_mode": "yolo", **kw}


def test_the_empty_prompt_after_a_tool_result_recalls_nothing_and_is_no_turn(home, tmp_path):
    t = chat(tmp_path)
    ok(hook(home, "qwen-code", "UserPromptSubmit", _payload("UserPromptSubmit", t, prompt="the deploy codeword",
                                                              submitted_prompt="the deploy codeword")))
    before = {f.name: f.read_text() for f in vault_files(home)}
    p = hook(home, "qwen-code", "UserPromptSubmit", _payload("UserPromptSubmit", t, prompt=""))
    ok(p)
    assert p.stdout == b""
    assert {f.name: f.read_text() for f in vault_files(home)} == before
    assert "[User]\n\n" not in "".join(before.values())


def test_stop_captures_the_turn_verbatim(home, tmp_path):
    t = chat(tmp_path)
    ok(hook(home, "qwen-code", "Stop", _payload("Stop", t, last_assistant_message="fine", stop_hook_active=False)))
    (f,) = vault_files(home)
    text = f.read_text()
    assert 'harness: "qwen-code"' in text and "run: echo hi-7\nsay: done it\n" in text and "> fine" in text
    assert "past turns" not in text and "user-prompt-submit-context" not in text


def _settings(home, tmp_path):
    q = tmp_path / "qwen"
    return {"QWEN_HOME": q}, q / "settings.json"


def test_install_writes_ms_timeouts_and_always_loaded_tools(home, tmp_path):
    env, cfg = _settings(home, tmp_path)
    assert run(["install", "qwen-code"], home, **env).returncode == 0
    data = json.loads(cfg.read_text())
    assert data["mcpServers"]["chrollo"]["alwaysLoadTools"] is True
    hooks = {e: g[0]["hooks"][0] for e, g in data["hooks"].items()}
    assert hooks["UserPromptSubmit"]["timeout"] == 30000 and hooks["UserPromptSubmit"]["command"].endswith(
        "hook UserPromptSubmit --harness qwen-code")
    assert set(hooks) >= {"UserPromptSubmit", "Stop"}


def _qwen_started(cfg) -> None:
    """What Qwen Code does to settings.json on its first start: adds ``"$version"`` (and
    writes the file again, two-space indented)."""
    data = json.loads(cfg.read_text())
    data["$version"] = 4
    cfg.write_text(json.dumps(data, indent=2))


def test_uninstall_after_qwen_added_its_version_gives_back_the_original_bytes(home, tmp_path):
    env, cfg = _settings(home, tmp_path)
    cfg.parent.mkdir(parents=True)
    original = '{\n    "theme": "dark",  "model": {"name": "qwen3-coder"}\n}\n'
    cfg.write_text(original)
    assert run(["install", "qwen-code"], home, **env).returncode == 0
    _qwen_started(cfg)
    p = run(["uninstall", "qwen-code", "--json"], home, **env)
    assert p.returncode == 0, p.stderr
    assert cfg.read_text() == original


def test_uninstall_after_qwen_added_its_version_removes_the_file_chrollo_made(home, tmp_path):
    env, cfg = _settings(home, tmp_path)
    assert run(["install", "qwen-code"], home, **env).returncode == 0
    _qwen_started(cfg)
    assert run(["uninstall", "qwen-code"], home, **env).returncode == 0
    assert not cfg.exists()


def test_uninstall_after_the_user_edited_keeps_the_edit_and_qwen_s_version(home, tmp_path):
    env, cfg = _settings(home, tmp_path)
    cfg.parent.mkdir(parents=True)
    cfg.write_text('{"theme": "dark"}\n')
    assert run(["install", "qwen-code"], home, **env).returncode == 0
    _qwen_started(cfg)
    data = json.loads(cfg.read_text())
    data["theme"] = "light"
    cfg.write_text(json.dumps(data, indent=2))
    assert run(["uninstall", "qwen-code"], home, **env).returncode == 0
    assert json.loads(cfg.read_text()) == {"theme": "light", "$version": 4}
