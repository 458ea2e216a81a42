"""OpenCode: chrollo's plugin payloads (chrollo/data/opencode-plugin.js) and its SQLite database
``~/.local/share/opencode/opencode.db`` (``$XDG_DATA_HOME/opencode``; ``$OPENCODE_DB``).

OpenCode has no shell hooks: the plugin ``chrollo install opencode`` writes sends
``chat.message`` (a prompt: the session id and the message's text parts; chrollo's reply is
added as a synthetic part) and ``session.idle`` (the turn ended). The turns themselves are
read from the database — the same rows, the same units, live and on import — opened
read-only (``mode=ro``, ``query_only``): never written, never held (a reader in WAL mode
blocks no one). A file that is not such a database is a clear skip, never a crash.

Rows: ``session`` (``id``, ``directory``, ``parent_id``: a subagent's session), ``message``
(``data``: JSON with ``role``, ``time.created`` in ms; an assistant's ``summary: true`` is a
compaction summary, not an answer) and ``part`` (``data``: ``type`` text / tool / reasoning /
step-start…; a text part with ``synthetic: true`` is what OpenCode or a plugin added — not the
user's words — and ``ignored: true`` is not sent). A user turn is its message's own text
parts; ``opencode run "two words"`` stores each argument holding a space in double quotes
(``"two words"``), so a text that is exactly one such quoted argument is stored as typed.
Kilo Code CLI (``@kilocode/cli``) is OpenCode underneath: its database, where it has the
same tables, reads the same way (:mod:`chrollo.harness.kilo_cli`).
"""
from __future__ import annotations

import os

from .common import (HookEvent, Skip, Transcript, Unit, extension_command, hook_event, is_injected, parse_time,
                     shipped_extension, tool_call)
from .common import sample_payload as sample

NAME = "opencode"
BINARY = "opencode"   # the harness's command (`chrollo install --all` looks for it)
# The database holds every session: a hook's capture names its own (read_transcript's agent_id).
MANY_SESSIONS = True
MAX_ROWS = 200_000    # messages or parts of one session read at most (a hostile database)
MAX_DATA = 64 << 20   # a row's JSON longer than this is skipped, not parsed


def typed(text: str) -> str:
    """The user's text of a stored prompt: ``opencode run`` wraps an argument holding a space
    in double quotes (escaping the quotes in it), so ``"two words"`` is ``two words``."""
    if len(text) > 2 and text[0] == '"' and text[-1] == '"':
        plain = text[1:-1].replace('\\"', '"')
        if " " in plain and '"' + plain.replace('"', '\\"') + '"' == text:
            return plain
    return text


def user_text(parts) -> str | None:
    """The prompt of a user message's parts: its own text parts (not synthetic, not ignored)."""
    texts = [p["text"] for p in parts if isinstance(p, dict) and p.get("type") == "text"
             and isinstance(p.get("text"), str) and p["text"].strip()
             and not p.get("synthetic") and not p.get("ignored")] if isinstance(parts, list) else []
    text = typed("\n\n".join(texts)) if texts else ""
    return text if text.strip() and not is_injected(text) else None


def _loads(data):
    import json

    if not isinstance(data, str) or len(data) > MAX_DATA:
        return None
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _unit(mid: str, msg: dict, parts: list) -> Unit | None:
    when = parse_time((msg.get("time") or {}).get("created") if isinstance(msg.get("time"), dict) else None)
    key = f"o:{mid}"
    if msg.get("role") == "user":
        text = user_text(parts)
        return Unit("user", when, [text], key) if text else None
    if msg.get("role") != "assistant" or msg.get("summary") is True:
        return None
    out: list = []
    for p in parts:
        if p.get("type") == "text" and isinstance(p.get("text"), str) and p["text"].strip() \
                and not p.get("synthetic") and not is_injected(p["text"]):
            out.append(p["text"])
        elif p.get("type") == "tool":
            state = p.get("state") if isinstance(p.get("state"), dict) else {}
            out.append(tool_call(p.get("tool"), state.get("input")))
    return Unit("agent", when, out, key) if out else None


def connect(path: str):
    """``path`` opened read-only (ValueError if it is not a regular file or not a database)."""
    import sqlite3
    import stat
    from urllib.parse import quote

    st = os.lstat(path)   # (a link or a FIFO named *.db is not followed, not opened)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("not a regular file")
    try:
        con = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, timeout=0.5,
                              isolation_level=None, check_same_thread=False)
    except sqlite3.Error as e:
        raise ValueError(f"not a database ({e})") from None
    try:
        # (no function of chrollo's is registered on this connection: a schema can call only
        # SQLite's own, none of which writes — so trusted_schema stays on; off, SQLite 3.40
        # refuses the json_extract indexes Kilo Code's database has)
        con.execute("PRAGMA query_only = ON")
        con.execute("SELECT id, directory, parent_id, time_created FROM session LIMIT 0")
        con.execute("SELECT id, session_id, time_created, data FROM message LIMIT 0")
        con.execute("SELECT id, message_id, session_id, data FROM part LIMIT 0")
    except sqlite3.Error as e:
        con.close()
        raise ValueError(f"not an OpenCode database ({e})") from None
    return con


def _session(con, sid: str):
    return con.execute("SELECT directory, parent_id FROM session WHERE id = ?", (sid,)).fetchone()


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    """The turns of one session of the database (``agent_id`` names it; None: the first)."""
    import sqlite3

    tr = Transcript([], 0)
    try:
        con = connect(path)
    except ValueError:
        return tr
    try:
        sid = agent_id or next(iter(_sessions(con)), None)
        row = _session(con, sid) if sid else None
        if row is None:
            return tr
        tr.session_id, tr.cwd = sid, row[0] if isinstance(row[0], str) else None
        parts: dict = {}
        for mid, data in con.execute("SELECT message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id "
                                     "LIMIT ?", (sid, MAX_ROWS)):
            p = _loads(data)
            if p is not None:
                parts.setdefault(mid, []).append(p)
            else:
                tr.skipped += 1
        for mid, data in con.execute("SELECT id, data FROM message WHERE session_id = ? "
                                     "ORDER BY time_created, id LIMIT ?", (sid, MAX_ROWS)):
            msg = _loads(data)
            if msg is None:
                tr.skipped += 1
                continue
            tr.add(_unit(str(mid), msg, parts.get(mid, [])), 0)
    except sqlite3.Error:
        tr.units = []
    finally:
        con.close()
    return tr


def _sessions(con) -> dict:
    """{session id: (directory, parent id)} of the database, oldest first."""
    return {r[0]: (r[1], r[2]) for r in con.execute(
        "SELECT id, directory, parent_id FROM session ORDER BY time_created, id LIMIT ?", (MAX_ROWS,))
        if isinstance(r[0], str)}


def session_of(path: str) -> dict:
    """The database's sessions (import reads each in its own pass): ``sessions`` in order,
    ``cwds`` their folders; a subagent's session (it has a parent) is left out, as live."""
    import sqlite3

    con = connect(path)
    try:
        found = _sessions(con)
    except sqlite3.Error as e:
        raise ValueError(f"not an OpenCode database ({e})") from None
    finally:
        con.close()
    ids = [s for s, (_d, parent) in found.items() if not parent]
    if not ids:
        raise ValueError("no sessions in it")
    return {"session_id": ids[0], "cwd": found[ids[0]][0], "sessions": ids,
            "cwds": {s: found[s][0] for s in ids if isinstance(found[s][0], str)}}


def expected_events() -> dict:
    return {"chatmessage": "recall", "sessionidle": "capture"}


# the global config files OpenCode reads, in its order (it merges them; `opencode plugin -g`
# writes the plugin list into opencode.json, or opencode.jsonc where that is the one there)
CONFIG_FILES = ("config.json", "opencode.json", "opencode.jsonc")


def package() -> dict | None:
    """chrollo's OpenCode package (``hooks/opencode``, ``opencode plugin -g <folder>``), if
    installed: an entry of a global config's ``plugin`` list naming a folder (its path, a
    ``file://`` URL) whose package.json is chrollo's. OpenCode loads its ``main`` in place,
    nothing copied; that code adds chrollo's MCP server to the config as it loads. OpenCode
    1.18.33 has no command that removes a plugin: removing it is deleting the entry."""
    from ..homedir import read_json
    from .common import package_record

    base = config_dir()
    for name in CONFIG_FILES:
        path = os.path.join(base, name)
        plugins = read_json(path, comments=True).get("plugin")
        for entry in plugins if isinstance(plugins, list) else []:
            spec = entry[0] if isinstance(entry, list) and entry else entry   # ([spec, options] too)
            root = _plugin_folder(spec, base)
            manifest = read_json(os.path.join(root, "package.json")) if root else {}
            main = manifest.get("main") if isinstance(manifest.get("main"), str) else "index.js"
            if manifest.get("name") == "chrollo" and os.path.isfile(os.path.join(root, main)):
                return package_record(spec, root, manifest.get("version"), True, {},
                                      {"CHROLLO_VIA": "package", "CHROLLO_HARNESS": NAME},
                                      f'delete "{spec}" from the "plugin" list of {path}',
                                      extension=os.path.normpath(os.path.join(root, main)),
                                      mcp_command=["chrollo", "mcp"])
    return None


def _plugin_folder(spec, base: str) -> str | None:
    """The local folder a ``plugin`` entry names (an absolute, ``~/`` or ``./`` path — relative
    to the config's folder — or a ``file://`` URL); None for an npm name."""
    from urllib.parse import unquote, urlsplit

    if not isinstance(spec, str) or not spec:
        return None
    if spec.startswith("file://"):
        spec = unquote(urlsplit(spec).path)
    elif spec.startswith("~/"):
        spec = os.path.expanduser(spec)
    elif not spec.startswith(("/", "./", "../")):
        return None
    folder = os.path.normpath(os.path.join(base, spec))
    return folder if os.path.isdir(folder) else None

# ----------------------------------------------------------------------------- profile

ALIASES = ("opencode-ai",)
# No hook configuration: chrollo's plugin (chrollo/data/opencode-plugin.js, written whole into
# OpenCode's plugin folder) fires these events; read_memory is chrollo's MCP server.
EVENTS = [("chat.message", None), ("session.idle", None)]
HOOKS, MCP = "extension", "json"
MCP_KEY = "mcp"    # opencode.json's servers: {"mcp": {"chrollo": {"type": "local", "command": [...]}}}
EXTENSION_MARK = "chrollo-opencode"  # in the plugin's text: the file is chrollo's
EXTENSION_NOUN = "plugin"            # what OpenCode calls it (`chrollo install`'s report)
TRANSCRIPTS = ("", ["opencode*.db"])
HELP = "~/.config/opencode/plugin/chrollo.js, tool: opencode.json ($XDG_CONFIG_HOME)"
IMPORT_HELP = "~/.local/share/opencode   ($XDG_DATA_HOME/opencode; opencode*.db)"


def _xdg(var: str, default: str, app: str = "opencode") -> str:
    value = os.environ.get(var)
    base = value if value and os.path.isabs(value) else os.path.join(os.path.expanduser("~"), default)
    return os.path.join(base, app)


def home_dir() -> str:
    """OpenCode's data folder (its database lives there)."""
    return _xdg("XDG_DATA_HOME", os.path.join(".local", "share"))


def config_dir() -> str:
    return _xdg("XDG_CONFIG_HOME", ".config")


def database() -> str:
    """The database OpenCode writes: ``$OPENCODE_DB`` (absolute, or under its data folder), else
    ``opencode.db`` in its data folder."""
    named = os.environ.get("OPENCODE_DB")
    if named and named != ":memory:":
        return named if os.path.isabs(named) else os.path.join(home_dir(), named)
    return os.path.join(home_dir(), "opencode.db")


def hooks_config() -> str:
    return os.path.join(config_dir(), "plugin", "chrollo.js")


def mcp_config() -> str:
    """``opencode.json`` in its config folder (``opencode.jsonc`` where only that exists)."""
    d = config_dir()
    jsonc = os.path.join(d, "opencode.jsonc")
    return jsonc if os.path.isfile(jsonc) and not os.path.exists(os.path.join(d, "opencode.json")) \
        else os.path.join(d, "opencode.json")


def mcp_entry(command: list) -> dict:
    """chrollo's server as opencode.json lists one (``chrollo install opencode --mcp``)."""
    return {"type": "local", "command": list(command), "enabled": True}


def extension_text(command: list) -> str:
    """The plugin as installed: the shipped one, running ``command`` as chrollo."""
    return shipped_extension("opencode-plugin.js", command)


def event_of(payload: dict, event: str | None = None) -> HookEvent:
    ev = hook_event(NAME, expected_events(), payload, event)
    if ev.action == "recall":
        ev.prompt = user_text(payload.get("parts"))
    ev.transcript = ev.transcript_named = None
    path = database()
    if os.path.isfile(path):
        try:
            con = connect(path)
        except (OSError, ValueError):
            return ev   # (not a database chrollo can read: the payload's own text is what there is)
        try:
            row = _session(con, ev.session)
        except Exception:  # noqa: BLE001 — a damaged database is no transcript, never a failed hook
            row = None
        finally:
            con.close()
        if row is not None and row[1]:
            raise Skip("a subagent's session (it has a parent): not captured")
        if row is not None:
            ev.transcript = ev.transcript_named = path
    return ev


def reply(text: str) -> str:
    return text or ""  # (the plugin adds stdout, as it is, as a synthetic part)


def recall_text(out: str) -> str:
    return out


def sample_payload(event: str, session: str, cwd: str, prompt: str, answer: str) -> dict:
    base = sample(expected_events(), event, session, cwd, prompt, answer)
    base.update(shim=EXTENSION_MARK, shim_version=1, harness=NAME)
    base.pop("transcript_path", None)
    if "prompt" in base:
        base["parts"] = [{"type": "text", "text": base.pop("prompt")}]
    return base
