"""Generic JSONL, for tools chrollo has no adapter for: one message per line.

Each line: ``{"role": "user"|"assistant", "content": str | [{"type": "text", "text": …}],
"timestamp": ISO-8601 or epoch ms, "session_id": …}`` (``agent``/``model`` count as
assistant; other roles and other keys are ignored). The session id is the first line's
``session_id``, else the file name without ``.jsonl``. Keys are byte offsets.
"""
from __future__ import annotations

import os

from .common import Transcript, Unit, first_record, is_injected, parse_time, read_jsonl, text_of

NAME = "jsonl"
AGENT_ROLES = ("assistant", "agent", "model")


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    tr, bad = Transcript([], offset), [0]
    for off, rec in read_jsonl(path, offset, bad):
        if not isinstance(rec, dict):
            continue
        role, text = rec.get("role"), text_of(rec.get("content"))
        if not text or not text.strip() or is_injected(text):
            continue
        when = parse_time(rec.get("timestamp"))
        if role == "user":
            tr.add(Unit("user", when, [text], f"j:{off}"), off)
        elif role in AGENT_ROLES:
            tr.add(Unit("agent", when, [text], f"j:{off}"), off)
    tr.skipped = bad[0]
    return tr


def session_of(path: str) -> dict:
    rec = first_record(path) or {}
    sid = rec.get("session_id")
    return {"session_id": sid if isinstance(sid, str) and sid else os.path.basename(path)[: -len(".jsonl")]}


def expected_events() -> dict:
    return {}
