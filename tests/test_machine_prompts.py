"""Prompts the harness made itself (#46): Claude Code 2.1.332 fires ``UserPromptSubmit`` also
for ``/loop`` and scheduled wakeups, background-task notifications and messages from other
sessions or channels. Recall never fires for them (the user asked nothing); capture keeps each
as a one-line marker saying what sent it, never as a [User] turn — live and imported alike.

Shapes from the 2.1.332 binary: the payload's ``source`` ("user", "sdk", "system",
"loop_wakeup", "schedule_wakeup", "poll_event"; may be absent), the transcript user record's
``origin: {"kind": …}`` and ``wakeupSource``, and the ``<cross-session-message from="…">``
envelope other sessions' messages arrive in."""
from __future__ import annotations

import json

import pytest

from hookkit import hook, ok
from test_hook_recall import PROMPT, ups, vault  # noqa: F401  (the fixture)

from chrollo.harness import adapter
from chrollo.session import read_session

SID = "9d1c7a52-3f0e-4c21-9b7e-0a5d2c1e4f60"
claude = adapter("claude-code")


@pytest.mark.parametrize("source", ["loop_wakeup", "schedule_wakeup", "system", "poll_event"])
def test_no_recall_for_a_prompt_the_harness_made(home, vault, source):  # noqa: F811
    p = hook(home, "claude-code", "UserPromptSubmit", ups(source=source))
    ok(p)
    assert p.stdout == b""
    assert "the harness's own" in (home / "logs" / "hooks.log").read_text()


@pytest.mark.parametrize("prompt", [
    '<cross-session-message from="api-refactor [a1b2]">' + PROMPT + "</cross-session-message>",
    '<teammate-message teammate_id="reviewer">' + PROMPT + "</teammate-message>",
    '<channel source="ci">' + PROMPT + "</channel>"])
def test_no_recall_for_another_sessions_message_without_a_source(home, vault, prompt):  # noqa: F811
    p = hook(home, "claude-code", "UserPromptSubmit", ups(prompt=prompt))   # (payloads may omit it)
    ok(p)
    assert p.stdout == b""
    assert "the harness's own" in (home / "logs" / "hooks.log").read_text()


@pytest.mark.parametrize("source", ["user", "sdk", None])
def test_the_users_own_prompt_still_gets_recall(home, vault, source):  # noqa: F811
    body = ups() if source is None else ups(source=source)
    p = hook(home, "claude-code", "UserPromptSubmit", body)
    ok(p)
    assert "raced the heartbeat timer" in json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]


def record(n: int, role: str, content, **extra) -> dict:
    rec = {"parentUuid": None, "isSidechain": False, "type": role, "uuid": f"u{n:04d}-0000-4000-8000-000000000000",
           "timestamp": f"2026-12-02T06:{n:02d}:00.000Z", "sessionId": SID, "cwd": "/tmp/proj",
           "message": {"role": role, "content": content}, **extra}
    if role == "assistant":
        rec["message"].update(id=f"msg_{n}", type="message", model="claude-sonnet-4-5")
        rec["message"]["content"] = [{"type": "text", "text": content}]
    return rec


def transcript(tmp_path) -> str:
    """A 2.1.332-shaped session: the user's prompt, then a /loop wakeup, another session's
    message and a channel message, each answered."""
    recs = [record(1, "user", "watch the deploy and tell me when it is green", promptSource="typed",
                   origin={"kind": "human"}),
            record(2, "assistant", "I will check the deploy every five minutes."),
            record(3, "user", "check whether the deploy is green", wakeupSource="loop_wakeup",
                   promptSource="system", textNotTyped=True),
            record(4, "assistant", "The deploy is still rolling out."),
            record(5, "user", '<cross-session-message from="api-refactor [a1b2]">the schema changed: '
                   'orders.total is now cents</cross-session-message>', origin={"kind": "peer"}),
            record(6, "assistant", "Noted: orders.total is in cents now."),
            record(7, "user", "ci finished: all 412 tests passed", origin={"kind": "channel", "server": "ci"}),
            record(8, "assistant", "CI is green, the deploy can go on.")]
    p = tmp_path / "projects" / "-tmp-proj" / f"{SID}.jsonl"
    p.parent.mkdir(parents=True)
    p.write_text("".join(json.dumps(r) + "\n" for r in recs), "utf-8")
    return str(p)


def test_machine_made_prompts_are_labelled_markers_not_user_turns(tmp_path):
    units = claude.read_transcript(transcript(tmp_path)).units
    assert [(u.role, u.text) for u in units if u.role == "user"] == [
        ("user", "watch the deploy and tell me when it is green")]
    markers = [u.parts[0].render() for u in units if u.new_turn]
    assert markers == ["<tool>loop_wakeup check whether the deploy is green</tool>",
                       "<tool>cross-session-message from api-refactor [a1b2]: the schema changed: "
                       "orders.total is now cents</tool>",
                       "<tool>channel ci finished: all 412 tests passed</tool>"]


def test_live_capture_and_import_keep_the_same_labelled_turns(home, tmp_path):
    path = transcript(tmp_path)
    ok(hook(home, "claude-code", "Stop", {"session_id": SID, "transcript_path": path, "cwd": "/tmp/proj",
                                          "hook_event_name": "Stop",
                                          "last_assistant_message": "CI is green, the deploy can go on."}))
    (live,) = (home / "memories").glob("*.md")
    turns = [(t.role, t.text, t.tools) for t in read_session(live).turns]
    assert [r for r, _t, _tools in turns] == ["user", "agent", "agent", "agent", "agent"]
    assert turns[2][2] == ["<tool>loop_wakeup check whether the deploy is green</tool>"]
    assert turns[2][1] == "The deploy is still rolling out."
    other = tmp_path / "imported"
    from recorded import import_into

    out = import_into(other, "claude-code", tmp_path / "projects")
    assert out["turns"] > 0
    (imported,) = (other / "memories").glob("*.md")
    assert imported.read_bytes() == live.read_bytes()


def test_a_framed_task_notification_keeps_only_its_summary(tmp_path):
    """2.1.332 can frame a notification ("[SYSTEM NOTIFICATION - NOT USER INPUT]"): still its
    summary only, never its result or output file."""
    text = ("[SYSTEM NOTIFICATION - NOT USER INPUT]\n<task-notification>\n<task-id>b1</task-id>\n"
            "<output-file>/tmp/claude-0/tasks/b1.output</output-file>\n<status>completed</status>\n"
            "<summary>Agent \"lint\" finished</summary>\n<result>secret-ish output</result>\n</task-notification>")
    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps(record(1, "user", text, origin={"kind": "task-notification"})) + "\n", "utf-8")
    (u,) = claude.read_transcript(str(p)).units
    assert u.role == "agent" and u.new_turn
    assert u.parts[0].render() == '<tool>task-notification Agent "lint" finished</tool>'
    assert claude.generated_prompt(text)
