"""Generic JSONL, for tools chrollo has no adapter for: one message per line.

Each line: ``{"role": "user"|"assistant", "content": str | [{"type": "text", "text": …}],
"timestamp": ISO-8601 or epoch seconds or milliseconds, "session_id": …}``
(``agent``/``model`` count as assistant; other roles and other keys are ignored). A file may
hold several sessions: a line belongs to its own ``session_id``, else to the last one named
above it, else to the file's name without ``.jsonl``. Keys are byte offsets.
"""
from __future__ import annotations

import os

from .common import Transcript, Unit, first_record, is_injected, parse_time, read_jsonl, text_of

NAME = "jsonl"
AGENT_ROLES = ("assistant", "agent", "model")
MAX_SESSIONS = 1000  # per file: each is read in its own pass


def _stem(path: str) -> str:
    return os.path.basename(path)[: -len(".jsonl")] if path.endswith(".jsonl") else os.path.basename(path)


def _sid(rec) -> str | None:
    sid = rec.get("session_id") if isinstance(rec, dict) else None
    return sid if isinstance(sid, str) and sid else None


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    """The units of one session of the file: ``agent_id`` names it (None: the first)."""
    want = agent_id or session_of(path)["session_id"]
    tr, bad = Transcript([], offset), [0]
    current = _owner_at(path, offset) if offset else _stem(path)
    for off, rec in read_jsonl(path, offset, bad):
        if not isinstance(rec, dict):
            continue
        current = _sid(rec) or current
        if current != want:
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


def _owner_at(path: str, offset: int) -> str:
    """Whose lines continue at ``offset``: the last session named before it."""
    current = _stem(path)
    for off, rec in read_jsonl(path, 0):
        if off >= offset:
            break
        current = _sid(rec) or current
    return current


def session_of(path: str) -> dict:
    """The file's first session, and (``sessions``) every session it holds, in order (at most
    MAX_SESSIONS; ``more`` counts the ones left out)."""
    first = first_record(path) or {}
    sessions, more = {(_sid(first) or _stem(path)): None}, 0
    for _off, rec in read_jsonl(path, 0):
        sid = _sid(rec)
        if sid and sid not in sessions:
            if len(sessions) < MAX_SESSIONS:
                sessions[sid] = None
            else:
                more += 1
    ids = list(sessions)
    return {"session_id": ids[0], "sessions": ids, "more": more}


TRANSCRIPTS = ("", ["**/*.jsonl"])  # (only ever under --source)


def expected_events() -> dict:
    return {}
