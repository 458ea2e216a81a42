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


def test_a_prompt_opencode_run_quoted_is_stored_as_typed_and_synthetic_parts_are_not():
    from chrollo.harness.opencode import typed, user_text

    assert typed('"two words"') == "two words"
    assert typed('"say \\"hi\\" now"') == 'say "hi" now'     # (its quotes were escaped)
    assert typed('"oneword"') == '"oneword"'                 # no space: `run` never quoted it
    assert typed('"a" and "b"') == '"a" and "b"'             # not one quoted argument
    assert typed("plain prompt") == "plain prompt"
    parts = [text('"fix the flaky test"'), text("[chrollo-recall] Excerpts …", synthetic=True),
             text("Called the Read tool", synthetic=True), text("hidden", ignored=True), {"type": "file"}]
    assert user_text(parts) == "fix the flaky test"
    assert user_text([text("only added", synthetic=True)]) is None


def test_import_reads_every_session_of_the_database_as_live_capture_wrote_it(home, tmp_path):
    """The hooks' capture and `chrollo import opencode` read the same rows: the same bytes, and
    a second import adds nothing; a subagent's session (a parent) is left out by both."""
    cwd = str(tmp_path)
    sessions = {
        "ses_alpha0001": (cwd, None, [("user", [text('"the nightly backup runs at 02:00"')]),
                                      ("assistant", agent("noted: 02:00 from the cron host") +
                                       [{"type": "tool", "tool": "bash", "callID": "c1",
                                         "state": {"status": "completed", "input": {"command": "crontab -l"},
                                                   "output": "0 2 * * * backup"}}])]),
        "ses_child0002": (cwd, "ses_alpha0001", [("user", [text("a subagent's task")]),
                                                 ("assistant", agent("subagent answer"))]),
        "ses_beta00003": (cwd, None, [("user", [text("second session prompt")]),
                                      ("assistant", agent("second answer"))]),
    }
    opencode_db(db_path(tmp_path), sessions).close()
    env = env_for(tmp_path)
    for sid in ("ses_alpha0001", "ses_beta00003"):   # live: the plugin's two events per turn
        first = next(t for r, parts in sessions[sid][2] if r == "user" for t in [parts[0]["text"]])
        ok(hook(home, "opencode", "chat.message", payload("chat.message", sid, cwd, first), **env))
        ok(hook(home, "opencode", "session.idle", payload("session.idle", sid, cwd), **env))
    p = hook(home, "opencode", "chat.message", payload("chat.message", "ses_child0002", cwd, "a subagent's task"), **env)
    ok(p)
    live = {f.name: f.read_bytes() for f in vault_files(home)}
    assert len(live) == 2 and b"$ crontab -l" in b"".join(live.values()) and b"0 2 * * *" not in b"".join(live.values())
    other = tmp_path / "import-home"
    _p, first = run_json(["import", "opencode"], other, **env)
    assert {f.name: f.read_bytes() for f in vault_files(other)} == live
    _p, again = run_json(["import", "opencode"], other, **env)
    assert first["turns"] == 4 and again["turns"] == 0, (first, again)


def test_a_file_that_is_not_an_opencode_database_is_a_clear_skip(home, tmp_path):
    """Hostile input: garbage named opencode.db, a database of other tables, a FIFO — import
    skips each with its reason; the live hook exits 0 and writes nothing."""
    base = db_path(tmp_path).parent
    base.mkdir(parents=True)
    (base / "opencode.db").write_bytes(b"SQLite format 3\x00" + os.urandom(3000))
    con = sqlite3.connect(base / "opencode-beta.db")
    con.execute("CREATE TABLE session (id text)")
    con.commit()
    con.close()
    os.mkfifo(base / "opencode-fifo.db")
    env = env_for(tmp_path)
    _p, out = run_json(["import", "opencode"], home, **env)
    reasons = {os.path.basename(r["path"]): (r["status"], r["reason"]) for r in out["problems"]}
    assert set(reasons) == {"opencode.db", "opencode-beta.db", "opencode-fifo.db"}, out
    assert all(status == "skipped" for status, _ in reasons.values()), reasons
    assert "not an OpenCode database" in reasons["opencode-beta.db"][1]
    p = hook(home, "opencode", "session.idle", payload("session.idle", "ses_x0000001", str(tmp_path)), **env)
    ok(p)
    assert vault_files(home) == [] and p.stdout == b""


def test_reading_the_database_neither_writes_nor_holds_it(tmp_path):
    """Read-only and lock-free: OpenCode's own writer goes on while chrollo reads, and the
    database's bytes (its file and its write-ahead log) are unchanged by the read. (The -shm
    file is SQLite's shared index every reader marks, OpenCode's own included: not data.)"""
    from chrollo.harness.opencode import read_transcript, session_of

    path = db_path(tmp_path)
    con = opencode_db(path, {"ses_alpha0001": (str(tmp_path), None, [("user", [text("hello there")])])})
    data = ("opencode.db", "opencode.db-wal")
    before = {n: (path.parent / n).read_bytes() for n in data}
    assert session_of(str(path))["sessions"] == ["ses_alpha0001"]
    assert [u.text for u in read_transcript(str(path), 0, "ses_alpha0001").units] == ["hello there"]
    assert {n: (path.parent / n).read_bytes() for n in data} == before
    con.execute("BEGIN IMMEDIATE")     # the writer takes its lock while a reader is open
    assert [u.text for u in read_transcript(str(path), 0, "ses_alpha0001").units] == ["hello there"]
    con.execute("ROLLBACK")
    con.close()


def test_install_writes_the_plugin_and_opencode_json_mcp_and_uninstall_restores_them(home, tmp_path):
    from conftest import run

    env = env_for(tmp_path)
    cfg = tmp_path / "config" / "opencode"
    cfg.mkdir(parents=True)
    original = '{\n  // mine\n  "model": "fake/fake-model",\n  "autoupdate": false\n}\n'
    (cfg / "opencode.json").write_text(original)
    assert run(["install", "opencode"], home, **env).returncode == 0
    plugin = (cfg / "plugin" / "chrollo.js").read_text()
    imports = [line for line in plugin.splitlines() if line.startswith("import ")]
    assert "chrollo-opencode" in plugin and imports and all('from "node:' in line for line in imports)
    data = (cfg / "opencode.json").read_text()
    assert "// mine" in data
    from chrollo.jsonc import loads

    entry = loads(data)["mcp"]["chrollo"]
    assert entry["type"] == "local" and entry["command"][-1] == "mcp" and entry["enabled"] is True
    report = run_json(["doctor", "--harness", "opencode"], home, **env)[1]["harnesses"]["opencode"]
    assert report["status"] == "ok", report
    assert run(["uninstall", "opencode"], home, **env).returncode == 0
    assert (cfg / "opencode.json").read_text() == original
    assert not (cfg / "plugin" / "chrollo.js").exists()


def test_kilo_code_database_with_json_expression_indexes_imports(home, tmp_path):
    """Kilo Code CLI 7.7.9 (OpenCode underneath) writes the same tables into
    ~/.local/share/kilo/kilo.db, plus expression indexes on json_extract (copied from the
    database the real binary wrote): they are no reason to refuse the file."""
    path = tmp_path / "kilo" / "kilo.db"
    con = opencode_db(path, {"ses_kilo00001": (str(tmp_path), None, [
        ("user", [text('"hello from kilo code"')]), ("assistant", agent("pong from the fake model"))])})
    con.execute("""CREATE INDEX `recall_message_role_idx` ON `message` (`id`,json_extract("data", '$.role'),"""
                """coalesce(json_extract("data", '$.parentID'), ''))""")
    con.execute("""CREATE INDEX `part_session_step_finish_idx` ON `part` (`session_id`) WHERE json_valid("part"."data") """
                """AND json_extract("part"."data", '$.type') = 'step-finish'""")
    con.commit()
    con.close()
    _p, out = run_json(["import", "opencode", "--source", str(path)], home)
    assert out["imported"] == 1 and out["turns"] == 2, out
    (f,) = vault_files(home)
    assert "[User]\nhello from kilo code\n" in f.read_text("utf-8")


FAKE_OPENCODE = r"""
import * as mod from "./plugin.mjs";
const hooks = await Object.values(mod)[0]({ directory: process.env.PROJECT, worktree: "/", client: {} });
const message = { id: "msg_0001", sessionID: "ses_plugin0001", role: "user" };
const parts = [{ id: "prt_0001", sessionID: "ses_plugin0001", messageID: "msg_0001", type: "text",
                 text: '"how do we rotate the signing keys for the release pipeline?"' }];
await hooks["chat.message"]({ sessionID: "ses_plugin0001", agent: "build" }, { message, parts });
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "ses_plugin0001" } } });
await hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_plugin0001" } } });
const again = [{ id: "prt_0002", type: "text", text: "second prompt about the signing keys" }];
await hooks["chat.message"]({ sessionID: "ses_plugin0001" }, { message, parts: again });
console.log(JSON.stringify({ hooks: Object.keys(hooks).sort(), parts, again }));
"""


def _run_plugin(tmp_path, home, command: list, **env):
    import shutil
    import subprocess

    from chrollo.harness import adapter

    if shutil.which("node") is None:
        import pytest

        pytest.skip("node is not installed")
    (tmp_path / "plugin.mjs").write_text(adapter("opencode").extension_text(command))
    (tmp_path / "fake.mjs").write_text(FAKE_OPENCODE)
    from conftest import cli_env

    (tmp_path / "tmp").mkdir(exist_ok=True)   # (where the plugin records a session it told: not the machine's /tmp)
    p = subprocess.run(["node", "fake.mjs"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env=cli_env(home, PROJECT=str(tmp_path), TMPDIR=str(tmp_path / "tmp"), **env))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout), p.stderr


def test_the_plugin_adds_recall_as_a_synthetic_part_and_captures_at_idle(home, tmp_path, make_session):
    """The plugin as installed, run by the machine's `node` against a fake of OpenCode's plugin
    API: chat.message gets chrollo's recall as a synthetic part after the prompt; session.idle
    captures (the prompt as typed: run's quotes gone); other events do nothing."""
    import sys

    make_session(home / "memories", "old00000-9999-4999-8999-999999999999", "2026-10-01T10:00:00", [
        ("user", "10:00:00", "rotate the signing keys used by the release pipeline"),
        ("agent", "10:01:00", ["Signing keys rotate with `make rotate-keys`; the release pipeline reads them from CI."]),
    ])
    calls = tmp_path / "calls.log"
    wrapper = tmp_path / "chrollo-wrapper"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {calls}\nexec {sys.executable} -m chrollo "$@"\n')
    wrapper.chmod(0o755)
    out, _err = _run_plugin(tmp_path, home, [str(wrapper)], **env_for(tmp_path))
    assert out["hooks"] == ["chat.message", "event"]
    user, recall = out["parts"]
    assert recall["synthetic"] is True and recall["text"].startswith("[chrollo-recall]")
    assert "make rotate-keys" in recall["text"] and recall["messageID"] == "msg_0001"
    assert recall["id"] > user["id"]            # (OpenCode orders a message's parts by id)
    assert calls.read_text().splitlines() == ["hook chat.message --harness opencode",
                                              "hook session.idle --harness opencode",
                                              "hook chat.message --harness opencode"]
    (f,) = [p for p in vault_files(home) if "ses_plugin0001" in p.read_text("utf-8")]
    assert "[User]\nhow do we rotate the signing keys for the release pipeline?\n" in f.read_text("utf-8")


def test_the_plugin_without_chrollo_says_so_once_and_the_prompt_goes_on(home, tmp_path):
    from chrollo.packages import HOW_TO_INSTALL

    out, err = _run_plugin(tmp_path, home, [str(tmp_path / "gone" / "chrollo")], **env_for(tmp_path))
    assert [len(out["parts"]), len(out["again"])] == [1, 1]   # nothing added, nothing broken
    assert err.count(HOW_TO_INSTALL) == 1 and vault_files(home) == []
    # the session resumed by a new `opencode run` (a new process) is not told again: the
    # plugin records it where the packages' shim does
    assert [p.name for p in (tmp_path / "tmp" / f"chrollo-notice-{os.getuid()}").iterdir()] == ["ses_plugin0001"]
    _out, err = _run_plugin(tmp_path, home, [str(tmp_path / "gone" / "chrollo")], **env_for(tmp_path))
    assert HOW_TO_INSTALL not in err


def test_install_reports_the_plugin_by_opencode_s_name_for_it(home, tmp_path):
    from conftest import run

    p = run(["install", "opencode"], home, **env_for(tmp_path))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].startswith("opencode: opencode plugin installed ("), p.stdout
