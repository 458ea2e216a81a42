"""GitHub Copilot CLI: camelCase hook payloads and ``~/.copilot/session-state/<id>/events.jsonl``.

Hooks: a file of chrollo's own in ``~/.copilot/hooks/`` (Copilot CLI loads every ``*.json``
there; Claude Code's nested ``{"hooks": [{"type": "command", "command", "timeout"}]}`` shape,
timeouts in seconds). Payloads are camelCase: ``sessionId``, ``cwd``, ``prompt``
(``userPromptSubmitted``), ``transcriptPath`` (``agentStop``, which carries no answer: the
transcript holds it). A ``userPromptSubmitted`` reply ``{"additionalContext": …}`` is added to
the prompt inside a ``<system_reminder>`` (the Claude-style ``hookSpecificOutput`` is not read).
MCP servers: ``~/.copilot/mcp-config.json``. ``$COPILOT_HOME`` moves the folder.

``events.jsonl``: one event a line (``type``, ``data``, ``id``, ``timestamp``). A prompt is a
``user.message``: ``data.content`` is what the user typed (``transformedContent`` adds the date
and what hooks injected); the answer is the ``assistant.message`` events (``content`` and
``toolRequests``). Hook, tool-output, usage and system-prompt events are not turns. Keys are
event ids.
"""
from __future__ import annotations

import json
import os

from .common import (HookEvent, Transcript, Unit, first_record, home_from, hook_event, is_injected, parse_time,
                     plain_id, read_jsonl, regular_file, skip_patterns, tool_call)

NAME = "copilot"
BINARY = "copilot"   # the harness's command (`chrollo install --all` looks for it)
# Its events.jsonl receives a turn only as Copilot CLI exits, after the agentStop hook: that
# hook leaves a pass behind that catches up once the file holds the turn (chrollo.capture).
TRANSCRIPT_AFTER_HOOKS = True
TAIL = 1 << 20   # bytes of the file's end transcript_written looks at
# the system prompt, tool outputs and hook records (which hold the recall text chrollo injected):
# never turns, most of the bytes
SKIP = skip_patterns(("type", "system.message"), ("type", "tool.execution_complete"), ("type", "hook.start"),
                     ("type", "hook.end"), ("type", "session.usage_record"))


def unit_of(ev: dict) -> Unit | None:
    data = ev.get("data") if isinstance(ev.get("data"), dict) else {}
    t, key, when = ev.get("type"), "cp:" + str(ev.get("id")), parse_time(ev.get("timestamp"))
    if data.get("parentToolCallId"):   # a subagent's message, not this conversation's
        return None
    if t == "user.message":
        text = data.get("content")
        if not isinstance(text, str) or not text.strip() or is_injected(text):
            return None
        return Unit("user", when, [text], key)
    if t != "assistant.message":
        return None
    parts: list = []
    text = data.get("content")
    if isinstance(text, str) and text.strip() and not is_injected(text):
        parts.append(text)
    for call in data.get("toolRequests") or [] if isinstance(data.get("toolRequests"), list) else []:
        if isinstance(call, dict):
            parts.append(tool_call(call.get("name"), call.get("arguments")))
    return Unit("agent", when, parts, key)


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    tr, bad = Transcript([], offset), [0]
    for off, ev in read_jsonl(path, offset, bad, SKIP):
        if not isinstance(ev, dict):
            continue
        if ev.get("type") in ("session.start", "session.resume") and isinstance(ev.get("data"), dict):
            d = ev["data"]
            tr.session_id = tr.session_id or d.get("sessionId")
            ctx = d.get("context") if isinstance(d.get("context"), dict) else {}
            tr.cwd = tr.cwd or (ctx.get("cwd") if isinstance(ctx.get("cwd"), str) else None)
            continue
        tr.add(unit_of(ev), off)
    tr.session_id = tr.session_id or _folder_id(path)
    tr.skipped = bad[0]
    return tr


def _folder_id(path: str) -> str | None:
    parts = path.replace("\\", "/").split("/")
    return parts[-2] if len(parts) >= 2 and parts[-1] == "events.jsonl" else None


def session_of(path: str) -> dict:
    """``session-state/<session id>/events.jsonl``; its ``session.start`` event names the folder
    the session ran in."""
    rec = first_record(path) or {}
    data = rec.get("data") if isinstance(rec.get("data"), dict) else {}
    sid = data.get("sessionId") if rec.get("type") == "session.start" else None
    sid = sid if isinstance(sid, str) else _folder_id(path)
    if not sid:
        raise ValueError("no session id: not a Copilot CLI events.jsonl")
    ctx = data.get("context") if isinstance(data.get("context"), dict) else {}
    return {"session_id": sid, "cwd": ctx.get("cwd") if isinstance(ctx.get("cwd"), str) else None}


def transcript_written(path: str, mark: str | None = None) -> bool:
    """Does ``events.jsonl`` hold the finished turn yet? Copilot CLI writes the turn's events
    only as it exits, after its ``agentStop`` hook ran: the turn is there once the record of
    that very hook call is — its ``hook.start`` holds the payload, whose ``timestamp`` is
    ``mark`` (a resumed session's file already holds the agentStop of its earlier runs); for
    ``sessionEnd`` or ``preCompact``, the record of that hook call.
    Without a mark: an ``agentStop`` record after the last prompt. (Inside a string JSON
    escapes the quotes, so text can never match.)"""
    if not os.path.lexists(path):
        return False  # (a new session's file is written as Copilot exits, too)
    if regular_file(path) is None:
        return True   # (a link, a FIFO, a path with "..": never read — nothing to wait for)
    from ..vault import open_regular

    try:  # (no link followed, no FIFO waited on: the path may have changed since)
        with open_regular(path) as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - TAIL))
            tail = fh.read()
    except OSError:
        return True   # (nothing to wait for)
    if mark:
        return mark.encode() in tail and b'agentStop' in tail
    stop = max(tail.rfind(b'"hookType":"agentStop"'), tail.rfind(b'"hookType": "agentStop"'))
    prompt = max(tail.rfind(b'"type":"user.message"'), tail.rfind(b'"type": "user.message"'))
    return stop > prompt


def expected_events() -> dict:
    return {"userpromptsubmitted": "recall", "agentstop": "capture", "precompact": "catchup",
            "sessionend": "catchup"}


# where a plugin folder or a marketplace keeps its manifest, in the order Copilot CLI looks
MARKETPLACE_FILES = ("marketplace.json", ".plugin/marketplace.json", ".github/plugin/marketplace.json",
                     ".claude-plugin/marketplace.json")
PLUGIN_FILES = (".plugin/plugin.json", "plugin.json", ".github/plugin/plugin.json", ".claude-plugin/plugin.json")
# A plugin's MCP server replaces a user's server of the same name (Copilot CLI: last loaded wins),
# so beside `chrollo install` the package's server must not stand down: it is the one offered.
PACKAGE_MCP_REPLACES_USERS = True


def package() -> dict | None:
    """chrollo's Copilot CLI plugin, if installed. From a marketplace in a local folder (this
    checkout: ``copilot plugin marketplace add <checkout>``) it is loaded live from there:
    ``settings.json`` names the marketplace's folder (``extraKnownMarketplaces``) and whether
    the plugin runs (``enabledPlugins``, ``chrollo@<marketplace>``); otherwise ``config.json``'s
    ``installedPlugins`` names its copy (``cache_path``). Its hooks name their folder
    ``$PLUGIN_ROOT`` (set for them, with ``COPILOT_PLUGIN_ROOT`` and ``CLAUDE_PLUGIN_ROOT``),
    its MCP server ``${PLUGIN_ROOT}``."""
    from ..homedir import read_json
    from .common import package_record

    base = home_dir()
    settings = read_json(os.path.join(base, "settings.json"))
    enabled = settings.get("enabledPlugins") if isinstance(settings.get("enabledPlugins"), dict) else {}
    markets = settings.get("extraKnownMarketplaces") if isinstance(settings.get("extraKnownMarketplaces"), dict) else {}
    installed = read_json(os.path.join(base, "config.json"), comments=True).get("installedPlugins")
    found = []   # (id, folder, enabled)
    for e in installed if isinstance(installed, list) else []:
        if isinstance(e, dict) and e.get("name") == "chrollo" and isinstance(e.get("cache_path"), str):
            pid = "chrollo@" + e["marketplace"] if e.get("marketplace") else "chrollo"
            found.append((pid, e["cache_path"], e.get("enabled") is not False))
    for pid, on in enabled.items():
        name, _, market = str(pid).partition("@")
        src = (markets.get(market) or {}).get("source") if isinstance(markets.get(market), dict) else None
        if name == "chrollo" and isinstance(src, dict) and src.get("source") == "directory" \
                and isinstance(src.get("path"), str) and not any(f[0] == pid for f in found):
            root = _market_plugin(src["path"], name)
            if root:
                found.append((pid, root, on is True))
    for pid, root, on in found:
        manifest = next((read_json(os.path.join(root, f)) for f in PLUGIN_FILES if os.path.isfile(os.path.join(root, f))), {})
        if manifest.get("name") == "chrollo":
            return package_record(pid, root, manifest.get("version"), on,
                                  {"${PLUGIN_ROOT}": root, "$PLUGIN_ROOT": root},
                                  {"PLUGIN_ROOT": root, "COPILOT_PLUGIN_ROOT": root, "CLAUDE_PLUGIN_ROOT": root},
                                  f"copilot plugin uninstall {pid}", mcp_file=".mcp.json")
    return None


def _market_plugin(folder: str, name: str) -> str | None:
    """The folder of plugin ``name`` in the local marketplace ``folder`` (its ``source``, a
    path inside it)."""
    from ..homedir import read_json

    for f in MARKETPLACE_FILES:
        if os.path.isfile(os.path.join(folder, f)):
            plugins = read_json(os.path.join(folder, f)).get("plugins")
            for p in plugins if isinstance(plugins, list) else []:
                if isinstance(p, dict) and p.get("name") == name and isinstance(p.get("source"), str):
                    root = os.path.normpath(os.path.join(folder, p["source"]))
                    return root if root.startswith(os.path.normpath(folder) + os.sep) else None
            return None
    return None

# ----------------------------------------------------------------------------- profile

ALIASES = ("copilot-cli", "github-copilot", "gh-copilot")
EVENTS = [("userPromptSubmitted", 30), ("agentStop", 30), ("preCompact", 30), ("sessionEnd", 10)]  # seconds
HOOKS, MCP = "json", "json"
MCP_ENTRY = {"type": "local", "tools": ["*"]}   # (what `copilot mcp add` writes for a command)
TRANSCRIPTS = ("session-state", ["*/events.jsonl"])
HELP = "hooks: ~/.copilot/hooks/chrollo.json, tool: ~/.copilot/mcp-config.json   ($COPILOT_HOME)"
IMPORT_HELP = "~/.copilot/session-state  ($COPILOT_HOME)"


def home_dir() -> str:
    return home_from("COPILOT_HOME", ".copilot")


def hooks_config() -> str:
    return os.path.join(home_dir(), "hooks", "chrollo.json")


def mcp_config() -> str:
    return os.path.join(home_dir(), "mcp-config.json")


def event_of(payload: dict, event: str | None = None) -> HookEvent:
    """The camelCase payload read as the common (Claude-shaped) one; a PascalCase hook gets the
    snake_case payload itself, and both spellings are read."""
    def get(camel, snake):
        return payload.get(camel, payload.get(snake))
    sid, named = get("sessionId", "session_id"), get("transcriptPath", "transcript_path")
    if named is None and plain_id(sid):   # (only agentStop names it; the file is always there)
        named = os.path.join(home_dir(), "session-state", sid, "events.jsonl")
    common = {"session_id": sid, "cwd": payload.get("cwd"), "prompt": payload.get("prompt"),
              "transcript_path": named, "hook_event_name": get("hookEventName", "hook_event_name")}
    ev = hook_event(NAME, expected_events(), {k: v for k, v in common.items() if v is not None}, event)
    ts = payload.get("timestamp")
    if ev.action in ("capture", "catchup") and isinstance(ts, int) and not isinstance(ts, bool):
        ev.mark = f'"timestamp":{ts}'   # (as its hook.start record holds the payload)
    return ev


def reply(text: str) -> str:
    return json.dumps({"additionalContext": text}, ensure_ascii=False) + "\n" if text else ""


def recall_text(out: str) -> str | None:
    try:
        text = json.loads(out)["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return None
    return text if isinstance(text, str) else None


def sample_payload(event: str, session: str, cwd: str, prompt: str, answer: str) -> dict:
    """A payload like Copilot CLI's; a capture event names a two-event transcript of the sample
    turn written in ``cwd`` (its ``agentStop`` carries no answer of its own)."""
    from .common import normalise_event

    base = {"sessionId": session, "timestamp": 1767261600000, "cwd": cwd}
    action = expected_events().get(normalise_event(event))
    if action == "recall":
        base["prompt"] = prompt
    elif action == "capture":
        path = os.path.join(cwd, f"copilot-sample-{session}.events.jsonl")
        events = [{"type": "user.message", "data": {"content": prompt}, "id": "sample-u",
                   "timestamp": "2026-01-01T10:00:00.000Z"},
                  {"type": "assistant.message", "data": {"content": answer, "toolRequests": []}, "id": "sample-a",
                   "timestamp": "2026-01-01T10:00:01.000Z"},
                  {"type": "hook.start", "data": {"hookType": "agentStop", "input": {"timestamp": base["timestamp"]}},
                   "id": "sample-h",
                   "timestamp": "2026-01-01T10:00:02.000Z"}]
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events))
        base.update(transcriptPath=path, stopReason="end_turn")
    return base
