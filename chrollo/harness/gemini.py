"""Gemini CLI: hook payloads and ``~/.gemini/tmp/<project>/chats/session-*.json[l]`` chats.

Two chat formats: a single JSON document (before v0.39, rewritten whole on every change)
and JSONL (v0.39+: a metadata line, then message lines; a message is rewritten by appending
a newer line with the same ``id``, ``{"$set": …}`` lines update metadata). User records whose
``displayContent`` holds no text (``System: Please continue.`` after a tool response) and
``[Function Response…]`` records are automatic, not prompts; ``<hook_context>`` parts are
what hooks injected and are dropped. Keys are message ids. The project folder (the session's
``cwd`` on import) is in ``<tmp>/<project>/.project_root``.
"""
from __future__ import annotations

import json
import os

from .common import (MAX_LINE, HookEvent, Transcript, Unit, context_of, context_reply, first_record, hook_event,
                     is_injected, parse_time, read_jsonl, tool_call)
from .common import sample_payload as sample

NAME = "gemini"
BINARY = "gemini"   # the harness's command (`chrollo install --all` looks for it)


def _user_text(m: dict) -> str | None:
    disp = m.get("displayContent")
    if isinstance(disp, list) and disp and not any(isinstance(p, dict) and isinstance(p.get("text"), str)
                                                   for p in disp):
        return None
    content = m.get("content")
    parts = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    texts = []
    for p in parts:
        t = p if isinstance(p, str) else p.get("text") if isinstance(p, dict) else None
        if isinstance(t, str) and t.strip() and not t.lstrip().startswith("<hook_context>"):
            texts.append(t)
    text = "\n\n".join(texts)
    if not text.strip() or text.lstrip().startswith("[Function Response") or is_injected(text):
        return None
    return text


def unit_of(m: dict) -> Unit | None:
    if not isinstance(m, dict):
        return None
    t, when, key = m.get("type"), parse_time(m.get("timestamp")), "g:" + str(m.get("id"))
    if t == "user":
        text = _user_text(m)
        return Unit("user", when, [text], key) if text else None
    if t in ("gemini", "model", "assistant"):
        parts: list = []
        c = m.get("content")
        text = c if isinstance(c, str) else "\n\n".join(
            p.get("text") for p in c if isinstance(p, dict) and isinstance(p.get("text"), str)) \
            if isinstance(c, list) else ""
        if text.strip() and not is_injected(text):
            parts.append(text)
        for call in m.get("toolCalls") or []:
            if isinstance(call, dict):
                parts.append(tool_call(call.get("name"), call.get("args")))
        return Unit("agent", when, parts, key)
    return None


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    bad = [0]
    session = None
    if path.endswith(".json"):
        try:
            doc = read_document(path)
        except (OSError, ValueError, RecursionError):
            return Transcript([], 0, skipped=1)
        if not isinstance(doc, dict):
            return Transcript([], 0, skipped=1)
        rows = [(0, m) for m in doc.get("messages") or [] if isinstance(m, dict)]
        session, offset = doc.get("sessionId"), 0
    else:
        rows = []
        for off, rec in read_jsonl(path, offset, bad):
            if isinstance(rec, dict) and "sessionId" in rec and "type" not in rec:
                session = rec.get("sessionId")
            elif isinstance(rec, dict) and "id" in rec and "type" in rec:
                rows.append((off, rec))
    latest: dict = {}
    first: dict = {}
    for off, m in rows:  # a later line with the same id is the newer version of that message
        latest[m["id"] if "id" in m else id(m)] = m
        first.setdefault(m["id"] if "id" in m else id(m), off)
    units, resume = [], offset
    for mid, m in latest.items():
        u = unit_of(m)
        if u is None:
            continue
        if u.role == "user" and not path.endswith(".json"):
            resume = first[mid]
        units.append(u)
    return Transcript(units, resume, session, None, bad[0])


def read_document(path: str):
    """A whole-JSON chat (the pre-0.39 format), parsed — refused (ValueError, and one line in
    the hook log) past MAX_LINE bytes: it can only be read whole, and a 1 GiB chat would take
    gigabytes of memory. (A JSONL chat is streamed line by line instead.)"""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_LINE:
            from ..vault import append_log

            append_log("hooks", f"gemini - skipped {path}: a {size >> 20} MiB JSON chat is over the "
                                f"{MAX_LINE >> 20} MiB that chrollo reads whole")
            raise ValueError(f"JSON chat over {MAX_LINE >> 20} MiB")
        return json.loads(fh.read(MAX_LINE + 1))


def session_of(path: str) -> dict:
    """The chat's ``sessionId`` (first line of a JSONL chat; the document of a JSON one)."""
    if path.endswith(".json"):
        doc = read_document(path)
    else:
        doc = first_record(path)
    sid = doc.get("sessionId") if isinstance(doc, dict) else None
    if not isinstance(sid, str):
        raise ValueError("no sessionId: not a Gemini CLI chat file")
    return {"session_id": sid, "cwd": chat_cwd(path)}


def chat_cwd(chat_path: str) -> str | None:
    """The folder a chat was held in: ``<tmp>/<project>/.project_root`` beside ``chats/``
    (what Gemini CLI writes there; None where an older version wrote none)."""
    p = os.path.join(os.path.dirname(os.path.dirname(chat_path)), ".project_root")
    try:
        with open(p, "rb") as fh:
            text = fh.read(4097).decode("utf-8").strip()
    except (OSError, UnicodeError):
        return None
    return text if len(text) <= 4096 and os.path.isabs(text) and "\x00" not in text and "\n" not in text else None


def expected_events() -> dict:
    return {"beforeagent": "recall", "afteragent": "capture", "sessionstart": "catchup",
            "sessionend": "catchup", "precompress": "catchup"}


def package() -> dict | None:
    """chrollo's Gemini CLI extension, if installed: ``extensions/chrollo/gemini-extension.json``,
    or, linked (``gemini extensions link``), the folder ``.gemini-extension-install.json``
    names; its ``mcpServers`` and ``hooks/hooks.json`` name that folder ``${extensionPath}``."""
    from ..homedir import read_json
    from .common import package_record

    root = os.path.join(home_dir(), "extensions", "chrollo")
    how = read_json(os.path.join(root, ".gemini-extension-install.json"))
    if how.get("type") == "link" and isinstance(how.get("source"), str):
        root = how["source"]
    manifest = read_json(os.path.join(root, "gemini-extension.json"))
    if manifest.get("name") != "chrollo":
        return None
    return package_record("chrollo", root, manifest.get("version"), True, {"${extensionPath}": root}, {},
                          "gemini extensions uninstall chrollo", mcp_file="gemini-extension.json")

# ----------------------------------------------------------------------------- profile

ALIASES = ("gemini-cli",)
EVENTS = [("BeforeAgent", 10000), ("AfterAgent", 10000), ("SessionEnd", 5000)]  # timeouts in ms
HOOKS, MCP = "json", "json"
MCP_ENTRY: dict = {}
NAMED_HOOKS = True  # each hook entry carries a "name" (chrollo-<event>)
REPLY_KEY = "prompt_response"  # where AfterAgent carries the agent's answer
TRANSCRIPTS = ("tmp", ["*/chats/session-*.json", "*/chats/session-*.jsonl"])
HELP = "hooks and tool: ~/.gemini/settings.json   ($GEMINI_CLI_HOME/.gemini)"
IMPORT_HELP = "~/.gemini/tmp             ($GEMINI_CLI_HOME/.gemini)"


def home_dir() -> str:
    """``$GEMINI_CLI_HOME/.gemini`` or ~/.gemini (Gemini CLI's variable names a home, not the folder)."""
    base = os.environ.get("GEMINI_CLI_HOME", "").strip()
    return os.path.join(os.path.expanduser(base) if base else os.path.expanduser("~"), ".gemini")


def hooks_config() -> str:
    return os.path.join(home_dir(), "settings.json")


mcp_config = hooks_config


def event_of(payload: dict, event: str | None = None) -> HookEvent:
    return hook_event(NAME, expected_events(), payload, event)


def reply(text: str) -> str:
    return context_reply("BeforeAgent", text)


recall_text = context_of


def sample_payload(event: str, session: str, cwd: str, prompt: str, answer: str) -> dict:
    return sample(expected_events(), event, session, cwd, prompt, answer, REPLY_KEY)
