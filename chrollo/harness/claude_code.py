"""Claude Code: hook payloads and ``~/.claude/projects/<slug>/<session>.jsonl`` transcripts.

Turn rules (see shared fixtures' expected/README): a user turn is a typed prompt — not a
tool result, sidechain, ``isMeta``, compact summary, slash-command echo or interrupt notice.
A prompt the harness made itself — a ``<task-notification>`` (a background task reporting
back), a ``/loop`` or scheduled wakeup, another session's ``<cross-session-message>``, a
channel message (2.1.332: the record's ``origin.kind``/``wakeupSource``, else the text's own
envelope) — is no user turn either: a one-line marker naming what sent it opens an agent block.
Record types chrollo does not know are skipped.
Every non-sidechain assistant record until the next prompt belongs to the agent turn;
records sharing a ``message.id`` are one message (keys are per record, so a record that
arrives late after a lagging ``Stop`` is still picked up). Subagents: the records with
``isSidechain`` (and the subagent's ``agentId`` when records carry one), in their own file.
"""
from __future__ import annotations

from .common import (HookEvent, Transcript, Unit, context_of, context_reply, first_record, home_from, hook_event,
                     is_injected, parse_time, read_jsonl, skip_patterns, text_of, tool_call)
from .common import sample_payload as sample

NAME = "claude-code"
BINARY = "claude"   # the harness's command (`chrollo install --all` looks for it)
# `claude -p` may write a new session's turn (even create its transcript) only after the Stop
# hook has returned: waiting inside the hook cannot see it, so capture leaves the turn to the
# next pass that can (chrollo.capture.settle).
TRANSCRIPT_AFTER_STOP = True
# tool results (user records), progress records and (2.1.330+) the API request copies: never
# turns, and the bulk of the bytes. Every other record type that is not user/assistant
# (attachment, atis-latch, cost-state, tools-used, system, …) is parsed and ignored.
SKIP = skip_patterns(("type", "tool_result"), ("type", "progress"), ("type", "api-request"),
                     ("type", "api-request-blob"), ("type", "api-request-shape"))
# What the harness itself sends as a "prompt": a background task (2.1.330: subagents run in the
# background) reporting back. Not something the user said; kept as a one-line marker that
# starts an agent block of its own (the same live and imported).
NOTIFICATION = "<task-notification>"
# 2.1.332's other machine-made prompts. The UserPromptSubmit payload's `source` says who wrote
# it ("user" typed, "sdk" from `-p`; these are the harness's own — "system" covers peer and
# channel messages, task notifications, auto-continuation; payloads may omit it), the
# transcript's user record its `origin.kind` or `wakeupSource`, and some carry their envelope
# in the text (also when neither field is there).
MACHINE_SOURCES = ("system", "loop_wakeup", "schedule_wakeup", "poll_event")
MACHINE_ORIGINS = ("task-notification", "peer", "channel", "auto-continuation", "coordinator",
                   "observer-activity", "scheduled-trigger")
ENVELOPES = {NOTIFICATION: "task-notification", "[SYSTEM NOTIFICATION - NOT USER INPUT]": "task-notification",
             "<cross-session-message": "cross-session-message",
             "<teammate-message": "teammate-message", "<channel ": "channel", "<channel>": "channel"}
# Prompt-looking records that are not something the user typed.
_NOT_PROMPTS = ("<command-name>", "<command-message>", "<local-command-stdout>",
                "<local-command-stderr>", "<local-command-caveat>", "<system-reminder>",
                "[Request interrupted by user", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
                "<user-prompt-submit-hook>", "Caveat: The messages below were generated")


def units_of(rec: dict, off: int) -> Unit | None:
    t = rec.get("type")
    msg = rec.get("message")
    if t not in ("user", "assistant") or not isinstance(msg, dict):
        return None
    if rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isVisibleInTranscriptOnly"):
        return None
    if rec.get("isApiErrorMessage"):  # "API Error: 400 …" written by Claude Code, not the model
        return None
    key = "c:" + str(rec.get("uuid") or off)
    when = parse_time(rec.get("timestamp"))
    if t == "user":
        text = text_of(msg.get("content"), skip=("tool_result",))
        if text is None or not text.strip():
            return None
        s = text.lstrip()
        label = machine_label(rec, s)
        if label:
            return Unit("agent", when, [machine_marker(label, s)], key, new_turn=True)
        if s.startswith(_NOT_PROMPTS) or is_injected(s):
            return None
        return Unit("user", when, [text], key)
    parts: list = []
    content = msg.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            if b["text"].strip() and not is_injected(b["text"]):
                parts.append(b["text"])
        elif b.get("type") in ("tool_use", "server_tool_use"):
            parts.append(tool_call(b.get("name"), b.get("input")))
    return Unit("agent", when, parts, key)


def generated_prompt(prompt, source=None) -> bool:
    """A ``UserPromptSubmit`` prompt the harness generated (a task notification, a ``/loop``
    or scheduled wakeup, another session's or a channel's message): no recall for it and no
    [User] turn; the transcript pass that follows records its marker."""
    if isinstance(source, str) and source in MACHINE_SOURCES:
        return True
    return isinstance(prompt, str) and prompt.lstrip().startswith(tuple(ENVELOPES))


def machine_label(rec: dict, text: str) -> str | None:
    """What made a transcript's user record, when it is not the user (None: the user typed it)."""
    origin = rec.get("origin")
    kind = origin.get("kind") if isinstance(origin, dict) else None
    if kind == "task-notification":
        return "task-notification"
    wake = rec.get("wakeupSource")
    if isinstance(wake, str) and wake in ("loop_wakeup", "schedule_wakeup"):
        return wake
    envelope = next((label for tag, label in ENVELOPES.items() if text.startswith(tag)), None)
    if envelope:
        return envelope
    return kind if isinstance(kind, str) and kind in MACHINE_ORIGINS else None


def machine_marker(label: str, text: str):
    """The one-line marker of a machine-made prompt: a task notification's summary (else its
    status), never its result or output-file path; another session's message with its sender;
    else the text without its envelope's tags (cut to a tool line's length)."""
    import re

    if label == "task-notification" and NOTIFICATION in text:
        return notification_marker(text)
    sender = re.match(r'<[\w-]+\s[^>]*?\bfrom(?:-session)?="([^"]*)"', text)
    body = re.sub(r"</?[A-Za-z][\w-]*(?:\s[^>]*)?>", " ", text)
    return tool_call(label, (f"from {sender.group(1)}: " if sender else "") + body)


def notification_marker(text: str):
    """``<task-notification>…`` → one tool line: its summary (else its status)."""
    import re

    m = re.search(r"<summary>(.*?)</summary>", text, re.S) or re.search(r"<status>(.*?)</status>", text, re.S)
    return tool_call("task-notification", m.group(1) if m else "")


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    """Units of the main conversation, or of the subagent ``agent_id`` (its sidechain records;
    ``"*"``: every sidechain record, for old transcripts whose records carry no ``agentId``)."""
    sidechain = agent_id is not None
    tr, bad = Transcript([], offset), [0]
    for off, rec in read_jsonl(path, offset, bad, SKIP):
        if not isinstance(rec, dict):
            continue
        tr.session_id = tr.session_id or rec.get("sessionId")
        tr.cwd = tr.cwd or rec.get("cwd")
        if bool(rec.get("isSidechain")) != sidechain:
            tr.sidechains = tr.sidechains or not sidechain
            continue
        if sidechain and agent_id != "*" and rec.get("agentId") not in (None, agent_id):
            continue
        tr.add(units_of(rec, off), off)
    tr.skipped = bad[0]
    return tr


COMPACTION = "acompact-"  # the agent id Claude Code gives /compact's summary agent


def left_out(agent_id) -> str | None:
    """Why a subagent is not kept (None: it is): /compact's summary agent is Claude Code
    prompting itself ("Your task is to create a detailed summary…"), not a conversation —
    left out by live capture and import alike (some versions write its transcript, most not)."""
    if isinstance(agent_id, str) and agent_id.startswith(COMPACTION):
        return "the /compact summary agent (not a conversation)"
    return None


def session_of(path: str) -> dict:
    """Which session a transcript file holds: ``<projects>/<slug>/<session>.jsonl``, or a
    subagent's ``<projects>/<slug>/<session>/subagents/agent-<id>.jsonl``."""
    import os

    stem = os.path.basename(path)[: -len(".jsonl")]
    parts = path.replace("\\", "/").split("/")
    if len(parts) >= 3 and parts[-2] == "subagents" and stem.startswith("agent-"):
        parent, agent = parts[-3], stem[len("agent-"):]
        return {"session_id": f"{parent}:{agent}", "parent": parent, "agent_id": agent}
    rec = first_record(path) or {}
    return {"session_id": stem if rec.get("sessionId") in (None, stem) else rec["sessionId"]}


def expected_events() -> dict:
    """Event name (normalised) → what chrollo does with it."""
    return {"userpromptsubmit": "recall", "stop": "capture", "subagentstop": "subagent",
            "precompact": "catchup", "sessionend": "catchup", "sessionstart": "catchup"}


def package() -> dict | None:
    """chrollo's Claude Code plugin, if installed: ``plugins/installed_plugins.json`` names its
    folder (id ``chrollo@<marketplace>``), ``settings.json``'s ``enabledPlugins`` whether it runs;
    its files name their folder ``${CLAUDE_PLUGIN_ROOT}``."""
    import os

    from ..homedir import read_json
    from .common import package_record

    base = home_dir()
    installed = read_json(os.path.join(base, "plugins", "installed_plugins.json")).get("plugins")
    for pid, entries in (installed.items() if isinstance(installed, dict) else []):
        if pid.split("@", 1)[0] != "chrollo" or not isinstance(entries, list) or not entries \
                or not isinstance(entries[0], dict) or not isinstance(entries[0].get("installPath"), str):
            continue
        root = entries[0]["installPath"]
        enabled = read_json(os.path.join(base, "settings.json")).get("enabledPlugins")
        return package_record(pid, root, entries[0].get("version"),
                              isinstance(enabled, dict) and enabled.get(pid) is True,
                              {"${CLAUDE_PLUGIN_ROOT}": root}, {"CLAUDE_PLUGIN_ROOT": root},
                              f"claude plugin uninstall {pid}", mcp_file=".mcp.json")
    return None

# ----------------------------------------------------------------------------- profile

ALIASES = ("claude", "claudecode", "claude_code")
# Install's events and timeouts (seconds). Recall runs in ~0.1-0.4 s; a timeout only bounds a
# pathological case, and a hook that times out is simply ignored.
EVENTS = [("UserPromptSubmit", 30), ("Stop", 30), ("SubagentStop", 30), ("PreCompact", 30), ("SessionEnd", 10)]
HOOKS, MCP = "json", "json"
MCP_ENTRY = {"type": "stdio"}  # (what Claude Code's own `claude mcp add` writes)
TRANSCRIPTS = ("projects", ["*/*.jsonl", "*/*/subagents/agent-*.jsonl"])
HELP = "hooks: ~/.claude/settings.json, tool: ~/.claude.json   ($CLAUDE_CONFIG_DIR)"
IMPORT_HELP = "~/.claude/projects        ($CLAUDE_CONFIG_DIR)"


def home_dir() -> str:
    return home_from("CLAUDE_CONFIG_DIR", ".claude")


def hooks_config() -> str:
    import os

    return os.path.join(home_dir(), "settings.json")


def mcp_config() -> str:
    """``$CLAUDE_CONFIG_DIR/.claude.json``, else ``~/.claude.json`` (not inside ~/.claude)."""
    import os

    d = os.environ.get("CLAUDE_CONFIG_DIR")
    return os.path.join(os.path.expanduser(d), ".claude.json") if d else os.path.join(os.path.expanduser("~"), ".claude.json")


def event_of(payload: dict, event: str | None = None) -> HookEvent:
    from . import cursor

    if cursor.sent_by_cursor(payload):  # Cursor runs these hooks too: its turn is labelled cursor
        return cursor.event_of(payload, event, expected_events())
    ev = hook_event(NAME, expected_events(), payload, event)
    ev.generated = ev.action == "recall" and generated_prompt(ev.prompt, payload.get("source"))
    return ev


def reply(text: str) -> str:
    return context_reply("UserPromptSubmit", text)


recall_text = context_of


def sample_payload(event: str, session: str, cwd: str, prompt: str, answer: str) -> dict:
    return sample(expected_events(), event, session, cwd, prompt, answer)
