"""Cline (VS Code extension ``saoudrizwan.claude-dev`` and its CLI): ``tasks/<id>/ui_messages.json``
(import only). Roo Code and Kilo Code, forks of it, keep the same files (``roo_code``,
``kilo_code`` reuse this reader).

A task's ``ui_messages.json`` is one JSON array of ``ClineMessage``s, rewritten whole as the
task runs: ``{"ts": epoch ms, "type": "say"|"ask", "say"|"ask": kind, "text", "partial"?}``.
The user: ``say: task`` (the task; Roo and Kilo write it as the first ``say: text``) and
``say: user_feedback`` (a reply). The agent: ``say: text``, ``say: completion_result``, the
question of ``ask: followup`` and the answer of ``ask: plan_mode_respond`` (JSON ``question``/
``response``); ``say|ask: command`` and ``say|ask: tool`` (JSON ``{"tool", "path", …}``) are
tool lines. API bookkeeping, reasoning, command output, errors and partial messages are not
turns. The task's folder is read from the ``# Current Working Directory (…)`` line Cline puts
in the first request (``api_conversation_history.json`` beside it; Roo: ``Workspace Directory``).

The Cline CLI 3 keeps ``~/.cline/data/sessions/<id>/<id>.messages.json`` instead: ``{"sessionId",
"messages": [{"id", "role", "content": [Claude-API blocks], "ts"}]}``, the prompt wrapped in
``<user_input mode="act">``; the manifest ``<id>.json`` beside it names the ``cwd``.
"""
from __future__ import annotations

import json
import os
import re

from .common import Transcript, Unit, digest, is_injected, parse_time, read_json_file, tool_call

NAME = "cline"
EXTENSION = "saoudrizwan.claude-dev"
CLI_TASKS = ".cline/data/tasks/*/ui_messages.json"   # the Cline CLI's own home (before 3)
CLI_SESSIONS = ".cline/data/sessions/*/*.messages.json"  # (the Cline CLI 3)
IMPORT_HELP = f"~/.config/*/User/globalStorage/{EXTENSION}/tasks, ~/.cline/data/sessions and tasks"

_USER = ("task", "user_feedback")
_TEXT = ("text", "completion_result")
_JSON_TEXT = {"followup": "question", "plan_mode_respond": "response", "act_mode_respond": "response"}
_CWD = re.compile(rb"# Current (?:Working|Workspace) Directory \(([^)\n]+)\)")


def transcripts(extension: str, *cli: str) -> tuple:
    """(folder, patterns) of a Cline-family extension's tasks under the home, in every VS Code
    flavour (Code, Insiders, VSCodium, Cursor, Windsurf…), or under ``--source`` (its
    ``globalStorage/<extension>`` folder, its ``tasks`` folder or one task's)."""
    where = f"User/globalStorage/{extension}/tasks/*/ui_messages.json"
    return ("", [f".config/*/{where}", f"Library/Application Support/*/{where}", *cli,
                 "tasks/*/ui_messages.json", "*/ui_messages.json"])


TRANSCRIPTS = transcripts(EXTENSION, CLI_TASKS, CLI_SESSIONS, "*/*.messages.json")


def home_dir() -> str:
    return os.path.expanduser("~")


def _payload(text, key: str):
    try:
        value = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return None
    return value.get(key) if isinstance(value, dict) else None


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    if path.endswith(".messages.json"):
        return _read_cli_session(path)
    messages = read_json_file(path)
    tr = Transcript([], 0, skipped=0 if isinstance(messages, list) else 1)
    for i, m in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(m, dict) or m.get("partial") is True:
            continue
        kind, text = m.get("say") if m.get("type") == "say" else m.get("ask"), m.get("text")
        asked = m.get("type") == "ask"
        task = i == 0 and not asked and kind == "text"  # (Roo/Kilo: the task is the first say: text)
        when, key = parse_time(m.get("ts")), f"cl:{m.get('ts')}:{i}"
        if not asked and (kind in _USER or task):
            if isinstance(text, str) and text.strip() and not is_injected(text):
                tr.add(Unit("user", when, [text], f"{key}:{digest(text)}"), 0)
            continue
        part = None
        if not asked and kind in _TEXT or asked and kind in _JSON_TEXT:
            said = _payload(text, _JSON_TEXT[kind]) if asked else text
            if isinstance(said, str) and said.strip() and not is_injected(said):
                part = said.removesuffix("HAS_CHANGES").rstrip()
        elif kind == "command" and isinstance(text, str) and text.strip():
            part = tool_call("shell", text.removesuffix("REQ_APP").strip())
        elif kind == "tool" and isinstance(text, str):
            args = _payload(text, "tool")
            if isinstance(args, str):
                part = tool_call(args, json.loads(text))
        if part:
            sig = digest(part if isinstance(part, str) else part.render())
            tr.add(Unit("agent", when, [part], f"{key}:{sig}"), 0)
    return tr


_INPUT = re.compile(r"^\s*<user_input[^>]*>(.*)</user_input>\s*$", re.S)


def _read_cli_session(path: str) -> Transcript:
    doc = read_json_file(path)
    messages = doc.get("messages") if isinstance(doc, dict) else None
    tr = Transcript([], 0, skipped=0 if isinstance(messages, list) else 1)
    for i, m in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(m, dict) or not isinstance(m.get("content"), (list, str)):
            continue
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        when, key = parse_time(m.get("ts")), f"cs:{m.get('id') or i}"
        parts: list = []
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip():
                q = _INPUT.match(b["text"]) if m.get("role") == "user" else None
                text = q.group(1) if q else b["text"]
                if text.strip() and not is_injected(text):
                    parts.append(text)
            elif b.get("type") == "tool_use" and m.get("role") == "assistant":
                args = b.get("input")
                if isinstance(args, dict) and isinstance(args.get("commands"), list):  # (run_commands: a batch)
                    parts += [tool_call("shell", c) for c in args["commands"] if isinstance(c, str)]
                else:
                    parts.append(tool_call(b.get("name"), args))
        if parts and m.get("role") == "user":
            tr.add(Unit("user", when, ["\n\n".join(p for p in parts if isinstance(p, str))], key), 0)
        elif parts and m.get("role") == "assistant":
            tr.add(Unit("agent", when, parts, key), 0)
    return tr


def session_of(path: str) -> dict:
    """The task is its folder (``tasks/<id>/``); its working folder from the first request. A CLI 3
    session: its ``sessionId``, its folder from the manifest beside it."""
    if path.endswith(".messages.json"):
        doc = read_json_file(path, why=True)
        sid = doc.get("sessionId") if isinstance(doc, dict) else None
        if not isinstance(sid, str) or not isinstance(doc.get("messages"), list):
            raise ValueError("no sessionId and messages: not a Cline session file")
        manifest = read_json_file(path[: -len(".messages.json")] + ".json")
        cwd = manifest.get("cwd") if isinstance(manifest, dict) else None
        return {"session_id": sid, "cwd": cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None}
    folder = os.path.dirname(os.path.abspath(path))
    messages = read_json_file(path, why=True)
    if not isinstance(messages, list):
        raise ValueError("not a JSON array of messages: not a ui_messages.json")
    return {"session_id": os.path.basename(folder), "cwd": _cwd(os.path.join(folder, "api_conversation_history.json"))}


def _cwd(history: str) -> str | None:
    from ..vault import open_regular

    try:
        with open_regular(history) as fh:
            m = _CWD.search(fh.read(1 << 20))
    except OSError:
        return None
    cwd = m.group(1).decode("utf-8", "replace").replace("\\\\", "/") if m else None
    return cwd if cwd and os.path.isabs(cwd) else None
