"""Codex CLI runs a ``hooks.json`` hook only once the user has trusted it.

Codex (0.16x) keeps, per hook, ``[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]``
with a ``trusted_hash`` in ``config.toml`` (written when the user approves the hook in the
TUI's "Hooks need review" prompt or its ``/hooks`` view). A hook whose hash is missing or
stale is skipped silently — ``codex exec`` runs none of chrollo's hooks, and nothing is
captured — unless codex runs with ``--dangerously-bypass-hook-trust``.

The hash is codex's own (``codex-rs/hooks/src/engine/discovery.rs``, ``command_hook_hash``):
SHA-256 over the canonical JSON (keys sorted, no spaces) of
``{"event_name": <snake_case event>, "hooks": [{"type": "command", "command": …,
"timeout": <seconds, default 600>, "async": false}]}`` — the matcher and status message join
it only when set, and events without matchers (UserPromptSubmit, Stop) never have one.
Checked against codex 0.169.0: hooks trusted with these hashes fire.
"""
from __future__ import annotations

import hashlib
import json
import os

EVENT_LABELS = {"PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request",
                "PostToolUse": "post_tool_use", "PreCompact": "pre_compact", "PostCompact": "post_compact",
                "SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
                "SubagentStart": "subagent_start", "SubagentStop": "subagent_stop", "Stop": "stop"}
MATCHER_EVENTS = {"PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact",
                  "SessionStart", "SubagentStart", "SubagentStop"}
# (0.171 first asks "Trust this folder?" in a new folder, then "Hooks need review" with
# "Trust all and continue" / "Continue without trusting (hooks won't run)")
HOW_TO_TRUST = ("Codex runs hooks only after you trust them: start `codex` in a terminal (answer its "
                "\"Trust this folder?\" first) and choose \"Trust all and continue\" when it says "
                "\"Hooks need review\" (or open /hooks). "
                "Non-interactive runs (CI) can pass `codex exec --dangerously-bypass-hook-trust`.")


def hook_hash(event: str, group: dict, handler: dict) -> str:
    """The ``trusted_hash`` codex expects for one command hook (``sha256:<hex>``)."""
    timeout = handler.get("timeout")
    h = {"type": "command", "command": handler.get("command"),
         "timeout": max(1, timeout if isinstance(timeout, int) and not isinstance(timeout, bool) else 600),
         "async": bool(handler.get("async", False))}
    if isinstance(handler.get("statusMessage"), str):
        h["statusMessage"] = handler["statusMessage"]
    identity = {"event_name": EVENT_LABELS[event], "hooks": [h]}
    matcher = group.get("matcher")
    if event in MATCHER_EVENTS and isinstance(matcher, str):
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def hook_states(config_path: str) -> dict:
    """``[hooks.state]`` of codex's ``config.toml`` ({} if absent or unreadable)."""
    import tomllib

    try:
        with open(config_path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, ValueError):
        return {}
    hooks = data.get("hooks") if isinstance(data, dict) else None
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def status(hooks_path: str, config_path: str, is_ours, key_source: str | None = None) -> list:
    """Per chrollo hook in ``hooks_path``: {event, key, status, trusted_hash} where status is
    ``trusted``, ``untrusted`` (never approved), ``modified`` (approved, then changed) or
    ``disabled``; ``trusted_hash`` is what codex expects. Keys start with the hooks file's
    absolute path, or ``key_source`` (a plugin's: ``<plugin id>:hooks/hooks.json``)."""
    try:
        with open(hooks_path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return []
    hooks = data.get("hooks") if isinstance(data, dict) else None
    states = hook_states(config_path)
    key_source = key_source or os.path.abspath(hooks_path)
    out = []
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        if event not in EVENT_LABELS or not isinstance(groups, list):
            continue
        for gi, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for hi, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if not (isinstance(handler, dict) and is_ours(handler.get("command"))):
                    continue
                key = f"{key_source}:{EVENT_LABELS[event]}:{gi}:{hi}"
                want = hook_hash(event, group, handler)
                st = states.get(key) if isinstance(states.get(key), dict) else {}
                have = st.get("trusted_hash")
                s = ("disabled" if st.get("enabled") is False else "trusted" if have == want
                     else "modified" if have else "untrusted")
                out.append({"event": event, "key": key, "status": s, "trusted_hash": want,
                            "async": handler.get("async") is True})
    return out


def toml_lines(entries: list) -> str:
    """The ``config.toml`` lines that would trust ``entries`` (what the TUI writes)."""
    return "".join(f"[hooks.state.{json.dumps(e['key'])}]\ntrusted_hash = {json.dumps(e['trusted_hash'])}\n\n"
                   for e in entries).rstrip("\n")


def install_note(hooks_path: str, is_ours) -> str:
    """What `chrollo install codex` says when codex will not run the hooks yet ("" if it will);
    ``is_ours(command)``: whether a hook command is chrollo's."""
    config = os.path.join(os.path.dirname(os.path.abspath(hooks_path)), "config.toml")
    waiting = [t for t in status(hooks_path, config, is_ours) if t["status"] != "trusted"]
    if not waiting:
        return ""
    return (f"Codex will not run these hooks until you trust them ({len(waiting)} waiting). "
            + HOW_TO_TRUST + " `chrollo doctor` tells you when they are trusted.")
