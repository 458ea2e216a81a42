"""OpenCode: its plugin's payloads and its SQLite database, as OpenCode 1.18.33 writes them
(the tables' DDL and the rows' JSON below are copied from a database the real binary wrote in a
run against the e2e fake model server)."""
from __future__ import annotations

import json
import os
import sqlite3

from conftest import run_json
from hookkit import hook, ok, vault_files

# (the session, message and part tables of OpenCode 1.18.33's opencode.db, as created)
DDL = """
CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text,
  `parent_id` text, `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text NOT NULL,
  `version` text NOT NULL, `share_url` text, `summary_additions` integer, `summary_deletions` integer,
  `summary_files` integer, `summary_diffs` text, `metadata` text, `cost` real DEFAULT 0 NOT NULL,
  `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL,
  `tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0 NOT NULL,
  `tokens_cache_write` integer DEFAULT 0 NOT NULL, `revert` text, `permission` text, `agent` text,
  `model` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_compacting` integer, `time_archived` integer);
CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL);
CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);
"""
T0 = 1796190849825   # ms


def opencode_db(path, sessions: dict):
    """A database holding ``sessions``: {id: (directory, parent, [(role, [part dict])])}."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(DDL)
    con.execute("PRAGMA journal_mode=WAL")
    t = T0
    for n, (sid, (cwd, parent, msgs)) in enumerate(sessions.items()):
        con.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, "
                    "time_created, time_updated) VALUES (?, 'global', ?, 'crisp-falcon', ?, 'Fake title', "
                    "'1.18.33', ?, ?)", (sid, parent, cwd, t, t))
        for i, (role, parts) in enumerate(msgs):
            t += 5000
            mid = f"msg_{t:x}{n:02d}{i:03d}"
            data = {"role": role, "time": {"created": t}, "agent": "build",
                    "model": {"providerID": "fake", "modelID": "fake-model"}} if role == "user" else \
                   {"parentID": "x", "role": "assistant", "mode": "build", "agent": "build",
                    "path": {"cwd": cwd, "root": "/"}, "time": {"created": t, "completed": t + 900}, "finish": "stop"}
            con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, t, t, json.dumps(data)))
            for j, p in enumerate(parts):
                con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                            (f"prt_{t:x}{n:02d}{i:03d}{j:02d}", mid, sid, t, t, json.dumps(p)))
    con.commit()
    return con


def text(t, **kw):
    return {"type": "text", "text": t, **kw}


def agent(t):
    return [{"type": "step-start"}, text(t, time={"start": T0, "end": T0}),
            {"reason": "stop", "type": "step-finish", "tokens": {"total": 37}, "cost": 0}]


def env_for(tmp_path) -> dict:
    return {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def db_path(tmp_path):
    return tmp_path / "data" / "opencode" / "opencode.db"


def payload(event: str, sid: str, cwd: str, prompt: str | None = None) -> dict:
    body = {"shim": "chrollo-opencode", "shim_version": 1, "harness": "opencode", "hook_event_name": event,
            "cwd": cwd, "session_id": sid}
    if prompt is not None:
        body["parts"] = [{"type": "text", "text": prompt, "synthetic": False, "ignored": False}]
    return body


def test_two_sessions_in_one_database_each_capture_their_own_turns(home, tmp_path):
    """The database holds every session: a session's hook reads its own rows, not the first
    session's (it did: the second session's file held the first one's prompt)."""
    cwd = str(tmp_path)
    con = opencode_db(db_path(tmp_path), {
        "ses_first0001": (cwd, None, [("user", [text('"fail: 400\nplease summarise the release checklist"')])]),
    })
    env = env_for(tmp_path)
    ok(hook(home, "opencode", "chat.message", payload("chat.message", "ses_first0001", cwd,
                                                      '"fail: 400\nplease summarise the release checklist"'), **env))
    ok(hook(home, "opencode", "session.idle", payload("session.idle", "ses_first0001", cwd), **env))
    ok(hook(home, "opencode", "chat.message", payload("chat.message", "ses_second002", cwd,
                                                      '"say: the checklist has five steps"'), **env))
    t = T0 + 60000
    con.execute("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
                "VALUES ('ses_second002', 'global', 's', ?, 't', '1.18.33', ?, ?)", (cwd, t, t))
    for mid, role, part in (("msg_b1", "user", text('"say: the checklist has five steps"')),
                            ("msg_b2", "assistant", text("the checklist has five steps"))):
        t += 1000
        con.execute("INSERT INTO message VALUES (?, 'ses_second002', ?, ?, ?)",
                    (mid, t, t, json.dumps({"role": role, "time": {"created": t}})))
        con.execute("INSERT INTO part VALUES (?, ?, 'ses_second002', ?, ?, ?)", ("prt_" + mid, mid, t, t, json.dumps(part)))
    con.commit()
    ok(hook(home, "opencode", "session.idle", payload("session.idle", "ses_second002", cwd), **env))
    files = {p.read_text("utf-8").split('session_id: "')[1][:13]: p.read_text("utf-8") for p in vault_files(home)}
    assert set(files) == {"ses_first0001", "ses_second002"}
    assert "fail: 400" not in files["ses_second002"]
    assert "[User]\nsay: the checklist has five steps\n" in files["ses_second002"]
    assert "> the checklist has five steps" in files["ses_second002"]
    assert "[User]\nfail: 400\nplease summarise the release checklist\n" in files["ses_first0001"]
