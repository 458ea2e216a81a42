"""Goose (Block's agent): ``~/.local/share/goose/sessions/sessions.db`` (SQLite, since 1.10) and the
older ``sessions/<id>.jsonl`` (import only).

The database: ``sessions`` (``id``, ``name``/``description``, ``working_dir``, ``created_at``) and
``messages`` (``id``, ``session_id``, ``role``, ``content_json``, ``created_timestamp`` in epoch
seconds, ``metadata_json``). A legacy file: a first line of session metadata (``working_dir``,
``description``) then one message a line (``role``, ``created``, ``content``). A message's
``content`` is a list of ``text``, ``toolRequest`` (``toolCall.value``: ``name`` as
``extension__tool``, ``arguments``), ``toolResponse`` and ``thinking`` items; a message the
user never saw (``metadata.userVisible: false``) is Goose's own. The database is opened read-only
and never written; its keys are the messages' row ids, a legacy file's its byte offsets.
"""
from __future__ import annotations

import os

from .common import (Transcript, Unit, first_record, is_injected, parse_time, read_jsonl, skip_patterns,
                     sqlite_readonly, tool_call)

NAME = "goose"
DB = "sessions.db"
TRANSCRIPTS = ("sessions", [DB, "*.jsonl"])
IMPORT_HELP = "~/.local/share/goose/sessions (sessions.db, *.jsonl)"
MAX_SESSIONS = 100000
SKIP = skip_patterns(("type", "toolResponse"))


def home_dir() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(os.path.expanduser(base), "goose")


def _unit(role, content, when, key: str, meta=None) -> Unit | None:
    if isinstance(meta, dict) and meta.get("userVisible") is False:
        return None
    parts: list = []
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "text" and isinstance(item.get("text"), str) and item["text"].strip():
            if not is_injected(item["text"]):
                parts.append(item["text"])
        elif item.get("type") == "toolRequest" and role == "assistant":
            call = item.get("toolCall")
            value = call.get("value") if isinstance(call, dict) else None
            if isinstance(value, dict) and isinstance(value.get("name"), str):
                parts.append(tool_call(value["name"].split("__")[-1], value.get("arguments")))
    if not parts:
        return None
    if role == "user":
        return Unit("user", when, ["\n\n".join(p for p in parts if isinstance(p, str))], key)
    return Unit("agent", when, parts, key) if role == "assistant" else None


def _connect(path: str):
    """The database, read-only (never written: no journal, no WAL checkpoint); ValueError if it
    is not a Goose sessions database."""
    return sqlite_readonly(path, {"sessions", "messages"}, 'no sessions and messages tables: not a Goose sessions.db')


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    if os.path.basename(path) != DB:
        return _read_legacy(path, offset)
    import json
    import sqlite3

    tr = Transcript([], 0)
    try:
        con = _connect(path)
    except ValueError:
        tr.skipped = 1
        return tr
    try:
        rows = con.execute("SELECT id, role, content_json, created_timestamp, metadata_json FROM messages "
                           "WHERE session_id = ? ORDER BY id", (agent_id or session_of(path)["session_id"],))
        for rid, role, content, created, meta in rows:
            try:
                content, meta = json.loads(content), json.loads(meta) if meta else None
            except (TypeError, ValueError, RecursionError):
                tr.skipped += 1
                continue
            tr.add(_unit(role, content, parse_time(created), f"g:{rid}", meta), 0)
    except sqlite3.Error:
        tr.skipped += 1
    finally:
        con.close()
    return tr


def _read_legacy(path: str, offset: int) -> Transcript:
    tr, bad = Transcript([], offset), [0]
    for off, rec in read_jsonl(path, offset, bad, SKIP):
        if isinstance(rec, dict) and "role" in rec:
            tr.add(_unit(rec.get("role"), rec.get("content"), parse_time(rec.get("created")), f"gl:{off}",
                         rec.get("metadata")), off)
        elif isinstance(rec, dict) and off == 0:
            tr.cwd = rec.get("working_dir") if isinstance(rec.get("working_dir"), str) else None
    tr.skipped = bad[0]
    return tr


def session_of(path: str) -> dict:
    """The database: every session in it (``sessions``, with their ``cwds``), oldest first; a
    legacy file: its name, its first line's ``working_dir``."""
    if os.path.basename(path) != DB:
        head = first_record(path, 0) or {}
        if "working_dir" not in head:
            raise ValueError("no session metadata line: not a Goose session file")
        cwd = head.get("working_dir")
        return {"session_id": os.path.basename(path).removesuffix(".jsonl"),
                "cwd": cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None}
    import sqlite3

    con = _connect(path)
    try:
        rows = con.execute("SELECT id, working_dir FROM sessions ORDER BY created_at, id LIMIT ?",
                           (MAX_SESSIONS,)).fetchall()
    except sqlite3.Error as e:
        raise ValueError(f"unreadable sessions table ({e})") from None
    finally:
        con.close()
    ids = [r[0] for r in rows if isinstance(r[0], str)]
    if not ids:
        raise ValueError("no sessions in it")
    cwds = {r[0]: r[1] for r in rows if isinstance(r[1], str) and os.path.isabs(r[1])}
    return {"session_id": ids[0], "sessions": ids, "cwds": cwds}
