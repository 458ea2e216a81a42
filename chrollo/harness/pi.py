"""pi: chrollo's own shim payloads (hooks/pi) and ``~/.pi/agent/sessions/--<cwd>--/*.jsonl``.

Session files are trees (``id``/``parentId``); every branch is kept, in file order — an
abandoned branch was still a conversation that happened. A user turn is a ``message`` entry
with role ``user``; the agent turn is the assistant messages after it (``toolResult``,
``bashExecution`` — a shell command the user ran with ``!`` — and ``custom_message`` entries
are not turns, nor are assistant messages whose ``stopReason`` is ``error`` or ``aborted``:
attempts pi dropped). ``agent_end`` carries the same message objects, so a unit's key is built
from the message itself (role, timestamp, content digest) and matches in both.

A run an extension started with a message (``pi.sendMessage(…, {triggerTurn: true})``: since
1.2 ``before_agent_start`` fires for it with ``messageType: "custom"`` and no prompt) has no
user turn: the ``custom_message`` entry that started it — one an assistant message follows with
no user message between — becomes a one-line marker naming its ``customType``, opening the agent
block of its reply (from the transcript only, keyed by the entry's id: live = import). System
messages (``role: "system"``: the prompt and tool loadout, 0.86) and ``context_edit`` entries (0.87:
what later requests see; the conversation as it happened is kept) are never turns.
"""
from __future__ import annotations

from .common import (HookEvent, Transcript, Unit, digest, extension_command, first_record, home_from, hook_event,
                     is_injected, normalise_event, parse_time, read_jsonl, shipped_extension, skip_patterns, text_of,
                     tool_call)
from .common import sample_payload as sample

NAME = "pi"
BINARY = "pi"   # the harness's command (`chrollo install --all` looks for it)
SKIP = skip_patterns(("role", "toolResult"))  # tool outputs: never turns
# An attempt cut mid-stream (pi retries it) or stopped by the user: its partial text is not an
# answer, live or imported.
NOT_ANSWERS = ("error", "aborted")
RECALL_TYPE = "chrollo-recall"   # the customType of the recall message the extension returns


def unit_of(m: dict) -> Unit | None:
    if not isinstance(m, dict):
        return None
    role, when = m.get("role"), parse_time(m.get("timestamp"))
    content = m.get("content")
    if role == "user":
        text = text_of(content)
        if not text or not text.strip() or is_injected(text):
            return None
        return Unit("user", when, [text], f"p:u:{m.get('timestamp')}:{digest(text)}")
    if role != "assistant" or m.get("stopReason") in NOT_ANSWERS:
        return None
    parts: list = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text" and isinstance(b.get("text"), str) and b["text"].strip():
            if not is_injected(b["text"]):
                parts.append(b["text"])
        elif b.get("type") == "toolCall":
            parts.append(tool_call(b.get("name"), b.get("arguments")))
    sig = digest("".join(p if isinstance(p, str) else p.render() for p in parts))
    return Unit("agent", when, parts, f"p:a:{m.get('timestamp')}:{sig}")


def message_units(messages) -> list:
    """``agent_end``'s ``messages`` as units (a non-list yields none)."""
    if not isinstance(messages, list):
        return []
    return [u for u in map(unit_of, messages) if u is not None]


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    tr, bad = Transcript([], offset), [0]
    started = None   # (offset, marker) of a custom message that may have started a run
    prompt_open = False   # a user prompt waits for its answer: a custom message now is context
    for off, rec in read_jsonl(path, offset, bad, SKIP):
        if not isinstance(rec, dict):
            continue
        if rec.get("type") == "session":
            tr.session_id, tr.cwd = rec.get("id"), rec.get("cwd")
        elif rec.get("type") == "custom_message" and not prompt_open and started is None:
            started = (off, custom_marker(rec))
        elif rec.get("type") == "message":
            unit = unit_of(rec.get("message"))
            if unit is not None and unit.role == "user":
                started, prompt_open = None, True
            elif unit is not None:
                if started is not None and started[1] is not None:
                    tr.add(started[1], started[0])
                started, prompt_open = None, False
            tr.add(unit, off)
    tr.skipped = bad[0]
    return tr


def custom_marker(rec: dict) -> Unit | None:
    """The marker of a ``custom_message`` entry that started a run: ``<tool>custom_message
    <customType>: <its text></tool>`` (chrollo's own recall message never is one)."""
    kind = rec.get("customType") if isinstance(rec.get("customType"), str) else "extension"
    if kind == RECALL_TYPE or not isinstance(rec.get("id"), str):
        return None
    text = text_of(rec.get("content")) or ""
    return Unit("agent", parse_time(rec.get("timestamp")), [tool_call("custom_message", f"{kind}: {text}")],
                f"p:c:{rec['id']}", new_turn=True)


def session_of(path: str) -> dict:
    """The session header's ``id`` and ``cwd`` (first line of a pi session file)."""
    rec = first_record(path) or {}
    if rec.get("type") != "session" or not isinstance(rec.get("id"), str):
        raise ValueError("no session header: not a pi session file")
    return {"session_id": rec["id"], "cwd": rec.get("cwd")}


def expected_events() -> dict:
    return {"beforeagentstart": "recall", "agentend": "capture", "sessionshutdown": "catchup",
            "sessionstart": "catchup"}


def package() -> dict | None:
    """chrollo's pi package, if installed: an entry of ``settings.json``'s ``packages`` (a local
    folder, used in place, or a git source cloned to ``git/<host>/<path>``) whose package.json
    is chrollo's; its ``pi.extensions`` names the extension file."""
    import os
    import re

    from ..homedir import read_json
    from .common import package_record

    base = home_dir()
    for entry in read_json(os.path.join(base, "settings.json")).get("packages") or []:
        source = entry.get("source") if isinstance(entry, dict) else entry
        if not isinstance(source, str) or source.startswith("npm:"):
            continue
        if re.match(r"(git:|https?://|ssh://|git://)", source):
            path = re.sub(r"^(git:|https?://|ssh://|git://)(git@)?", "", source).split("@")[0].replace(":", "/")
            root = os.path.join(base, "git", path.removesuffix(".git"))
        else:   # recorded relative to settings.json: named by its absolute path (`pi remove` takes that)
            root = source = os.path.normpath(os.path.join(base, os.path.expanduser(source)))
        manifest = read_json(os.path.join(root, "package.json"))
        extensions = (manifest.get("pi") or {}).get("extensions") if isinstance(manifest.get("pi"), dict) else None
        if manifest.get("name") == "chrollo" and isinstance(extensions, list) and extensions:
            return package_record(source, root, manifest.get("version"), True, {}, {}, f"pi remove {source}",
                                  extension=os.path.normpath(os.path.join(root, extensions[0])))
    return None

# ----------------------------------------------------------------------------- profile

ALIASES: tuple = ()
# pi has no hook configuration: chrollo's extension (chrollo/data/pi-extension.ts, written
# whole into pi's extensions folder) fires these events and registers the tools itself.
EVENTS = [("before_agent_start", None), ("agent_end", None), ("session_shutdown", None)]
HOOKS, MCP = "extension", None
# pi has had an MCP client since 0.99, but it hides MCP tools unless `exposure: "direct"` and
# waits for such servers before the first prompt; the extension's tools need neither, and both
# at once would offer read_memory twice (doctor_check says so).
NO_MCP = "its chrollo extension registers read_memory itself (a server in pi's mcp.json too would offer it twice)"
EXTENSION_MARK = "chrollo-pi"  # in the extension's text: the file is chrollo's
LOADS_ONE_EXTENSION = True      # chrollo install's and the package's: pi runs one (doctor says so)
TRANSCRIPTS = ("sessions", ["*/*.jsonl"])
HELP = "~/.pi/agent/extensions/chrollo.ts (hooks and tools)"
IMPORT_HELP = "~/.pi/agent/sessions      ($PI_CODING_AGENT_DIR)"


def home_dir() -> str:
    import os

    return home_from("PI_CODING_AGENT_DIR", os.path.join(".pi", "agent"))


def hooks_config() -> str:
    import os

    return os.path.join(home_dir(), "extensions", "chrollo.ts")


def extension_text(command: list) -> str:
    """The extension as installed: the shipped one, running ``command`` as chrollo."""
    return shipped_extension("pi-extension.ts", command)


def mcp_duplicates() -> list:
    """Names of the servers in pi's ``mcp.json`` (its built-in MCP client, 0.99+) that run
    ``chrollo mcp``. chrollo does not register one for pi: its extension offers read_memory
    itself, at once; a server beside it offers the tool twice with ``exposure: "direct"``, and
    with the default ``codemode`` it adds pi's codemode tool to reach a hidden copy."""
    import os

    from ..homedir import read_json

    servers = read_json(os.path.join(home_dir(), "mcp.json")).get("mcpServers")
    out = []
    for name, entry in (servers.items() if isinstance(servers, dict) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
            continue
        args = entry.get("args") if isinstance(entry.get("args"), list) else []
        words = [os.path.basename(entry["command"])] + [a for a in args if isinstance(a, str)]
        if "mcp" in words and any(w.startswith("chrollo") for w in words[:-1]):
            out.append(name)
    return out


def doctor_check(report: dict, hooks_path: str, is_ours, pkg: dict | None = None) -> None:
    """chrollo's MCP server registered with pi's own MCP client too: read_memory twice."""
    import os

    names = mcp_duplicates()
    if names:
        report.update(status="duplicate", fix=(
            f"chrollo's MCP server is also in {os.path.join(home_dir(), 'mcp.json')} ({', '.join(names)}): "
            f"the extension already offers read_memory, so with exposure \"direct\" the model is offered it "
            f"twice. Remove it: {'; '.join(f'pi mcp remove {n}' for n in names)}"))


def event_of(payload: dict, event: str | None = None) -> HookEvent:
    ev = hook_event(NAME, expected_events(), payload, event)
    if ev.action == "capture":  # agent_end carries the turn's messages; none is an aborted turn
        ev.extra_units = message_units(payload.get("messages"))
        ev.abort_if_empty = True
    return ev


def reply(text: str) -> str:
    return text or ""  # (the extension reads stdout as the text itself)


def recall_text(out: str) -> str:
    return out


def sample_payload(event: str, session: str, cwd: str, prompt: str, answer: str) -> dict:
    base = sample(expected_events(), event, session, cwd, prompt, answer)
    base.update(shim=EXTENSION_MARK, shim_version=1, harness=NAME)
    if expected_events().get(normalise_event(event)) == "capture":
        base.pop("last_assistant_message", None)
        base["messages"] = [{"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": 1},
                            {"role": "assistant", "content": [{"type": "text", "text": answer}], "timestamp": 2}]
    return base
