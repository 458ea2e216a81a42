"""OpenHands: ``~/.openhands/conversations/<id>/events/event-<n>-<uuid>.json`` (the CLI and agent SDK),
and the older ``sessions/<id>/events/<n>.json`` (import only).

A conversation is a folder of events, one JSON file each, named in order. Current events:
``MessageEvent`` (``source`` user or agent, ``llm_message.content`` text parts) and
``ActionEvent`` (the agent's ``thought`` parts, its ``tool_name`` and ``action``: a command, a
path; ``FinishAction``'s ``message`` is an answer); observations, system prompts and
condensations are not turns. Older events: ``{"source", "action": "message"|"run"|"finish"|…,
"args"}``. The conversation is named by its first event's file (the importer's file), read
whole, keyed by the event files' names; what makes it "changed" is its events folder.
"""
from __future__ import annotations

import os
import re

from .common import Transcript, Unit, is_injected, parse_time, read_json_file, text_of, tool_call

NAME = "openhands"
TRANSCRIPTS = ("", ["conversations/*/events/event-00000-*.json", "sessions/*/events/0.json",
                    "*/events/event-00000-*.json", "*/events/0.json", "events/event-00000-*.json"])
IMPORT_HELP = "~/.openhands/conversations (and sessions)"
MAX_EVENTS = 100000
_EVENT = re.compile(r"(?:event-(\d+)-[\w-]+|(\d+))\.json")


def home_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".openhands")


def _events(path: str) -> list:
    """The conversation's event files, in order."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for n in names:
        m = _EVENT.fullmatch(n)
        if m:
            found.append((int(m.group(1) or m.group(2)), n))
    return [os.path.join(folder, n) for _i, n in sorted(found)[:MAX_EVENTS]]


def stamp(path: str) -> list:
    """What tells the importer the conversation grew: its events folder (a new event is a new file)."""
    try:
        st = os.stat(os.path.dirname(os.path.abspath(path)))
        return [st.st_mtime_ns, len(_events(path))]
    except OSError:
        return []


def _text(parts) -> str | None:
    text = text_of(parts)
    return text if text and text.strip() and not is_injected(text) else None


def _unit(ev: dict, key: str) -> Unit | None:
    when, src = parse_time(ev.get("timestamp")), ev.get("source")
    kind = ev.get("kind")
    if kind == "MessageEvent":
        msg = ev.get("llm_message")
        text = _text(msg.get("content")) if isinstance(msg, dict) else None
        if text and src == "user":
            return Unit("user", when, [text], key)
        return Unit("agent", when, [text], key) if text and src == "agent" else None
    if kind == "ActionEvent" and src == "agent":
        action = ev.get("action") if isinstance(ev.get("action"), dict) else {}
        parts: list = [t for t in [_text(ev.get("thought"))] if t]
        if action.get("kind") == "FinishAction":
            parts += [m for m in [action.get("message")] if isinstance(m, str) and m.strip()]
        elif isinstance(ev.get("tool_name"), str):
            args = {k: v for k, v in action.items() if k != "kind"}
            parts.append(tool_call(ev["tool_name"], {"path": args["path"]} if isinstance(args.get("path"), str) else args))
        return Unit("agent", when, parts, key) if parts else None
    if "action" in ev and not kind:  # the older event stream
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        action = ev.get("action")
        if action == "message":
            text = args.get("content") if isinstance(args.get("content"), str) else ev.get("message")
            if not isinstance(text, str) or not text.strip() or is_injected(text):
                return None
            return Unit("user" if src == "user" else "agent", when, [text], key) if src in ("user", "agent") else None
        if src != "agent" or action in ("system", "recall", "change_agent_state", "null"):
            return None
        if action == "finish":
            outputs = args.get("outputs") if isinstance(args.get("outputs"), dict) else {}
            said = args.get("final_thought") or outputs.get("content")
            return Unit("agent", when, [said], key) if isinstance(said, str) and said.strip() else None
        thought = args.get("thought") if isinstance(args.get("thought"), str) and args["thought"].strip() else None
        call = tool_call("shell" if action == "run" else action, args)
        return Unit("agent", when, [p for p in (thought, call) if p], key)
    return None


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    tr = Transcript([], 0)
    for p in _events(path):
        ev = read_json_file(p)
        if not isinstance(ev, dict):
            tr.skipped += 1
            continue
        tr.add(_unit(ev, f"oh:{os.path.basename(p)}"), 0)
    return tr


def session_of(path: str) -> dict:
    """The conversation is the folder above ``events/``; its folder from ``base_state.json``."""
    events = os.path.dirname(os.path.abspath(path))
    conv = os.path.dirname(events)
    if os.path.basename(events) != "events" or not isinstance(read_json_file(path, why=True), dict):
        raise ValueError("not an event of an OpenHands conversation (<id>/events/*.json)")
    state = read_json_file(os.path.join(conv, "base_state.json"))
    ws = state.get("workspace") if isinstance(state, dict) else None
    cwd = ws.get("working_dir") if isinstance(ws, dict) else None
    return {"session_id": os.path.basename(conv), "cwd": cwd if isinstance(cwd, str) and os.path.isabs(cwd) else None}
