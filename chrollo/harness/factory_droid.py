"""Factory Droid (``droid``): ``~/.factory/sessions/<cwd with / as ->/<id>.jsonl`` (import only).

JSONL: a ``{"type": "session_start", "id", "title", "cwd", …}`` header, then ``{"type":
"message", "id", "timestamp", "parentId", "message": {"role", "content": [Claude-API blocks]}}``
lines (``session_event`` and other lines are not messages; ``<id>.settings.json`` beside the
file holds settings, not turns). A user message made only of tool results, ``<system-reminder>``
blocks, or marked ``"visibility": "llm_only"`` is context Droid adds, not something typed.
Keys are the messages' ids.
"""
from __future__ import annotations

from .common import (Transcript, Unit, first_record, is_injected, parse_time, read_jsonl, skip_patterns,
                     tool_call)

NAME = "factory-droid"
TRANSCRIPTS = ("sessions", ["*/*.jsonl", "*.jsonl"])
IMPORT_HELP = "~/.factory/sessions"
SKIP = skip_patterns(("visibility", "llm_only"))
_CONTEXT = ("<system-reminder>", "<system_reminder>")


def home_dir() -> str:
    import os

    return os.path.join(os.path.expanduser("~"), ".factory")


def _unit(rec: dict, off: int) -> Unit | None:
    msg = rec.get("message")
    if not isinstance(msg, dict) or not isinstance(msg.get("content"), (list, str)):
        return None
    content = msg["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    when, key = parse_time(rec.get("timestamp")), f"fd:{rec.get('id') or off}"
    parts: list = []
    for b in blocks:
        if not isinstance(b, dict):
            continue
        text = b.get("text")
        if b.get("type") == "text" and isinstance(text, str) and text.strip():
            if not text.lstrip().startswith(_CONTEXT) and not is_injected(text):
                parts.append(text)
        elif b.get("type") == "tool_use" and msg.get("role") == "assistant":
            parts.append(tool_call(b.get("name"), b.get("input")))
    if not parts:
        return None
    if msg.get("role") == "user":
        return Unit("user", when, ["\n\n".join(parts)], key)
    return Unit("agent", when, parts, key) if msg.get("role") == "assistant" else None


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    tr, bad = Transcript([], offset), [0]
    for off, rec in read_jsonl(path, offset, bad, SKIP):
        if not isinstance(rec, dict):
            continue
        if rec.get("type") == "session_start":
            tr.session_id, tr.cwd = rec.get("id"), rec.get("cwd")
        elif rec.get("type") == "message":
            tr.add(_unit(rec, off), off)
    tr.skipped = bad[0]
    return tr


def session_of(path: str) -> dict:
    rec = first_record(path) or {}
    if rec.get("type") != "session_start" or not isinstance(rec.get("id"), str):
        raise ValueError("no session_start line: not a Droid session file")
    return {"session_id": rec["id"], "cwd": rec.get("cwd") if isinstance(rec.get("cwd"), str) else None}
