"""Continue (the VS Code/JetBrains extension and its CLI ``cn``): ``~/.continue/sessions/<id>.json``
(import only).

A session file is one JSON document, rewritten whole as the session goes on: ``{"sessionId",
"title", "workspaceDirectory", "history": [{"message": {"role", "content", "toolCalls"?},
"contextItems", …}]}``. ``content`` is a string or a list of ``{"type": "text"}`` parts;
``toolCalls`` are OpenAI-shaped (``function.name``/``arguments``); ``tool`` messages (outputs)
are not turns. Messages carry no time: ``sessions.json`` (the index beside them) gives each
session's ``dateCreated`` (epoch milliseconds, as a string), else the file's modification time.
A unit's key is its place in ``history`` with a digest of its text (an edited earlier message
is a new unit).
"""
from __future__ import annotations

import os

from .common import (Transcript, Unit, digest, fill_times, home_from, is_injected, parse_time, read_json_file,
                     text_of, tool_call)

NAME = "continue"
TRANSCRIPTS = ("sessions", ["*-*-*-*-*.json"])  # (a session is <uuid>.json; sessions.json is the index)
IMPORT_HELP = "~/.continue/sessions      ($CONTINUE_GLOBAL_DIR)"


def home_dir() -> str:
    return home_from("CONTINUE_GLOBAL_DIR", ".continue")


def _doc(path: str) -> dict:
    doc = read_json_file(path)
    return doc if isinstance(doc, dict) and isinstance(doc.get("history"), list) else {}


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    doc = _doc(path)
    tr = Transcript([], 0, skipped=0 if doc else 1)
    started = _created(path, doc.get("sessionId"))
    for i, item in enumerate(doc.get("history") or []):
        msg = item.get("message") if isinstance(item, dict) else None
        if not isinstance(msg, dict):
            continue
        text = text_of(msg.get("content"))
        if msg.get("role") == "user":
            if text and text.strip() and not is_injected(text):
                tr.add(Unit("user", started if not tr.units else None, [text], f"co:{i}:{digest(text)}"), 0)
        elif msg.get("role") == "assistant":
            parts: list = [text] if text and text.strip() and not is_injected(text) else []
            for call in msg.get("toolCalls") or []:
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict):
                    parts.append(tool_call(fn.get("name"), fn.get("arguments")))
            if parts:
                sig = digest("".join(p if isinstance(p, str) else p.render() for p in parts))
                tr.add(Unit("agent", None, parts, f"co:{i}:{sig}"), 0)
    tr.session_id, tr.cwd = doc.get("sessionId"), doc.get("workspaceDirectory")
    fill_times(tr.units, path)
    return tr


_index: dict = {}  # sessions.json read once per import, not once per session file


def _created(path: str, sid) -> object:
    """The session's ``dateCreated`` in the ``sessions.json`` beside it (None if not listed)."""
    where = os.path.join(os.path.dirname(path), "sessions.json")
    try:
        st = os.stat(where)
        stamp = (where, st.st_size, st.st_mtime_ns)
    except OSError:
        return None
    if stamp not in _index:
        index = read_json_file(where)
        _index.clear()
        _index[stamp] = {e.get("sessionId"): e.get("dateCreated") for e in (index if isinstance(index, list) else [])
                         if isinstance(e, dict) and isinstance(e.get("sessionId"), str)}
    value = _index[stamp].get(sid)
    try:
        return parse_time(int(value) if isinstance(value, str) else value)
    except ValueError:
        return parse_time(value)


def session_of(path: str) -> dict:
    read_json_file(path, why=True)  # (a file that is no JSON document says why)
    doc = _doc(path)
    sid, cwd = doc.get("sessionId"), doc.get("workspaceDirectory")
    if not isinstance(sid, str):
        raise ValueError("no sessionId and history: not a Continue session file")
    return {"session_id": sid, "cwd": cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None}
