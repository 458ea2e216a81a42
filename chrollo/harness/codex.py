"""Codex CLI: hook payloads, the legacy ``notify`` program, ``~/.codex/sessions/**/rollout-*.jsonl``.

A user turn is what the user typed: an ``event_msg`` ``user_message`` (before 0.169) or an
``event_msg`` ``item_completed`` whose item is a ``UserMessage`` (0.169+). The ``response_item``
user messages are not read: beside the prompt they carry the injected AGENTS.md,
``<environment_context>`` and developer context, which are not turns. The agent turn
is the ``response_item`` assistant messages and tool calls that follow (``agent_message``
events repeat those messages and are ignored). Rollout lines carry no ids: a unit's key is
its byte offset, stable because rollouts are append-only.
"""
from __future__ import annotations

from .common import (HookEvent, Transcript, Unit, context_of, context_reply, first_record, home_from, hook_event,
                     is_injected, parse_time, read_jsonl, skip_patterns, text_of, tool_call)
from .common import sample_payload as sample

NAME = "codex"
BINARY = "codex"   # the harness's command (`chrollo install --all` looks for it)
# tool outputs, reasoning (encrypted) and token counts: never turns, most of the bytes
SKIP = skip_patterns(("type", "function_call_output"), ("type", "custom_tool_call_output"),
                     ("type", "reasoning"), ("type", "token_count"), ("type", "agent_reasoning"))


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    tr, bad = Transcript([], offset), [0]
    for off, rec in read_jsonl(path, offset, bad, SKIP):
        p = rec.get("payload") if isinstance(rec, dict) else None
        if isinstance(p, dict):
            tr.add(_unit(rec, p, off, tr), off)
    tr.skipped = bad[0]
    return tr


def _unit(rec: dict, p: dict, off: int, tr: Transcript) -> Unit | None:
    kind, t = rec.get("type"), p.get("type")
    when, key = parse_time(rec.get("timestamp")), f"x:{off}"
    if kind == "session_meta":
        tr.session_id, tr.cwd = p.get("id") or tr.session_id, p.get("cwd") or tr.cwd
    elif kind == "event_msg" and t in ("user_message", "item_completed"):
        item = p.get("item") if t == "item_completed" else None
        if t == "item_completed" and not (isinstance(item, dict) and item.get("type") == "UserMessage"):
            return None
        text = p.get("message") if item is None else text_of(item.get("content"))
        if isinstance(text, str) and text.strip() and not is_injected(text):
            last = tr.units[-1] if tr.units else None
            if last is not None and last.role == "user" and last.text == text.strip():
                return None  # a rollout with both events for one prompt
            return Unit("user", when, [text], key)
    elif kind == "response_item" and t == "message" and p.get("role") == "assistant":
        text = text_of(p.get("content"))
        if text and not is_injected(text):
            return Unit("agent", when, [text], key)
    elif kind == "response_item" and t in ("function_call", "custom_tool_call"):
        args = p.get("arguments") if t == "function_call" else p.get("input")
        return Unit("agent", when, [tool_call(p.get("name"), args)], key)
    elif kind == "response_item" and t == "local_shell_call":
        action = p.get("action") if isinstance(p.get("action"), dict) else {}
        return Unit("agent", when, [tool_call("shell", action)], key)
    return None


def session_of(path: str) -> dict:
    """The rollout's thread id: its ``session_meta`` line, else the file name's ending."""
    rec = first_record(path) or {}
    p = rec.get("payload") if rec.get("type") == "session_meta" else None
    if isinstance(p, dict) and isinstance(p.get("id"), str):
        return {"session_id": p["id"], "cwd": p.get("cwd")}
    return {"session_id": path.rsplit("/", 1)[-1][: -len(".jsonl")][-36:]}


def notify_payload(obj: dict) -> dict:
    """The legacy ``notify`` argument (agent-turn-complete) as a Stop-shaped payload."""
    msgs = obj.get("input-messages")
    prompt = msgs[-1] if isinstance(msgs, list) and msgs and isinstance(msgs[-1], str) else None
    return {"session_id": obj.get("thread-id"), "cwd": obj.get("cwd"), "hook_event_name": "Stop",
            "transcript_path": None, "prompt": prompt,
            "last_assistant_message": obj.get("last-assistant-message")}


def expected_events() -> dict:
    return {"userpromptsubmit": "recall", "stop": "capture", "agentturncomplete": "capture",
            "notify": "capture", "sessionstart": "catchup", "precompact": "catchup",
            "sessionend": "catchup"}


def package() -> dict | None:
    """chrollo's Codex plugin, if installed: ``config.toml``'s ``[plugins."chrollo@<marketplace>"]``
    (``enabled``), its copy in ``plugins/cache/<marketplace>/chrollo/<version>/``; its hooks name
    their folder ``$PLUGIN_ROOT``, its MCP server ``./`` (run in that folder). Codex keys the
    hooks' trust ``<id>:hooks/hooks.json:<event>:<group>:<handler>``."""
    import os
    import tomllib

    from ..homedir import read_json
    from .common import package_record

    base = home_dir()
    try:
        with open(os.path.join(base, "config.toml"), "rb") as fh:
            plugins = tomllib.load(fh).get("plugins")
    except (OSError, ValueError):
        return None
    for pid, conf in (plugins.items() if isinstance(plugins, dict) else []):
        name, _, market = pid.partition("@")
        folder = os.path.join(base, "plugins", "cache", market, name)
        if name != "chrollo" or not market or not os.path.isdir(folder):
            continue
        versions = sorted(v for v in os.listdir(folder) if os.path.isfile(os.path.join(folder, v, ".codex-plugin", "plugin.json")))
        if not versions:
            continue
        root = os.path.join(folder, versions[-1])
        version = read_json(os.path.join(root, ".codex-plugin", "plugin.json")).get("version")
        return package_record(pid, root, version, not isinstance(conf, dict) or conf.get("enabled", True) is not False,
                              {"$PLUGIN_ROOT": root, "${PLUGIN_ROOT}": root, "./": root + os.sep},
                              {"PLUGIN_ROOT": root}, f"codex plugin remove {pid}", mcp_file=".mcp.json",
                              trust_key=f"{pid}:hooks/hooks.json")
    return None

# ----------------------------------------------------------------------------- profile

ALIASES = ("codex-cli",)
EVENTS = [("UserPromptSubmit", 30), ("Stop", 30)]  # timeouts in seconds
HOOKS, MCP = "json", "toml"
MCP_ENTRY: dict = {}
TRANSCRIPTS = ("sessions", ["**/rollout-*.jsonl"])
HELP = "hooks: ~/.codex/hooks.json, tool: ~/.codex/config.toml ($CODEX_HOME)"
IMPORT_HELP = "~/.codex/sessions         ($CODEX_HOME)"
# The legacy `notify` program's event names: it is called as `hook notify` whatever the
# payload (a Stop-shaped one after notify_payload) says.
_NOTIFY = ("notify", "agentturncomplete")


def home_dir() -> str:
    return home_from("CODEX_HOME", ".codex")


def hooks_config() -> str:
    import os

    return os.path.join(home_dir(), "hooks.json")


def mcp_config() -> str:
    import os

    return os.path.join(home_dir(), "config.toml")


def event_of(payload: dict, event: str | None = None) -> HookEvent:
    if "thread-id" in payload:
        payload = notify_payload(payload)
    return hook_event(NAME, expected_events(), payload, event, loose=_NOTIFY)


def reply(text: str) -> str:
    return context_reply("UserPromptSubmit", text)


recall_text = context_of


def sample_payload(event: str, session: str, cwd: str, prompt: str, answer: str) -> dict:
    return sample(expected_events(), event, session, cwd, prompt, answer)


def doctor_check(report: dict, hooks_path: str, is_ours, pkg: dict | None = None) -> None:
    """Codex skips hooks the user has not trusted (silently, in `codex exec`): say so, and how.
    A plugin's hooks (``pkg``: chrollo's Codex package) are trusted the same way, keyed by the
    plugin's id."""
    import os

    from . import codex_hook_trust as trust

    if pkg:
        config = os.path.join(home_dir(), "config.toml")
        report["trust"] = trust.status(os.path.join(pkg["root"], "hooks", "hooks.json"), config,
                                       lambda c: "chrollo-hook" in (c or ""), key_source=pkg["trust_key"])
    else:
        config = os.path.join(os.path.dirname(hooks_path), "config.toml")
        report["trust"] = trust.status(hooks_path, config, is_ours)
    skipped = [t["event"] for t in report["trust"] if t["async"]]
    waiting = [t for t in report["trust"] if t["status"] != "trusted"]
    if skipped:   # Codex 0.171 does not wait for `async: true` command hooks: a turn can be lost
        report.update(status="broken", fix=f"Codex does not wait for hooks marked \"async\": true (a turn can be "
                      f"lost): remove it from chrollo's "
                      f"{', '.join(skipped)} hook in {os.path.join(pkg['root'], 'hooks', 'hooks.json') if pkg else hooks_path} "
                      f"(then trust them again).")
    elif waiting:
        names = ", ".join(f"{t['event']} ({t['status']})" for t in waiting)
        report.update(status="untrusted", fix=f"{trust.HOW_TO_TRUST} Waiting: {names}. "
                      f"Or add to {config}:\n{trust.toml_lines(waiting)}")


def install_note(hooks_path: str, is_ours) -> str:
    """What `chrollo install` says when Codex will not run the hooks yet ("" if it will)."""
    from .codex_hook_trust import install_note

    return install_note(hooks_path, is_ours)
