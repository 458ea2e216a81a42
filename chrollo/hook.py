"""``chrollo hook <event> --harness H``: the one front door every harness shim calls.

Reads one JSON payload on stdin (Codex's legacy ``notify`` passes it as the last argument),
works out the event (the argument, else the payload's ``hook_event_name``; both must agree),
and runs what the harness's adapter maps it to:

* ``recall``  — inject memory for the prompt, catch up the transcript, remember the prompt;
* ``capture`` — a turn finished: append it (transcript + the payload's final message);
* ``subagent`` — a subagent finished: its turns go to their own file (``parent_session``);
* ``catchup`` — append whatever the transcript holds that is not yet written.

Contract: **exit 0, always.** Any problem — bad JSON, a hostile session id, a missing or
odd transcript, a full disk, a read-only vault, no ``rg`` — is logged to
``$CHROLLO_HOME/logs/hooks.log`` and the hook prints nothing (or only the recall reply).
stdout carries nothing but a valid reply for the harness's channel.
This module is on the per-prompt path: stdlib only at import time, no click.
"""
from __future__ import annotations

import json
import os
import sys
import time

from .harness import adapter as _adapter
from .harness import canonical
from .harness import names as _names
from .harness.common import HookEvent, Skip, plain_id, regular_file

USAGE = """\
Usage: chrollo hook [EVENT] --harness {bar} [--budget small|medium|large|N]

  Run by a coding agent's lifecycle hook, with the hook's JSON payload on stdin. EVENT is
  the harness's own event name (UserPromptSubmit, Stop, BeforeAgent, agent_end, …; any case,
  kebab-case accepted); it may be left out when the payload names it (hook_event_name).

  Always exits 0 and never blocks the agent: errors go to $CHROLLO_HOME/logs/hooks.log.
  `chrollo install <harness>` writes these hooks for you; `chrollo doctor` checks them.

Options:
  --harness NAME   {listed} (required unless the payload says)
  --budget SIZE    recall size: small (2,000 chars), medium (6,000, default), large
                   (9,000) or a number of characters; env CHROLLO_RECALL_BUDGET
  -h, --help       Show this message and exit.
"""
MAX_STDIN = 64 << 20


def main(argv: list) -> int:
    """Entry point for ``chrollo hook …``; returns the exit status (always 0)."""
    from .clock import process_started

    started = process_started()
    harness = event = None
    try:
        opts = _parse_args(argv)
        if opts is None:
            known = _names()
            sys.stdout.write(USAGE.format(bar="|".join(known), listed=", ".join(known[:-1]) + f" or {known[-1]}"))
            return 0
        harness, event = opts.get("harness"), opts.get("event")
        raw = opts["payload"] if opts.get("payload") is not None else _read_stdin()
        out = run(raw, event=event, harness=harness, budget=opts.get("budget"), started=started)
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
    except Skip as e:
        log(harness, event, f"skipped: {e}")
    except BaseException as e:  # noqa: BLE001 — the contract: nothing escapes a hook
        if isinstance(e, KeyboardInterrupt):
            return 0
        _log_error(harness, event, "", e)
    finally:
        if os.environ.get("CHROLLO_HOOK_TIMING"):
            sys.stderr.write(f"chrollo hook: {1000 * (time.monotonic() - started):.1f} ms\n")
    return 0


def _parse_args(argv: list) -> dict | None:
    opts: dict = {}
    rest = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            return None
        name, eq, value = a.partition("=")
        if name in ("--harness", "--budget"):
            if not eq:
                i += 1
                value = argv[i] if i < len(argv) else ""
            opts[name[2:]] = value
        elif a.startswith("-") and a != "-":
            raise Skip(f"unknown option {a!r}")
        else:
            rest.append(a)
        i += 1
    if rest:
        opts["event"] = rest[0]
    if len(rest) > 1:  # Codex's notify: `chrollo hook notify --harness codex '<json>'`
        opts["payload"] = rest[-1].encode("utf-8", "surrogateescape")
    return opts


def _read_stdin() -> bytes:
    if sys.stdin is None or sys.stdin.isatty():
        return b""
    return sys.stdin.buffer.read(MAX_STDIN + 1)


def decode(raw: bytes) -> dict:
    """The payload object, or Skip with the reason."""
    if not raw or not raw.strip():
        raise Skip("empty payload")
    if len(raw) > MAX_STDIN:
        raise Skip("payload over 64 MiB")
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise Skip(f"payload is not UTF-8 JSON ({type(e).__name__})") from None
    if not isinstance(obj, dict):
        raise Skip(f"payload is a JSON {type(obj).__name__}, not an object")
    return obj


def run(raw: bytes, event: str | None = None, harness: str | None = None, budget=None,
        started: float | None = None) -> str:
    """Handle one hook call; returns what to print (possibly ""). ``started``: when the hook
    started (time.monotonic()), which the recall's deadline counts from. The payload goes to
    the harness's adapter (a :class:`HookEvent`), to capture and recall, and the recall text
    back through the adapter's ``reply``: nothing here knows a harness's payload or channel."""
    payload = decode(raw)
    name = canonical(harness or str(payload.get("harness") or ""))
    if name is None:
        known = _names()
        raise Skip(f"unknown harness {harness!r} (use {', '.join(known[:-1])} or {known[-1]})")
    from .packages import stands_down

    if stands_down(name):
        raise Skip(f"chrollo install's {name} hooks run too: the package's stand down (chrollo doctor)")
    mod = _adapter(name)
    ev = mod.event_of(payload, event)
    if ev.harness != name:  # another tool running this harness's hooks (Cursor those of Claude Code)
        name, mod = ev.harness, _adapter(ev.harness)
    from . import privacy
    from .capture import policy

    off, private = policy(ev.session, ev.cwd, ev.prompt)  # (what may be kept: capture decides)
    if private:
        log(name, event, "session marked private: forgotten, nothing more is kept")
    out = ""
    if ev.action == "recall":
        if ev.generated:
            raise Skip("the prompt is the harness's own (a task notification, a /loop or scheduled wakeup, "
                       "another session's message, the empty re-entry after a tool result), not the user's")
        quiet = privacy.recall_off(ev.cwd or None)
        try:
            from .recall import recall

            if not quiet:
                trace: dict = {}
                out = mod.reply(recall(privacy.scrub_private(ev.prompt) if ev.prompt else ev.prompt, ev.session,
                                       cwd=ev.cwd or None, budget=budget, started=started, trace=trace))
                if not privacy.rules().forgotten(ev.session):  # (a session made private keeps no receipt)
                    from .receipts import record

                    record(name, ev.session, privacy.scrub_private(ev.prompt) if ev.prompt else ev.prompt, trace)
                if trace.get("unindexed"):  # (it could not reach every session in time: have it indexed)
                    from .index import after_search

                    after_search(trace["unindexed"])
        except Exception as e:  # recall failing must not stop the capture below
            _log_error(name, event, "recall", e)
        if off:
            log(name, event, f"skipped: not captured: {off}")
            return out
        try:
            _capture(mod, ev)
        except Exception as e:  # nor capture failing (a read-only vault…) lose the recall
            _log_error(name, event, "capture", e)
        return out
    if off:
        raise Skip(f"not captured: {off}")
    _capture(mod, ev)
    return ""


def _capture(mod, ev: HookEvent) -> None:
    from .capture import Capture

    name, sid, cwd, transcript, final = ev.harness, ev.session, ev.cwd, ev.transcript, ev.reply
    if ev.action == "subagent":
        agent = ev.agent
        if not plain_id(agent):
            raise Skip("SubagentStop without a plain agent_id")
        why = getattr(mod, "left_out", lambda _agent: None)(agent)
        if why:
            raise Skip(f"SubagentStop: {why}")
        named = ev.agent_transcript
        path = regular_file(named)
        if path is None and named:
            # Claude Code's /compact runs an agent (agent_type "") whose transcript is never
            # written: its summary is not a conversation, and import would not find it either.
            raise Skip(f"SubagentStop: agent transcript {str(named)[:200]!r} does not exist")
        path = path or transcript
        if transcript:
            _parent_first(mod, name, sid, cwd, transcript)
        if path == transcript:
            # Before Claude Code 2.0.42 subagents were inline sidechain records without an
            # agentId: all of a session's go to one "<session>:sidechain" file, as on import.
            agent = "*"
        sub = f"{sid}:{'sidechain' if agent == '*' else agent}"
        with Capture(sub, name, cwd, parent=sid) as cap:
            units = cap.read_transcript(mod, path, agent_id=agent, answer=final) or []
            written = cap.run(units, final=final)
        _captured(name, sid, written)
        return
    capture = ev.action == "capture"
    if ev.action in ("capture", "catchup") and ev.transcript_named and getattr(mod, "TRANSCRIPT_AFTER_HOOKS", False) \
            and (transcript is None or not mod.transcript_written(transcript, ev.mark)):
        # (Copilot CLI writes the turn — a new session's file itself — only as it exits, in
        # pieces: a pass now would write half of it, or nothing)
        _leave_settle(name, sid, cwd, str(ev.transcript_named), "catch_up_when_written", ev.mark or "")
        return
    # (Claude Code may write the turn only after this hook returns: no use waiting for it here)
    later = capture and bool(final and final.strip() and ev.transcript_named) \
        and getattr(mod, "TRANSCRIPT_AFTER_STOP", False)
    defer = False
    with Capture(sid, name, cwd) as cap:
        # (a transcript read before and now gone was deleted: nothing will come to wait for)
        later = later and (transcript is not None or cap.state.get("transcript") != ev.transcript_named)
        # (a transcript holding many sessions — OpenCode's database — is read for this one)
        units = cap.read_transcript(mod, transcript, agent_id=sid if getattr(mod, "MANY_SESSIONS", False) else None,
                                    answer=final if capture and not later else None) or []
        if capture:
            cap.payload_prompt(ev.prompt)  # Gemini AfterAgent / Codex notify carry the prompt too
            units = units + ev.extra_units
            defer = later and not cap.holds_answer(units, final)
        if ev.action == "recall":
            written = cap.run(units, prompt=ev.prompt or None, settle=True)
        else:
            written = cap.run(units, final=final if capture else None, defer=defer, settle=not capture,
                              abort_if_empty=ev.abort_if_empty and capture)
    _captured(name, sid, written)
    if defer:
        _leave_settle(name, sid, cwd, ev.transcript_named)


def _leave_settle(name: str, sid: str, cwd: str, transcript: str, how: str = "settle", *more: str) -> None:
    """Start :func:`chrollo.capture.settle` (or ``how``: :func:`chrollo.capture.catch_up_when_written`)
    in a process of its own — detached, its output nowhere — so the harness, which waits for
    this hook, writes the turn meanwhile."""
    from .detached import start

    start("import sys; from chrollo.hook import settle_main; settle_main(sys.argv[1:])",
          name, sid, cwd, transcript, how, *more)


def settle_main(argv: list) -> int:
    """The settling pass's process (``_leave_settle``): like a hook, it never fails loudly."""
    name = sid = None
    try:
        name, sid, cwd, transcript, *how = argv
        from . import capture

        if how and how[0] == "catch_up_when_written":
            _captured(name, sid, capture.catch_up_when_written(sid, name, cwd, transcript, (how[1:] or [""])[0] or None))
        else:
            _captured(name, sid, capture.settle(sid, name, cwd, transcript))
    except BaseException as e:  # noqa: BLE001 — as a hook: logged, never raised
        if not isinstance(e, KeyboardInterrupt):
            _log_error(name, "settle", "capture", e)
    return 0


def _parent_first(mod, name: str, sid: str, cwd: str, transcript: str) -> None:
    """Write the parent's prompts so far before its subagent's file is made, so that file can
    link its parent's (Obsidian ``parent``): a subagent ending in its session's first turn
    comes before the parent's first Stop. Only up to the parent's last prompt — its answer
    comes at Stop, as one turn, the bytes import writes (it takes parents first)."""
    from .capture import Capture

    with Capture(sid, name, cwd) as cap:
        units = cap.read_transcript(mod, transcript) or []
        last = max((i for i, u in enumerate(units) if u.role == "user"), default=None)
        if last is not None:
            _captured(name, sid, cap.run(units[:last + 1]))


def _captured(name: str, sid: str, written: list) -> None:
    """Remember when this harness's hooks last wrote a turn (doctor and stats compare it with
    the harness's own activity: hooks that stopped firing are noticed)."""
    if written:
        from .freshness import record_capture

        record_capture(name, sid)


def _log_error(harness, event, what: str, e: BaseException) -> None:
    """One line for an error chrollo names (a bad setting: the user's to fix); a traceback
    only for what is chrollo's own bug."""
    from .errors import ChrolloError

    line = f"{what + ' ' if what else ''}error: "
    if isinstance(e, OSError):
        from .console import disk_full, os_error

        if disk_full(e):  # (the machine's state, not chrollo's bug)
            e = os_error(e)
    if isinstance(e, ChrolloError):
        line += f"{e.kind}: {e.message}" + (f" ({e.hint})" if e.hint else "")
    else:
        import traceback

        line += f"{type(e).__name__}: {e}\n" + traceback.format_exc()
    log(harness, event, line)


def log(harness, event, message: str) -> None:
    """Append one entry to ``$CHROLLO_HOME/logs/hooks.log``; stderr only if that fails."""
    from .vault import append_log

    append_log("hooks", f"{harness or '-'} {event or '-'} {message}", who="chrollo hook")
