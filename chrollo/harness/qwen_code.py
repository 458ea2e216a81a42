"""Qwen Code: Claude-shaped hook payloads and ``~/.qwen/projects/<cwd slug>/chats/<session>.jsonl``.

Hooks live in ``settings.json`` (``UserPromptSubmit``, ``Stop`` with ``last_assistant_message``;
timeouts in milliseconds; ``SessionEnd`` does not fire in a headless ``qwen -p``). A hook's
``additionalContext`` is appended to the prompt as a part wrapped in
``<qwen:user-prompt-submit-context>``. ``UserPromptSubmit`` fires again after every tool result
with an empty ``prompt``: not the user's, so no recall and no turn. MCP servers sit in the same
``settings.json``; their tools reach the model only with ``"alwaysLoadTools": true`` (else they
hide behind its ``tool_search``). Qwen adds ``"$version"`` to settings.json on its first start.

Transcript records (Qwen's own rules, ``coherentEvidenceProvenance``): a prompt is a ``user``
record without ``subtype`` (or ``mid_turn_user_message``) whose ``provenance`` is ``real_user``;
when hooks injected text its ``systemPayload`` flags it (``hookContext``) and ``displayText``
holds what the user typed. Agent turns are ``assistant`` records (``message.parts``: text,
``functionCall``; ``thought`` parts are thinking). ``tool_result`` and ``system`` records are
never turns. Keys are record uuids.
"""
from __future__ import annotations

from .common import (HookEvent, Transcript, Unit, context_of, context_reply, first_record, home_from, hook_event,
                     is_injected, parse_time, read_jsonl, skip_patterns, tool_call)
from .common import sample_payload as sample

NAME = "qwen-code"
BINARY = "qwen"   # the harness's command (`chrollo install --all` looks for it)
SKIP = skip_patterns(("type", "tool_result"), ("type", "system"))  # never turns, most of the bytes
CONTEXT_OPEN, CONTEXT_CLOSE = "<qwen:user-prompt-submit-context>", "</qwen:user-prompt-submit-context>"
_USER_SUBTYPES = (None, "mid_turn_user_message")


def _is_context_part(part) -> bool:
    t = part.get("text") if isinstance(part, dict) else None
    return isinstance(t, str) and t.strip().startswith(CONTEXT_OPEN) and t.strip().endswith(CONTEXT_CLOSE)


def user_text(rec: dict) -> str | None:
    """What the user typed: ``systemPayload.displayText`` where hooks added context (flagged by
    ``hookContext`` or a final context part), else the text parts less a final context part."""
    msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
    parts = [p for p in msg.get("parts") or [] if isinstance(p, dict)] if isinstance(msg.get("parts"), list) else []
    payload = rec.get("systemPayload") if isinstance(rec.get("systemPayload"), dict) else None
    flagged = len(parts) > 1 and _is_context_part(parts[-1])
    if payload is not None and (isinstance(payload.get("hookContext"), str) or flagged) \
            and isinstance(payload.get("displayText"), str):
        text = payload["displayText"]
    else:
        if flagged:
            parts = parts[:-1]
        text = "\n\n".join(p["text"] for p in parts if isinstance(p.get("text"), str) and p["text"].strip()
                           and not p.get("thought") and not _is_context_part(p))
    if not text.strip() or is_injected(text):
        return None
    return text


def unit_of(rec: dict) -> Unit | None:
    t = rec.get("type")
    if rec.get("isSidechain") or not isinstance(rec.get("message"), dict):
        return None
    key, when = "q:" + str(rec.get("uuid")), parse_time(rec.get("timestamp"))
    if t == "user":
        if rec.get("subtype") not in _USER_SUBTYPES or rec.get("provenance", "real_user") != "real_user":
            return None
        text = user_text(rec)
        return Unit("user", when, [text], key) if text else None
    if t != "assistant" or rec.get("subtype") is not None:
        return None
    out: list = []
    for p in rec["message"].get("parts") or [] if isinstance(rec["message"].get("parts"), list) else []:
        if not isinstance(p, dict) or p.get("thought"):
            continue
        if isinstance(p.get("text"), str) and p["text"].strip() and not is_injected(p["text"]):
            out.append(p["text"])
        elif isinstance(p.get("functionCall"), dict):
            out.append(tool_call(p["functionCall"].get("name"), p["functionCall"].get("args")))
    return Unit("agent", when, out, key)


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    tr, bad = Transcript([], offset), [0]
    for off, rec in read_jsonl(path, offset, bad, SKIP):
        if not isinstance(rec, dict):
            continue
        tr.session_id = tr.session_id or rec.get("sessionId")
        tr.cwd = tr.cwd or (rec.get("cwd") if isinstance(rec.get("cwd"), str) else None)
        tr.add(unit_of(rec), off)
    tr.skipped = bad[0]
    return tr


def session_of(path: str) -> dict:
    """The chat's ``sessionId`` and ``cwd`` (on every record; the file is ``<sessionId>.jsonl``)."""
    rec = first_record(path) or {}
    sid = rec.get("sessionId")
    if not isinstance(sid, str):
        raise ValueError("no sessionId: not a Qwen Code chat file")
    return {"session_id": sid, "cwd": rec.get("cwd") if isinstance(rec.get("cwd"), str) else None}


def expected_events() -> dict:
    return {"userpromptsubmit": "recall", "stop": "capture", "sessionend": "catchup", "precompact": "catchup"}


def package() -> dict | None:
    """chrollo's Qwen Code extension, if installed: ``extensions/chrollo/qwen-extension.json``
    (``qwen extensions install`` copies the folder there; a linked one is named by
    ``.qwen-extension-install.json``). Its manifest names its folder ``${extensionPath}``, its
    ``hooks/hooks.json`` ``${CLAUDE_PLUGIN_ROOT}`` (the only name Qwen Code fills in there)."""
    import os

    from ..homedir import read_json
    from .common import package_record

    root = os.path.join(home_dir(), "extensions", "chrollo")
    how = read_json(os.path.join(root, ".qwen-extension-install.json"))
    if how.get("type") == "link" and isinstance(how.get("source"), str):
        root = how["source"]
    manifest = read_json(os.path.join(root, "qwen-extension.json"))
    if manifest.get("name") != "chrollo":
        return None
    return package_record("chrollo", root, manifest.get("version"), True,
                          {"${extensionPath}": root, "${CLAUDE_PLUGIN_ROOT}": root}, {},
                          "qwen extensions uninstall chrollo", mcp_file="qwen-extension.json")

# ----------------------------------------------------------------------------- profile

ALIASES = ("qwen", "qwencode", "qwen_code")
# timeouts in milliseconds (Qwen Code's unit)
EVENTS = [("UserPromptSubmit", 30000), ("Stop", 30000), ("PreCompact", 30000), ("SessionEnd", 10000)]
HOOKS, MCP = "json", "json"
# Top-level keys Qwen Code writes into settings.json itself (at its first start): uninstall gives
# the user's bytes back where nothing else changed (chrollo.install).
OWN_KEYS = ("$version",)
# Without it Qwen Code lists MCP tools only through its tool_search: the model never sees read_memory.
MCP_ENTRY = {"alwaysLoadTools": True}
TRANSCRIPTS = ("projects", ["*/chats/*.jsonl"])
HELP = "hooks and tool: ~/.qwen/settings.json   ($QWEN_HOME)"
IMPORT_HELP = "~/.qwen/projects          ($QWEN_HOME)"


def home_dir() -> str:
    return home_from("QWEN_HOME", ".qwen")


def hooks_config() -> str:
    import os

    return os.path.join(home_dir(), "settings.json")


mcp_config = hooks_config


def event_of(payload: dict, event: str | None = None) -> HookEvent:
    ev = hook_event(NAME, expected_events(), payload, event)
    if ev.action == "recall":
        typed = payload.get("submitted_prompt")
        if isinstance(typed, str) and typed.strip():
            ev.prompt = typed   # (what the transcript's displayText keeps)
        # the re-entry after a tool result: an empty prompt, not the user's
        ev.generated = not (ev.prompt or "").strip()
    return ev


def reply(text: str) -> str:
    return context_reply("UserPromptSubmit", text)


recall_text = context_of


def sample_payload(event: str, session: str, cwd: str, prompt: str, answer: str) -> dict:
    return sample(expected_events(), event, session, cwd, prompt, answer)
