"""Crush (Charm's agent): each project's ``.crush/crush.db``, the projects listed in
``~/.local/share/crush/projects.json`` (import only).

``projects.json``: ``{"projects": [{"path", "data_dir", "last_accessed"}]}``; a project's
database is ``<data_dir>/crush.db`` (SQLite, opened read-only): ``sessions`` (``id``,
``parent_session_id``, ``title``, ``created_at`` in epoch seconds) and ``messages`` (``id``,
``session_id``, ``role``, ``parts``, ``created_at``). ``parts`` is a JSON list of ``{"type",
"data"}``: ``text`` (``data.text``), ``tool_call`` (``data.name``, ``data.input``), and
``reasoning``, ``tool_result``, ``finish``, ``binary``, ``image_url``, which are not turns
(``tool`` messages hold the results). A session's folder is the one its ``.crush`` folder is in.
"""
from __future__ import annotations

import json
import os

from .common import Transcript, Unit, is_injected, parse_time, read_json_file, sqlite_readonly, tool_call

NAME = "crush"
DB = "crush.db"
TRANSCRIPTS = ("", [DB, f"*/{DB}", f".crush/{DB}", f"*/.crush/{DB}"])  # (under --source; by default: find())
IMPORT_HELP = "the projects of ~/.local/share/crush/projects.json (<project>/.crush/crush.db)"
MAX_SESSIONS = 100000


def home_dir() -> str:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(os.path.expanduser(base), "crush")


def find(root) -> list:
    """The databases of the projects ``projects.json`` lists (when ``root`` holds it), and those
    the patterns find under ``root``."""
    from pathlib import Path

    root = Path(root)
    found = {p for pat in TRANSCRIPTS[1] for p in root.glob(pat)}
    listed = read_json_file(str(root / "projects.json"))
    projects = listed.get("projects") if isinstance(listed, dict) else None
    for p in projects if isinstance(projects, list) else []:
        data = p.get("data_dir") if isinstance(p, dict) else None
        if isinstance(data, str) and os.path.isabs(data) and "\x00" not in data:
            db = Path(data) / DB
            if os.path.lexists(db):
                found.add(db)
    return list(found)


def _connect(path: str):
    return sqlite_readonly(path, {"sessions", "messages"}, 'no sessions and messages tables: not a Crush crush.db')


def session_of(path: str) -> dict:
    import sqlite3

    con = _connect(path)
    try:
        rows = con.execute("SELECT id FROM sessions ORDER BY created_at, rowid LIMIT ?", (MAX_SESSIONS,)).fetchall()
    except sqlite3.Error as e:
        raise ValueError(f"unreadable sessions table ({e})") from None
    finally:
        con.close()
    ids = [r[0] for r in rows if isinstance(r[0], str)]
    if not ids:
        raise ValueError("no sessions in it")
    folder = os.path.dirname(os.path.abspath(path))
    cwd = os.path.dirname(folder) if os.path.basename(folder) == ".crush" else None
    return {"session_id": ids[0], "sessions": ids, "cwd": cwd}


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    import sqlite3

    tr = Transcript([], 0)
    try:
        con = _connect(path)
    except ValueError:
        tr.skipped = 1
        return tr
    try:
        rows = con.execute("SELECT id, role, parts, created_at FROM messages WHERE session_id = ? "
                           "ORDER BY created_at, rowid", (agent_id or session_of(path)["session_id"],)).fetchall()
    except sqlite3.Error:
        tr.skipped = 1
        return tr
    finally:
        con.close()
    for mid, role, raw, created in rows:
        try:
            parts = json.loads(raw)
        except (TypeError, ValueError, RecursionError):
            tr.skipped += 1
            continue
        said: list = []
        for p in parts if isinstance(parts, list) else []:
            data = p.get("data") if isinstance(p, dict) else None
            if not isinstance(data, dict):
                continue
            if p.get("type") == "text" and isinstance(data.get("text"), str) and data["text"].strip():
                if not is_injected(data["text"]):
                    said.append(data["text"])
            elif p.get("type") == "tool_call" and role == "assistant":
                said.append(tool_call(data.get("name"), data.get("input")))
        key, when = f"cr:{mid}", parse_time(created)
        if role == "user" and said:
            tr.add(Unit("user", when, ["\n\n".join(s for s in said if isinstance(s, str))], key), 0)
        elif role == "assistant" and said:
            tr.add(Unit("agent", when, said, key), 0)
    return tr
