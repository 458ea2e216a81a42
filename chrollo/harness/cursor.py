"""Cursor: its agent's transcripts ``~/.cursor/projects/<slug>/agent-transcripts/`` (import), and
its turns arriving at the Claude Code hook (Cursor runs the hooks of ``~/.claude/settings.json``).

A transcript is JSONL, one message a line: ``{"role": "user"|"assistant", "message": {"content":
[blocks]}}`` with Claude-API blocks (``text``, ``tool_use``); ``{"type": "turn_ended"}`` lines close
a turn. Files: ``<session>.jsonl`` (older), ``<session>/<session>.jsonl`` and a subagent's
``<session>/subagents/<agent>.jsonl``. Lines carry no ids and no times: a unit's key is its byte
offset (the file only grows) and its time the ``<timestamp>`` prose Cursor puts before a prompt's
``<user_query>`` (``Thursday, Jul 23, 2026, 1:18 PM (UTC+9)``), carried to the answer after it.
The prompt is the text inside ``<user_query>``; the folder is ``.workspace-trusted``'s
``workspacePath`` in the project's folder.

A hook payload is Cursor's when it carries Cursor's own fields (``cursor_version``, or a
``conversation_id`` with ``workspace_roots``): its session is labelled ``cursor``, not Claude Code.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re

from .common import (HookEvent, Transcript, Unit, context_of, context_reply, fill_times, hook_event, is_injected,
                     read_jsonl, text_of, tool_call)

NAME = "cursor"
TRANSCRIPTS = ("projects", ["*/agent-transcripts/*.jsonl", "*/agent-transcripts/*/*.jsonl",
                            "*/agent-transcripts/*/subagents/*.jsonl"])
IMPORT_HELP = "~/.cursor/projects/*/agent-transcripts (Cursor's agent, CLI and IDE)"

_STAMP = re.compile(r"\s*<timestamp>(.*?)</timestamp>\s*", re.S)
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
_PROSE = re.compile(r"\w+,\s+(\w{3})\w*\s+(\d{1,2}),\s+(\d{4}),\s+(\d{1,2}):(\d{2})\s*([AP]M)"
                    r"(?:\s*\(UTC([+-]\d{1,2})(?::?(\d{2}))?\))?", re.I)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                         "nov", "dec"), 1)}


def home_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".cursor")


def prose_time(text: str) -> dt.datetime | None:
    """``Thursday, Jul 23, 2026, 1:18 PM (UTC+9)`` → an aware datetime (None if it is not one)."""
    m = _PROSE.search(text or "")
    month = _MONTHS.get(m.group(1).lower()) if m else None
    if not month:
        return None
    try:
        hour = int(m.group(4)) % 12 + (12 if m.group(6).upper() == "PM" else 0)
        sign = -1 if (m.group(7) or "+").startswith("-") else 1
        offset = dt.timedelta(hours=int(m.group(7) or 0), minutes=sign * int(m.group(8) or 0))
        return dt.datetime(int(m.group(3)), month, int(m.group(2)), hour, int(m.group(5)),
                           tzinfo=dt.timezone(offset))
    except (ValueError, OverflowError):
        return None


def prompt_of(text: str) -> tuple:
    """A user message's text → (what the user typed, the time Cursor stamped on it)."""
    when = None
    m = _STAMP.match(text)
    if m:
        when, text = prose_time(m.group(1)), text[m.end():]
    q = _QUERY.search(text)
    return (q.group(1) if q else text.strip()), when


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    tr, bad = Transcript([], offset), [0]
    for off, rec in read_jsonl(path, offset, bad):
        if not isinstance(rec, dict) or rec.get("role") not in ("user", "assistant"):
            continue
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        if rec["role"] == "user":
            text = text_of(content, skip=("tool_result",))
            if not text or not text.strip():
                continue
            said, when = prompt_of(text)
            if said.strip() and not is_injected(said):
                tr.add(Unit("user", when, [said], f"cu:{off}"), off)
            continue
        parts: list = []
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                t = b["text"].replace("[REDACTED]", "").strip()  # (Cursor's stand-in for hidden reasoning)
                if t and not is_injected(t):
                    parts.append(t)
            elif b.get("type") == "tool_use":
                parts.append(tool_call(b.get("name"), b.get("input")))
        if parts:
            tr.add(Unit("agent", None, parts, f"ca:{off}"), off)
    fill_times(tr.units, path)
    tr.skipped = bad[0]
    return tr


def session_of(path: str) -> dict:
    """``…/<slug>/agent-transcripts/[<id>/]<id>.jsonl``, or a subagent's ``<id>/subagents/<agent>.jsonl``."""
    stem = os.path.basename(path)[: -len(".jsonl")] if path.endswith(".jsonl") else os.path.basename(path)
    parts = os.path.abspath(path).split(os.sep)
    out: dict = {"session_id": stem}
    if len(parts) >= 3 and parts[-2] == "subagents":
        out = {"session_id": f"{parts[-3]}:{stem}", "parent": parts[-3], "agent_id": stem}
    if "agent-transcripts" in parts:
        project = os.sep.join(parts[: len(parts) - parts[::-1].index("agent-transcripts") - 1])
        out["cwd"] = _workspace(project)
    return out


def _workspace(project: str) -> str | None:
    """The folder a Cursor project is (``.workspace-trusted``: ``{"workspacePath": …}``)."""
    try:
        with open(os.path.join(project, ".workspace-trusted"), "rb") as fh:
            value = json.loads(fh.read(65536)).get("workspacePath")
    except (OSError, ValueError, AttributeError, RecursionError):
        return None
    return value if isinstance(value, str) and os.path.isabs(value) else None

# ----------------------------------------------------------------------------- a Cursor turn at a Claude Code hook

# Cursor's names for the Claude Code events it fires the hooks of
_EVENTS = {"beforesubmitprompt": "userpromptsubmit", "stop": "stop", "subagentstop": "subagentstop",
           "precompact": "precompact", "sessionend": "sessionend", "sessionstart": "sessionstart"}


def sent_by_cursor(payload: dict) -> bool:
    """Is this hook payload Cursor's? Its common fields (cursor.com/docs/agent/hooks):
    ``conversation_id``, ``generation_id``, ``workspace_roots``, ``cursor_version``."""
    return isinstance(payload.get("cursor_version"), str) or (
        isinstance(payload.get("conversation_id"), str) and isinstance(payload.get("workspace_roots"), list))


def event_of(payload: dict, event: str | None, events: dict) -> HookEvent:
    """A Cursor payload at the Claude Code hook, as that hook's ``events`` handle it: the session
    is ``session_id`` (else ``conversation_id``), the folder ``cwd`` (else the first workspace root)."""
    from .common import normalise_event

    body = dict(payload)
    said = body.get("hook_event_name")
    if isinstance(said, str):
        body["hook_event_name"] = _EVENTS.get(normalise_event(said), said)
    if not isinstance(body.get("session_id"), str):
        body["session_id"] = body.get("conversation_id")
    roots = body.get("workspace_roots")
    if not isinstance(body.get("cwd"), str) and isinstance(roots, list) and roots and isinstance(roots[0], str):
        body["cwd"] = roots[0]
    if body.get("last_assistant_message") is None and isinstance(body.get("text"), str):
        body["last_assistant_message"] = body["text"]  # (afterAgentResponse's answer)
    return hook_event(NAME, events, body, event)


def reply(text: str) -> str:
    return context_reply("UserPromptSubmit", text)  # (it runs them as Claude Code hooks: their channel)


recall_text = context_of
