"""What every harness adapter shares: the unit record, JSONL reading, timestamps, tool lines.

An adapter turns a harness's payloads and transcript files into **units**: one user prompt,
or one piece of an agent's answer (a message or a record of one), each with a stable
``key`` so capture can tell what it already wrote. Consecutive agent units make one agent
turn. Units never carry tool outputs, thinking, or text chrollo injected.
"""
from __future__ import annotations

import datetime as dt
import json
import os

from ..fileformat import RECALL_HEADER, ToolCall
from ..sha256 import hexdigest

MAX_LINE = 64 << 20      # a JSONL line longer than this (a pasted video?) is skipped, not parsed
MAX_ARG = 300            # characters of a tool call's argument kept on its one line


class Unit:
    """One user prompt (``parts == [text]``) or one piece of an agent turn (text / ToolCall)."""

    __slots__ = ("role", "when", "parts", "key", "new_turn")

    def __init__(self, role: str, when: dt.datetime | None, parts: list, key: str | None = None,
                 new_turn: bool = False):
        self.role, self.when, self.parts, self.key = role, when, parts, key
        # an agent unit that starts a turn of its own instead of joining the agent units before
        # it (what the harness did on its own, e.g. a background task reporting back)
        self.new_turn = new_turn

    @property
    def text(self) -> str:
        return "\n\n".join(p.strip() for p in self.parts if isinstance(p, str) and p.strip())

    def tools(self) -> list:
        return [p.name for p in self.parts if isinstance(p, ToolCall)]

    def __repr__(self) -> str:
        return f"Unit({self.role}, {self.key}, {self.text[:40]!r}, {self.tools()})"


class Transcript:
    """What an adapter read from a transcript file.

    ``resume``: the byte offset to read from next time — the start of the last user prompt,
    so the last (possibly unfinished) turn is always read again and nothing older is.
    """

    def __init__(self, units: list, resume: int, session_id: str | None = None,
                 cwd: str | None = None, skipped: int = 0):
        self.units, self.resume = units, resume
        self.session_id, self.cwd, self.skipped = session_id, cwd, skipped
        self.sidechains = False  # Claude: the file also holds inline subagent records

    def add(self, unit: "Unit | None", offset: int) -> None:
        """Append a unit read at ``offset``; a prompt moves the resume point to its line."""
        if unit is not None:
            if unit.role == "user":
                self.resume = offset
            self.units.append(unit)


def skip_patterns(*pairs) -> tuple:
    """Byte patterns of lines an adapter drops unseen: ``("type", "tool_result")`` matches
    ``"type":"tool_result"`` and ``"type": "tool_result"`` (the harnesses' compact JSON and
    Python's). Inside a string the quotes would be escaped, so text can never match."""
    return tuple(f'"{k}"{sep}"{v}"'.encode() for k, v in pairs for sep in (":", ": "))


def read_jsonl(path: str, offset: int = 0, counter: list | None = None, skip: tuple = ()):
    """Yield ``(offset, object)`` for each complete, parseable JSON line from ``offset``.

    A last line without its newline is still being written and is left for next time;
    unparseable or oversized lines are skipped (and counted in ``counter[0]``). Lines holding
    a ``skip`` pattern (tool outputs: most of a transcript's bytes) are not even parsed.
    """
    with open(path, "rb") as fh:
        if offset:
            fh.seek(offset)
        pos = offset
        while True:
            line = fh.readline(MAX_LINE + 1)
            if not line:
                return
            start, pos = pos, pos + len(line)
            if not line.endswith(b"\n"):
                if len(line) > MAX_LINE:  # skip the rest of a monster line
                    while line and not line.endswith(b"\n"):
                        pos = _past_holes(fh, pos)
                        line = fh.readline(MAX_LINE)
                        pos += len(line)
                    _count(counter)
                    continue
                return  # unfinished last line
            if not line.strip() or (skip and any(p in line for p in skip)):
                continue
            try:
                yield start, json.loads(line)
            except (ValueError, RecursionError):
                _count(counter)


def _past_holes(fh, pos: int) -> int:
    """The next offset from ``pos`` that holds data: a sparse file's holes are zeros, with no
    newline to find in them, so a 10 GB sparse "line" is skipped without reading it."""
    import errno

    try:
        return fh.seek(pos, os.SEEK_DATA)
    except OSError as e:
        if e.errno == errno.ENXIO:  # only a hole is left, up to the end
            return fh.seek(0, os.SEEK_END)
        fh.seek(pos)  # (SEEK_DATA unsupported here: read on)
        return pos
    except (ValueError, AttributeError):
        return pos


MAX_JSON = 64 << 20  # a whole-file JSON transcript over this is not parsed (it is held whole, ~10x in objects)


def read_json_file(path: str, why: bool = False):
    """The JSON document a whole file holds (a session of Continue, Cline, …), or None when it
    is too large, not JSON, not UTF-8 or nested too deep (``why``: ValueError saying which).
    Opened as live capture opens a transcript: no FIFO blocks it, no link is followed."""
    from ..vault import open_regular

    try:
        with open_regular(path) as fh:
            data = fh.read(MAX_JSON + 1)
        if len(data) > MAX_JSON:
            raise ValueError(f"larger than {MAX_JSON >> 20} MiB: not parsed")
        return json.loads(data)
    except (OSError, ValueError, RecursionError) as e:
        if why:
            raise ValueError(f"not a JSON document ({type(e).__name__}: {e})"[:200]) from None
        return None


def first_record(path: str, max_lines: int = 20):
    """The first parseable JSON object of a JSONL file (None if there is none near the top)."""
    for n, (_off, rec) in enumerate(read_jsonl(path, 0)):
        if isinstance(rec, dict):
            return rec
        if n >= max_lines:
            break
    return None


def _count(counter: list | None) -> None:
    if counter is not None:
        counter[0] += 1


def parse_time(value) -> dt.datetime | None:
    """ISO-8601 strings (``Z`` allowed) or epoch seconds or milliseconds → an aware datetime.

    A number below 1e11 is seconds (1e11 s is the year 5138; 1e11 ms was March 1973), so
    1767261600 and 1767261600000 are the same moment."""
    try:
        if isinstance(value, str) and value:
            t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            return t if t.tzinfo else t.astimezone()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1e14:
            return dt.datetime.fromtimestamp(value if value < 1e11 else value / 1000, dt.timezone.utc)
    except (ValueError, OverflowError, OSError):
        pass
    return None


def fill_times(units: list, path: str) -> list:
    """Give the units that carry no time (formats that record none per message) the last time
    before them, else the file's modification time — never the importing clock: the session is
    dated by its transcript, and importing it again (state lost) names the same file."""
    last = None
    for u in units:
        if u.when is None:
            if last is None:
                try:
                    last = dt.datetime.fromtimestamp(os.stat(path).st_mtime, dt.timezone.utc)
                except (OSError, ValueError, OverflowError):
                    return units
            u.when = last
        last = u.when
    return units


def norm(text: str) -> str:
    """Whitespace-collapsed text: what "the same message" means across payload and transcript."""
    return " ".join(text.split())


def digest(text: str) -> str:
    return hexdigest(norm(text).encode("utf-8", "surrogatepass"))[:20]


def is_injected(text: str) -> bool:
    """Text chrollo injected itself (its recall block): never captured back."""
    return text.lstrip().startswith(RECALL_HEADER)


def text_of(content, skip=()) -> str | None:
    """The text of a message ``content``: a string, or a list of ``{"type": "text"}`` blocks.

    Returns None when the content holds a block type in ``skip`` (e.g. a tool result).
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    out = []
    for b in content:
        if isinstance(b, str):
            out.append(b)
        elif isinstance(b, dict):
            if b.get("type") in skip:
                return None
            if isinstance(b.get("text"), str) and b.get("type", "text") in ("text", "input_text", "output_text"):
                out.append(b["text"])
    return "\n\n".join(t for t in out if t.strip())


SHELL_TOOLS = {"bash", "shell", "exec_command", "run_shell_command", "local_shell", "execute", "execute_bash", "run_terminal_cmd"}
_ARG_KEYS = ("command", "cmd", "file_path", "path", "absolute_path", "notebook_path", "pattern",
             "url", "query", "dir_path", "description", "prompt")


def tool_call(name, args) -> ToolCall:
    """One tool call as a one-line marker: shell commands as ``$ cmd``, else name + main arg."""
    name = name if isinstance(name, str) and name else "tool"
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
            args = parsed if isinstance(parsed, dict) else args
        except ValueError:
            pass
    arg = ""
    if isinstance(args, dict):
        for k in _ARG_KEYS:
            v = args.get(k)
            if isinstance(v, list) and v and all(isinstance(x, str) for x in v):
                # ["bash", "-lc", "script"] → the script
                v = v[-1] if len(v) == 3 and v[1] in ("-lc", "-c") else " ".join(v)
            if isinstance(v, str) and v.strip():
                arg = v
                break
        else:
            arg = next((v for v in args.values() if isinstance(v, str) and v.strip()), "")
    elif isinstance(args, str):
        arg = args
        if name == "apply_patch" or "*** Begin Patch" in args:
            files = [ln.split(":", 1)[1].strip() for ln in args.splitlines()
                     if ln.startswith(("*** Update File:", "*** Add File:", "*** Delete File:"))]
            arg = " ".join(files)
    if name.lower() in SHELL_TOOLS:
        name = "$"
    arg = " ".join(arg.split())
    if len(arg) > MAX_ARG:
        arg = arg[:MAX_ARG] + "…"
    return ToolCall(name, arg)


def sqlite_readonly(path: str, tables: set, missing: str):
    """The SQLite database at ``path`` opened read-only (never written: no journal, no WAL
    checkpoint); ValueError if it cannot be read, or — ``missing`` — lacks one of ``tables``."""
    import sqlite3
    import stat
    from urllib.parse import quote

    try:  # (SQLite opens blocking: a FIFO named like a database would hang the reader)
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise ValueError("not a regular file")
    except OSError as e:
        raise ValueError(f"cannot read it ({e.strerror})") from None
    con = None
    try:
        con = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, timeout=2)
        have = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as e:
        if con is not None:
            con.close()
        raise ValueError(f"not a readable SQLite database ({e})") from None
    if not set(tables) <= have:
        con.close()
        raise ValueError(missing)
    return con


def plain_path(path) -> bool:
    """Is ``path`` an absolute ``.jsonl``/``.json`` path with no ``..`` segment (and no NUL)?"""
    return (isinstance(path, str) and os.path.isabs(path) and "\x00" not in path
            and path.endswith((".jsonl", ".json")) and ".." not in path.replace("\\", "/").split("/"))


def regular_file(path) -> str | None:
    """``path`` if it is an absolute ``.jsonl``/``.json`` path to a regular file, else None.

    (A payload's path is never followed upward: ``..`` segments are refused outright; nor
    through a link: a harness writes its transcript itself, a symlink there was put by
    someone else and may lead to another session's or another user's file.)
    """
    if not plain_path(path):
        return None
    try:
        import stat

        st = os.lstat(path)
        return path if stat.S_ISREG(st.st_mode) else None
    except (OSError, ValueError):
        return None


def package_record(pid: str, root: str, version, enabled: bool, placeholders: dict, env: dict,
                   remove: str, **extra) -> dict:
    """What an adapter's ``package()`` says about chrollo's package installed in its harness
    (chrollo/packages.py reads it): its id and folder, version, whether the harness runs it,
    how its files name that folder (``placeholders``, and ``env`` for the hooks' environment)
    and the harness's own command that removes it."""
    return {"id": pid, "root": root, "version": version if isinstance(version, str) else None,
            "enabled": bool(enabled), "placeholders": placeholders, "env": env, "remove": remove, **extra}

# ----------------------------------------------------------------------------- hook events

class Skip(Exception):
    """A hook payload that cannot be acted on (logged at info level, not a bug)."""


def normalise_event(event: str) -> str:
    """``UserPromptSubmit``, ``user-prompt-submit`` and ``user_prompt_submit`` are one event."""
    return "".join(ch for ch in str(event).lower() if ch.isalnum())


_PLAIN_ID = None


def plain_id(value) -> bool:
    """A session or agent id chrollo accepts: 1-200 of letters, digits and ``._@:+-``, starting
    with a letter or digit, no ``..`` — nothing that could name a path or break a header."""
    global _PLAIN_ID
    if _PLAIN_ID is None:
        import re

        _PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@:+-]{0,199}")
    return isinstance(value, str) and bool(_PLAIN_ID.fullmatch(value)) and ".." not in value


class HookEvent:
    """One hook call, normalised by its harness's adapter (``event_of``): what hook, capture
    and recall need, and nothing of the harness's own payload shape.

    ``action``: recall, capture, subagent or catchup (see :mod:`chrollo.harness`); ``reply``:
    the agent's final message the payload carries; ``agent``/``agent_transcript``: a
    subagent's id and transcript (SubagentStop); ``extra_units``: turns the payload itself
    holds (pi's agent_end); ``abort_if_empty``: a capture with no answer is an aborted turn;
    ``transcript``: the payload's transcript if it is a regular file; ``transcript_named``: the
    same, or the plain path it names where nothing exists yet (the harness may write it later)."""

    __slots__ = ("harness", "name", "action", "session", "cwd", "prompt", "reply", "agent",
                 "agent_transcript", "transcript", "transcript_named", "extra_units", "abort_if_empty",
                 "generated", "mark")

    def __init__(self, harness: str, name: str, action: str, session: str, cwd: str = "",
                 prompt: str | None = None, reply: str | None = None, transcript: str | None = None):
        self.harness, self.name, self.action, self.session, self.cwd = harness, name, action, session, cwd
        self.prompt, self.reply, self.transcript = prompt, reply, transcript
        self.transcript_named = transcript
        self.agent = self.agent_transcript = None
        self.extra_units: list = []
        self.abort_if_empty = False
        self.generated = False  # the prompt is the harness's own (a task notification, a /loop wakeup…)
        self.mark = None  # what names this hook call's own record in the transcript (Copilot CLI)


def hook_event(harness: str, events: dict, payload: dict, event: str | None, loose: tuple = ()) -> HookEvent:
    """The :class:`HookEvent` of ``payload`` by the common rules (each adapter's ``event_of``
    starts here): the event is the argument, else the payload's ``hook_event_name``, and both
    must agree (``loose``: argument events that stand for any payload event); Skip otherwise."""
    said = payload.get("hook_event_name")
    if event and isinstance(said, str) and normalise_event(said) != normalise_event(event):
        if normalise_event(event) not in loose:
            raise Skip(f"event {event!r} but the payload says {said!r}")
    name = normalise_event(event or said or "")
    action = events.get(name)
    if action is None:
        raise Skip(f"{harness} event {event or said!r} is not one chrollo handles")
    sid = payload.get("session_id")
    if not plain_id(sid):
        raise Skip("session_id missing or not a plain id")
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) and os.path.isabs(payload["cwd"]) else ""
    prompt = payload.get("prompt") if isinstance(payload.get("prompt"), str) else None
    final = payload.get("last_assistant_message", payload.get("prompt_response"))
    named = payload.get("transcript_path")
    ev = HookEvent(harness, name, action, sid, cwd, prompt, final if isinstance(final, str) else None,
                   regular_file(named))
    if ev.transcript is None and plain_path(named) and not os.path.lexists(named):
        ev.transcript_named = named  # (a harness may create it later: Claude Code after Stop)
    if action == "subagent":
        ev.agent = payload.get("agent_id")
        ev.agent_transcript = payload.get("agent_transcript_path")
    return ev


def context_reply(event_name: str, text: str) -> str:
    """Recall text in the JSON channel Claude Code, Codex and Gemini CLI read ("" if none)."""
    if not text:
        return ""
    return json.dumps({"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": text}},
                      ensure_ascii=False) + "\n"


def context_of(out: str) -> str | None:
    """The recall text of a :func:`context_reply` reply, or None if it is not one."""
    try:
        return json.loads(out)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return None


def home_from(env: str, default: str) -> str:
    """A harness's data folder: ``$env`` if set, else ``~/<default>``."""
    value = os.environ.get(env)
    return os.path.expanduser(value) if value else os.path.join(os.path.expanduser("~"), default)


def sample_payload(events: dict, event: str, session: str, cwd: str, prompt: str, answer: str,
                   reply_key: str = "last_assistant_message") -> dict:
    """A payload of ``event`` like the harness sends (``chrollo doctor`` fires its hooks with
    it): a prompt for a recall event, the answer (under ``reply_key``) for a capture event."""
    base = {"session_id": session, "transcript_path": None, "cwd": cwd, "hook_event_name": event}
    action = events.get(normalise_event(event))
    if action == "recall":
        base["prompt"] = prompt
    elif action == "capture":
        base[reply_key] = answer
    return base


# The line of a shipped extension (chrollo/data: pi's, OpenCode's plugin) that names the chrollo
# command it runs; `chrollo install` rewrites it to the command installed.
_COMMAND = 'const CHROLLO = ["chrollo"];'


def shipped_extension(data_file: str, command: list) -> str:
    """``chrollo/data/<data_file>`` as installed: its command line running ``command``."""
    import json
    from importlib.resources import files

    text = files("chrollo").joinpath("data", data_file).read_text("utf-8")
    return text.replace(_COMMAND, f"const CHROLLO = {json.dumps(command)};")


def extension_command(text: str) -> list:
    """The chrollo command line an installed extension (shipped_extension) runs."""
    import json
    import re

    m = re.search(r"^const CHROLLO = (\[.*\]);", text, re.M)
    return json.loads(m.group(1)) if m else ["chrollo"]
