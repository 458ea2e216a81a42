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

The IDE also keeps its chats in ``~/.config/Cursor/User/globalStorage/state.vscdb`` (SQLite, read
here read-only): ``composerData:<chat>`` (``createdAt``, ``fullConversationHeadersOnly``) and
``bubbleId:<chat>:<bubble>`` (``type`` 1 user / 2 model, ``text``, ``toolFormerData``,
``createdAt`` or ``timingInfo.clientStartTime``) in its ``cursorDiskKV`` table; older chats hold
their bubbles inline (``conversation``). A chat whose agent transcript exists is read from
the transcript only (one session, one file).

A hook payload is Cursor's when it carries Cursor's own fields (``cursor_version``, or a
``conversation_id`` with ``workspace_roots``): its session is labelled ``cursor``, not Claude Code.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re

from .common import (HookEvent, Transcript, Unit, context_of, context_reply, fill_times, hook_event, is_injected,
                     parse_time, read_jsonl, sqlite_readonly, text_of, tool_call)

NAME = "cursor"
_AGENT = ["*/agent-transcripts/*.jsonl", "*/agent-transcripts/*/*.jsonl", "*/agent-transcripts/*/subagents/*.jsonl"]
DB = "state.vscdb"
_IDE = "Cursor/User/globalStorage/" + DB
TRANSCRIPTS = ("", [*(f".cursor/projects/{p}" for p in _AGENT), f".config/{_IDE}", f"Library/Application Support/{_IDE}",
                    *_AGENT, DB, f"globalStorage/{DB}", f"User/globalStorage/{DB}"])
IMPORT_HELP = "~/.cursor/projects/*/agent-transcripts, ~/.config/Cursor/…/state.vscdb"
MAX_SESSIONS = 100000

_STAMP = re.compile(r"\s*<timestamp>(.*?)</timestamp>\s*", re.S)
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
_PROSE = re.compile(r"\w+,\s+(\w{3})\w*\s+(\d{1,2}),\s+(\d{4}),\s+(\d{1,2}):(\d{2})\s*([AP]M)"
                    r"(?:\s*\(UTC([+-]\d{1,2})(?::?(\d{2}))?\))?", re.I)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                         "nov", "dec"), 1)}


def home_dir() -> str:
    return os.path.expanduser("~")  # (its agent's transcripts in ~/.cursor, the IDE's store in ~/.config/Cursor)


def prose_time(text: str) -> dt.datetime | None:
    """``Thursday, Jul 23, 2026, 1:18 PM (UTC+9)`` → an aware datetime (None if it is not one)."""
    m = _PROSE.search(text or "")
    month = _MONTHS.get(m.group(1).lower()) if m else None
    if not month:
        return None
    try:
        hour = int(m.group(4)) % 12 + (12 if m.group(6).upper() == "PM" else 0)
        when = dt.datetime(int(m.group(3)), month, int(m.group(2)), hour, int(m.group(5)))
        if m.group(7) is None:  # (no offset written: the machine's own)
            return when.astimezone()
        sign = -1 if m.group(7).startswith("-") else 1
        offset = dt.timedelta(hours=int(m.group(7)), minutes=sign * int(m.group(8) or 0))
        return when.replace(tzinfo=dt.timezone(offset))
    except (ValueError, OverflowError, OSError):
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
    if os.path.basename(path) == DB:
        return _read_composer(path, agent_id or session_of(path)["session_id"])
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
    """``…/<slug>/agent-transcripts/[<id>/]<id>.jsonl``, or a subagent's ``<id>/subagents/<agent>.jsonl``;
    the IDE's ``state.vscdb``: every chat in it (``sessions``)."""
    if os.path.basename(path) == DB:
        return _composers(path)
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

# ----------------------------------------------------------------------------- the IDE's store

def _connect(path: str):
    """The IDE's ``state.vscdb`` (VS Code's key-value store), read-only; ValueError if it is not one."""
    return sqlite_readonly(path, {"cursorDiskKV"}, "no cursorDiskKV table: not Cursor's state.vscdb")


def _value(raw):
    try:
        value = json.loads(raw) if isinstance(raw, (str, bytes)) else None
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _composers(path: str) -> dict:
    """Every chat (``composerData:<id>``) with something said in it, oldest first — but those
    whose agent transcript Cursor also wrote (imported from there, the same session)."""
    import sqlite3

    con = _connect(path)
    try:
        rows = con.execute("SELECT key, value FROM cursorDiskKV WHERE key >= 'composerData:' "
                           "AND key < 'composerData;'").fetchall()
    except sqlite3.Error as e:
        raise ValueError(f"unreadable cursorDiskKV ({e})") from None
    finally:
        con.close()
    written = _agent_transcripts()
    found = []
    for key, raw in rows:
        cid, data = key[len("composerData:"):], _value(raw)
        if data and cid not in written and (data.get("fullConversationHeadersOnly") or data.get("conversation")):
            found.append((data.get("createdAt") if isinstance(data.get("createdAt"), (int, float)) else 0, cid))
    ids = [cid for _t, cid in sorted(found)][:MAX_SESSIONS]
    if not ids:
        raise ValueError("no Cursor chat in it")
    return {"session_id": ids[0], "sessions": ids}


def _agent_transcripts() -> set:
    """The ids of the chats whose agent transcript is in ``~/.cursor/projects``."""
    import glob

    root = os.path.join(home_dir(), ".cursor", "projects")
    return {os.path.basename(p).removesuffix(".jsonl") for p in glob.glob(os.path.join(root, "*", "agent-transcripts", "*"))}


def _read_composer(path: str, cid: str) -> Transcript:
    """One chat of the IDE: its bubbles in ``fullConversationHeadersOnly`` order (``bubbleId:<chat>:
    <bubble>`` entries; ``type`` 1 the user, 2 the model), or inline in ``conversation`` (older)."""
    import sqlite3

    tr = Transcript([], 0)
    try:
        con = _connect(path)
    except ValueError:
        tr.skipped = 1
        return tr
    try:
        row = con.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (f"composerData:{cid}",)).fetchone()
        data = _value(row[0]) if row else None
        bubbles: list = []
        if data and isinstance(data.get("fullConversationHeadersOnly"), list):
            prefix = f"bubbleId:{cid}:"
            stored = {k[len(prefix):]: _value(v) for k, v in con.execute(
                "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (prefix, prefix[:-1] + ";"))}
            for h in data["fullConversationHeadersOnly"]:
                bid = h.get("bubbleId") if isinstance(h, dict) else None
                bubbles.append((bid, stored.get(bid)))
        elif data and isinstance(data.get("conversation"), list):
            bubbles = [(b.get("bubbleId") if isinstance(b, dict) else None, b) for b in data["conversation"]]
    except sqlite3.Error:
        tr.skipped += 1
        return tr
    finally:
        con.close()
    started = (data or {}).get("createdAt")
    for i, (bid, b) in enumerate(bubbles):
        if not isinstance(b, dict):
            continue
        tr.cwd = tr.cwd or (b.get("workspaceProjectDir") if isinstance(b.get("workspaceProjectDir"), str) else None)
        text = b.get("text") if isinstance(b.get("text"), str) else ""
        timing = b.get("timingInfo") if isinstance(b.get("timingInfo"), dict) else {}
        when = parse_time(b.get("createdAt")) or parse_time(timing.get("clientStartTime")) \
            or (parse_time(started) if i == 0 else None)
        key = f"cv:{bid or i}"
        if b.get("type") == 1:
            if text.strip() and not is_injected(text):
                tr.add(Unit("user", when, [text], key), 0)
            continue
        parts: list = [text] if text.strip() and not is_injected(text) else []
        tool = b.get("toolFormerData")
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            parts.append(tool_call(tool["name"], tool.get("rawArgs") or tool.get("params")))
        if parts:
            tr.add(Unit("agent", when, parts, key), 0)
    fill_times(tr.units, path)
    return tr

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
