"""#46 item 3: `chrollo import` reads the transcripts other tools keep (Cursor, Aider, Cline, Roo Code,
Kilo Code and Kilo Code CLI, Continue, Goose, Kimi, Factory Droid, OpenHands, Crush), each under its own harness label, once,
and never trips on a hostile file. Fixtures: tests/fixtures/import/<harness>/ (their README says
where each shape comes from: recorded from the real tool, or a public sample)."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from conftest import ROOT, run, run_json
from hookkit import OWN_FIXTURES, hook, ok, snapshot, vault_files
from test_hook_capture import session_file, turns_of

from chrollo.fileformat import parse_frontmatter
from chrollo.harness import import_only, importers, names

FIXTURES = ROOT / "tests" / "fixtures" / "import"

# (harness, session id, first prompt, roles of its turns, tools the agent called)
EXPECTED = [
    ("cursor", "5f0c1a2e-7b3d-4c8e-9a61-2d4e8f9b0c13", "why does the checkout test fail on CI but not locally?",
     "UAUA", ["$", "Edit"]),
    ("cursor", "5f0c1a2e-7b3d-4c8e-9a61-2d4e8f9b0c13:a1b2c3d4-0000-4000-8000-00000000beef",
     "Find every test that calls new Date() without an argument", "UA", ["Grep"]),
    ("cursor", "0b7e2d55-1c3a-4f7e-8d2b-6a9c0e1f2a3b", "rename the redis key prefix to shop:v2", "UA", []),
    ("cursor", "e2a4c6d8-1f3b-4a5c-9e7d-0b2c4d6e8f10", "how do I make the api client retry on 429?", "UAUA",
     ["codebase_search", "edit_file", "$"]),
    ("cursor", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", "what does the Makefile's dist target do?", "UA", []),
    ("aider", None, "what does app.py print?", "UA", []),
    ("continue", "40090cb3-8d9a-44e8-a905-4a1727a88f5e", "list the migrations", "UA", ["$"]),
    ("continue", "34802306-5ccc-4c3a-95b2-3875eeee52ab", "where is the retry limit set?", "UA", []),
    ("cline", "1764668400000", "add a health check endpoint to the express app", "UAUAUA",
     ["readFile", "editedExistingFile", "$"]),
    ("cline", "1796192783998_311oh", "list the migrations", "UA", ["$"]),
    ("cline", "1796192759549_cc6ry", "where is the rate limit configured?", "UA", []),
    ("roo-code", "0193c2f1-6d1e-7a40-9b2c-5e8f7a1d3c44", "why is the docker build slow?", "UA", ["readFile"]),
    ("kilo-code", "0193f0a1-2b3c-7d4e-8f5a-6b7c8d9e0f1a", "rename the env var API_URL", "UA", ["searchFiles", "$"]),
    ("factory-droid", "7c2f9e40-1b5a-4d8e-a3c6-0f9e8d7c6b5a", "the invoice total is off by a cent", "UAUA",
     ["Grep", "Edit", "$"]),
    ("kimi", "3e1d5b7a-9c2f-4e6a-8b0d-1f2e3d4c5b6a", "the nightly etl job runs twice", "UAUA", ["$", "StrReplaceFile"]),
    ("goose", "20261105_1", "the upload test fails one run in ten", "UA", ["$"]),
    ("goose", "20261106_1", "which port does the dev server use?", "UA", []),
    ("goose", "20250627_105959", "draft release notes", "UA", ["$"]),
    ("openhands", "6b1f0c2a9d3e4f5a8b7c6d5e4f3a2b1c", "make the CSV export stream rows", "UA",
     ["$", "str_replace_editor"]),
    ("openhands", "a41e2c5b7d9f", "why does the build need node 18?", "UA", ["$"]),
    ("crush", "s-7d1f", "the nightly backup script exits 0", "UAUA", ["view", "edit", "$"]),
    ("kilo-cli", "ses_kilo7c1d2e3f4a", "why does the cart total round half up?", "UAUA", []),
]


def fake_home(tmp: Path) -> tuple:
    """A home holding every import fixture's store where its tool keeps it, plus the four hook
    harnesses' recorded transcripts (through their variables); returns (home, env)."""
    home = tmp / "userhome"
    for h in sorted(p.name for p in FIXTURES.iterdir() if (p / "home").is_dir()):
        shutil.copytree(FIXTURES / h / "home", home, dirs_exist_ok=True)
    for db, sql in ((home / ".local/share/goose/sessions/sessions.db", FIXTURES / "goose/sessions.sql"),
                    (home / ".config/Cursor/User/globalStorage/state.vscdb", FIXTURES / "cursor/state.vscdb.sql"),
                    (home / ".local/share/kilo/kilo.db", FIXTURES / "kilo-cli/kilo.db.sql")):
        db.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(db) as con:
            con.executescript(sql.read_text("utf-8"))
        con.close()
    crush = home / "work/ops/.crush"
    crush.mkdir(parents=True)
    with sqlite3.connect(crush / "crush.db") as con:
        con.executescript((FIXTURES / "crush/crush.db.sql").read_text("utf-8"))
    con.close()
    listed = {"projects": [{"path": str(crush.parent), "data_dir": str(crush), "last_accessed": "2026-11-10T09:00:00Z"},
                           {"path": "/gone", "data_dir": "/gone/.crush", "last_accessed": "2026-01-01T00:00:00Z"}]}
    (home / ".local/share/crush").mkdir(parents=True)
    (home / ".local/share/crush/projects.json").write_text(json.dumps(listed, indent=2))
    src = tmp / "harnesses"
    shutil.copytree(OWN_FIXTURES / "transcripts", src)
    (home / ".gemini").mkdir()
    shutil.move(str(src / "gemini" / "tmp"), home / ".gemini" / "tmp")
    env = {"HOME": home, "CLAUDE_CONFIG_DIR": src / "claude-code", "CODEX_HOME": src / "codex",
           "PI_CODING_AGENT_DIR": src / "pi"}
    return home, env


def imp(home, *args, **env):
    p, out = run_json(["import", *map(str, args)], home, **env)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    return out


def labels(home) -> dict:
    """harness label -> session files of it in the vault."""
    out: dict = {}
    for f in vault_files(home):
        if f.suffix == ".md" and f.name != "chrollo.base":
            head = parse_frontmatter(f.read_text("utf-8").split("\n"))[0]
            out.setdefault(head.get("harness"), []).append(f)
    return out


def test_import_all_fills_memory_from_every_tool_on_the_machine_each_under_its_label(home, tmp_path):
    user, env = fake_home(tmp_path)
    out = imp(home, "all", **env)
    assert out["failed"] == 0 and out["skipped"] == 0, out["problems"]
    assert set(out["roots"]) == set(importers())
    got = labels(home)
    # (this home holds no store of the three newest hook harnesses: their import is tested
    # in tests/test_harness_{copilot,opencode,qwen_code}.py and end to end)
    assert set(got) == set(importers()) - {"copilot", "opencode", "qwen-code"} and len(got) >= 12, sorted(got)
    for harness, sid, first, roles, tools in EXPECTED:
        files = got[harness] if sid is None else [session_file(home, sid)]
        f = next(f for f in files if turns_of(f)[0][1].startswith(first))
        assert f in got[harness], (harness, f.name)
        turns = turns_of(f)
        assert "".join(t[0][0].upper() for t in turns) == roles, (harness, turns)
        assert [n for t in turns for n in t[2]] == tools, (harness, turns)
    p, found = run_json(["search", "retry", "429", "--harness", "cursor"], home)
    assert p.returncode == 0 and found["hits"], found  # (the label is one search filters by)
    # re-running writes nothing; nor does it with the import record gone (byte-identical)
    before = snapshot(home)
    again = imp(home, "all", **env)
    assert again["turns"] == 0 and again["imported"] == again["updated"] == 0 and snapshot(home) == before
    shutil.rmtree(home / "state")  # (every watermark gone: what the files hold is still not written twice)
    third = imp(home, "all", **env)
    assert third["turns"] == 0 and snapshot(home) == before


def test_what_is_not_a_turn_is_left_out(home, tmp_path):
    user, env = fake_home(tmp_path)
    imp(home, "all", **env)
    text = "\n".join(f.read_text("utf-8") for fs in labels(home).values() for f in fs)
    for hidden in ("[REDACTED]", "<user_query>", "<timestamp>", "<system-reminder>", "CHECKPOINT 0",
                   "TodoWrite is available", "Context was summarised", "HAS_CHANGES", "api_req_started",
                   "partial text still streaming", "Tokens: 10 sent", "<user_input", "The user wants a health endpoint",
                   "timeout of 2000ms exceeded", "You are OpenHands agent", "<environment_details>"):
        assert hidden not in text, hidden
    (kimi,) = labels(home)["kimi"]  # (a prompt's time from wire.jsonl's TurnBegin; its answer's the same)
    assert kimi.name.startswith("2026-11-0") and "[2026-11-0" in kimi.read_text("utf-8")
    old_chat = session_file(home, "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d")  # (its bubble's timingInfo)
    import datetime as dt

    asked = dt.datetime.fromtimestamp(1740000123).strftime("%Y-%m-%d %H:%M:%S")  # (not createdAt's …000)
    assert f"## [{asked}] [User]" in old_chat.read_text("utf-8")
    aider = labels(home)["aider"]
    assert len(aider) == 3  # one session per "# aider chat started at" header
    edit = next(f for f in aider if "greet with hello" in f.read_text("utf-8"))
    assert ">>>>>>> REPLACE" in turns_of(edit)[1][1]  # the model's edit block, not aider's "> " output


def test_import_help_lists_every_source_and_the_registry_tells_hooks_from_import_only():
    assert set(import_only()) >= {"cursor", "aider", "cline", "roo-code", "kilo-code", "continue", "goose", "kimi",
                                  "factory-droid", "openhands", "crush", "kilo-cli"}
    assert not set(import_only()) & set(names()) and importers()[:len(names())] == names()
    p = run(["import", "--help"], Path(os.environ["CHROLLO_HOME"]))
    assert p.returncode == 0
    for name in importers():
        assert f"\n    {name} " in p.stdout.replace("\n      ", "\n    "), name
    p = run(["install", "cursor"], Path(os.environ["CHROLLO_HOME"]))
    assert p.returncode == 2  # (import-only: nothing to install in it)


def test_every_import_only_adapter_has_a_whole_profile():
    from chrollo.harness import adapter, canonical

    for name in import_only():
        m = adapter(name)
        assert m.NAME == name and not hasattr(m, "EVENTS") and canonical(name) is None
        assert os.path.isabs(m.home_dir()) and m.IMPORT_HELP and callable(m.read_transcript)
        folder, patterns = m.TRANSCRIPTS
        assert patterns or callable(getattr(m, "find", None))
        assert callable(m.session_of)


# ----------------------------------------------------------------------------- hostile input

def _first_file(harness: str, name: str) -> Path:
    return next(p for p in sorted((FIXTURES / harness / "home").rglob(name)) if p.is_file())


HOSTILE = [("cursor", "*.jsonl"), ("aider", ".aider.chat.history.md"), ("cline", "ui_messages.json"),
           ("cline", "*.messages.json"), ("continue", "*-*-*-*-*.json"), ("factory-droid", "*.jsonl"),
           ("kimi", "context.jsonl"), ("goose", "*.jsonl"), ("openhands", "event-00000-*.json")]
BAD = {
    "non-utf8": b"\xff\xfe\x80 not text \xc3\x28\n" * 50,
    "wrong-types": b'{"role": 5, "message": [1, 2], "content": {"x": null}, "history": 7}\n[1, 2, 3]\n'
                   b'"just a string"\n{"type": "session_start", "id": 12}\n',
    "empty": b"",
    "deep": b"[" * 100000 + b"]" * 100000 + b"\n",
}


@pytest.mark.parametrize("harness,name", HOSTILE)
def test_hostile_files_are_skipped_with_a_reason_never_a_crash(home, tmp_path, harness, name):
    from chrollo.importer import run_import

    good = _first_file(harness, name)
    data = good.read_bytes()
    cases = dict(BAD, truncated=data[: len(data) // 2 + 3])
    if harness in ("aider", "kimi", "continue"):  # (one line, or one JSON document, over 64 MiB)
        cases["huge-line"] = b'{"role": "user", "content": "' + b"y" * (65 << 20) + b'"\n'
    results = {}
    for name, body in cases.items():
        f = tmp_path / name / ("events" if harness == "openhands" else "") / good.name
        f.parent.mkdir(parents=True)
        f.write_bytes(body)
        results[name] = run_import(harness, f).results
    fifo = tmp_path / "fifo" / good.name
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    link = tmp_path / "link" / good.name
    link.parent.mkdir()
    link.symlink_to(good)
    for name, f in (("fifo", fifo), ("link", link)):
        results[name] = run_import(harness, f).results
    for name, (r,) in results.items():
        assert r.status != "failed", (name, r.to_json())
        if name != "truncated":  # (half a file may still hold a whole turn)
            assert r.status == "skipped" and r.reason and not r.turns, (name, r.to_json())
    assert "regular file" in results["link"][0].reason and "regular file" in results["fifo"][0].reason
    if harness == "continue":
        assert "larger than 64 MiB" in results["huge-line"][0].reason
    # the same through the CLI: exit 0, the reasons listed, no traceback
    out = imp(home, harness, "--source", tmp_path / "non-utf8" / ("events" if harness == "openhands" else "") / good.name)
    assert out["skipped"] == 1 and out["problems"][0]["reason"]


# ----------------------------------------------------------------------------- Cursor at the Claude Code hook

def cursor_payload(tmp: Path, event: str, **more) -> dict:
    """A hook payload as Cursor sends it to the hooks of ~/.claude/settings.json: Cursor's common
    fields (conversation_id, generation_id, workspace_roots, cursor_version, model, user_email,
    transcript_path) and its own event names (cursor.com/docs/agent/hooks)."""
    sid = "5f0c1a2e-7b3d-4c8e-9a61-2d4e8f9b0c13"
    src = FIXTURES / "cursor/home/.cursor/projects/home-dev-shop/agent-transcripts" / sid / f"{sid}.jsonl"
    dst = tmp / ".cursor/projects/home-dev-shop/agent-transcripts" / sid / f"{sid}.jsonl"
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    body = {"conversation_id": sid, "generation_id": "9c1e2f3a-4b5c-4d6e-8f70-112233445566",
            "model": "claude-4.5-sonnet", "hook_event_name": event, "cursor_version": "2.1.48",
            "workspace_roots": [str(tmp / "shop")], "user_email": "dev@example.com",
            "transcript_path": str(dst)}
    body.update(more)
    return body


@pytest.mark.parametrize("names,claude_fields", [(("beforeSubmitPrompt", "stop"), False),
                                                   (("UserPromptSubmit", "Stop"), True)])
def test_a_cursor_turn_at_the_claude_code_hook_is_labelled_cursor(home, tmp_path, names, claude_fields):
    """Cursor's own event names and fields, or the Claude Code names with a session_id beside them
    (before, both were lost: Claude Code's reader found no turn in Cursor's transcript)."""
    (tmp_path / "shop").mkdir()
    prompt = "why does the checkout test fail on CI but not locally?"
    same = {"session_id": "5f0c1a2e-7b3d-4c8e-9a61-2d4e8f9b0c13", "cwd": str(tmp_path / "shop")} if claude_fields else {}
    ok(hook(home, "claude-code", "UserPromptSubmit", cursor_payload(tmp_path, names[0], prompt=prompt,
                                                                     attachments=[], **same)))
    ok(hook(home, "claude-code", "Stop", cursor_payload(tmp_path, names[1], status="completed", loop_count=0, **same)))
    got = labels(home)
    assert set(got) == {"cursor"}, sorted(got)
    (f,) = got["cursor"]
    head = parse_frontmatter(f.read_text("utf-8").split("\n"))[0]
    assert head["session_id"] == "5f0c1a2e-7b3d-4c8e-9a61-2d4e8f9b0c13" and head["cwd"] == str(tmp_path / "shop")
    turns = turns_of(f)
    assert [t[0] for t in turns] == ["user", "agent", "user", "agent"] and turns[0][1] == prompt
    assert "[REDACTED]" not in f.read_text("utf-8")
    # a Claude Code payload is still Claude Code's
    claude = {"session_id": "c1a2b3c4-0000-4000-8000-000000000001", "transcript_path": None, "cwd": str(tmp_path),
              "hook_event_name": "UserPromptSubmit", "prompt": "how are the docs built?"}
    ok(hook(home, "claude-code", "UserPromptSubmit", claude))
    ok(hook(home, "claude-code", "Stop", dict(claude, hook_event_name="Stop", last_assistant_message="With mkdocs.")))
    assert set(labels(home)) == {"cursor", "claude-code"}
    # importing Cursor's transcripts afterwards adds nothing: one session, one file
    before = snapshot(home)
    out = imp(home, "cursor", "--source", tmp_path / ".cursor/projects")
    assert out["turns"] == 0 and snapshot(home) == before, out


@pytest.mark.parametrize("harness,name,junk", [
    ("cursor", "state.vscdb", ["CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);",
                               "INSERT INTO cursorDiskKV VALUES ('composerData:c1', 'not json {');",
                               "INSERT INTO cursorDiskKV VALUES ('composerData:c2', '[1, 2]');",
                               "INSERT INTO cursorDiskKV VALUES ('composerData:c3', '{\"fullConversationHeadersOnly\": [7, null, {\"bubbleId\": 5}]}');",
                               "INSERT INTO cursorDiskKV VALUES ('bubbleId:c3:5', x'fffe00');"]),
    ("crush", "crush.db", ["CREATE TABLE sessions (id TEXT, created_at INTEGER);",
                           "CREATE TABLE messages (id TEXT, session_id TEXT, role TEXT, parts BLOB, created_at INTEGER);",
                           "INSERT INTO sessions VALUES ('s1', 1);",
                           "INSERT INTO messages VALUES ('m1', 's1', 'user', x'ff00', 1);",
                           "INSERT INTO messages VALUES ('m2', 's1', 'user', '[{\"type\": \"text\", \"data\": 5}]', 'x');",
                           "INSERT INTO messages VALUES ('m3', 's1', 'assistant', '{\"type\": \"text\"}', 2);"]),
    ("goose", "sessions.db", ["CREATE TABLE sessions (id TEXT, working_dir TEXT, created_at TEXT);",
                              "CREATE TABLE messages (id INTEGER, session_id TEXT, role TEXT, content_json TEXT, created_timestamp INTEGER, metadata_json TEXT);",
                              "INSERT INTO sessions VALUES ('s1', '../../etc', 'x');",
                              "INSERT INTO sessions VALUES (NULL, 5, NULL);",
                              "INSERT INTO messages VALUES (1, 's1', 'user', 'not json', 'soon', '{');",
                              "INSERT INTO messages VALUES (2, 's1', 7, '{\"a\": 1}', NULL, NULL);"]),
])
def test_a_hostile_database_is_skipped_with_a_reason_and_left_as_it_was(home, tmp_path, harness, name, junk):
    from chrollo.importer import run_import

    not_sqlite = tmp_path / "a" / name
    not_sqlite.parent.mkdir()
    not_sqlite.write_bytes(b"SQLite format 3\x00" + b"\x00garbage" * 500)
    other = tmp_path / "b" / name
    other.parent.mkdir()
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE t (x)")
    con.close()
    bad = tmp_path / "c" / name
    bad.parent.mkdir()
    with sqlite3.connect(bad) as con:
        con.executescript("\n".join(junk))
    con.close()
    before = {p: p.read_bytes() for p in (not_sqlite, other, bad)}
    for db in (not_sqlite, other, bad):
        (r,) = run_import(harness, db).results
        assert r.status == "skipped" and r.reason and not r.turns, r.to_json()
    assert {p: p.read_bytes() for p in before} == before  # (opened read-only: not a byte changed)
    assert sorted(os.listdir(bad.parent)) == [name]  # (no journal or -wal left beside it)


def _grow_cursor(home: Path) -> None:
    f = next(home.glob(".cursor/projects/*/agent-transcripts/*/5f0c*.jsonl"))
    with open(f, "a") as fh:
        fh.write(json.dumps({"role": "user", "message": {"content": [{"type": "text", "text":
                 "<timestamp>Thursday, Jul 23, 2026, 1:40 PM (UTC+9)</timestamp>\n<user_query>\nrun it once more\n</user_query>"}]}}) + "\n")
        fh.write(json.dumps({"role": "assistant", "message": {"content": [{"type": "text", "text": "Green again."}]}}) + "\n")


def _grow_aider(home: Path) -> None:
    with open(next(home.rglob(".aider.chat.history.md")), "a") as fh:
        fh.write("#### and in python 2?  \n\nNo: print('hello') is a statement there, and prints the same.\n\n")


def _grow_continue(home: Path) -> None:
    f = next(home.glob(".continue/sessions/34802306-*.json"))
    doc = json.loads(f.read_text())
    doc["history"] += [{"message": {"role": "user", "content": "and the backoff?"}, "contextItems": []},
                       {"message": {"role": "assistant", "content": "Exponential, 200 ms doubling."}, "contextItems": []}]
    f.write_text(json.dumps(doc))


def _grow_goose(home: Path) -> None:
    with sqlite3.connect(home / ".local/share/goose/sessions/sessions.db") as con:
        con.execute("INSERT INTO messages (message_id, session_id, role, content_json, created_timestamp) VALUES "
                    "('msg_b3', '20261106_1', 'user', '[{\"type\":\"text\",\"text\":\"and in production?\"}]', 1793973700),"
                    "('msg_b4', '20261106_1', 'assistant', '[{\"type\":\"text\",\"text\":\"8080, behind nginx.\"}]', 1793973710)")
    con.close()


def _grow_openhands(home: Path) -> None:
    events = next(home.glob(".openhands/conversations/*/events"))
    for n, (src, text) in enumerate((("user", "and add a test for it"), ("agent", "Added test_export_streams."))):
        ev = {"id": f"e-{n}", "timestamp": f"2026-09-30T16:1{n}:00", "source": src, "kind": "MessageEvent",
              "llm_message": {"role": "user" if src == "user" else "assistant", "content": [{"type": "text", "text": text}]}}
        (events / f"event-{7 + n:05d}-e-{n}.json").write_text(json.dumps(ev))


@pytest.mark.parametrize("harness,grow,added", [("cursor", _grow_cursor, "run it once more"),
                                                ("aider", _grow_aider, "and in python 2?"),
                                                ("continue", _grow_continue, "and the backoff?"),
                                                ("goose", _grow_goose, "and in production?"),
                                                ("openhands", _grow_openhands, "and add a test for it")])
def test_a_grown_session_gets_only_its_new_turns(home, tmp_path, harness, grow, added):
    user, env = fake_home(tmp_path)
    first = imp(home, harness, **env)
    assert first["imported"] >= 1 and first["failed"] == 0
    before = snapshot(home)
    grow(user)
    second = imp(home, harness, **env)
    assert second["updated"] == 1 and second["turns"] == 2, second
    changed = [n for n, b in snapshot(home).items() if before.get(n) != b]
    assert len(changed) == 1 and set(snapshot(home)) == set(before)
    turns = turns_of(home / "memories" / changed[0])
    assert [t[1] for t in turns].count(added) == 1 and len({(t[0], t[1]) for t in turns}) == len(turns)


def test_a_forgotten_session_of_a_database_does_not_stop_the_others_in_it(home, tmp_path):
    user, env = fake_home(tmp_path)
    imp(home, "goose", **env)
    first = session_file(home, "20261105_1")  # (the database's first session)
    p = run(["forget", first.name, "--yes"], home)
    assert p.returncode == 0, p.stderr
    _grow_goose(user)
    out = imp(home, "goose", **env)
    assert out["turns"] == 2, out
    assert [t[1] for t in turns_of(session_file(home, "20261106_1"))][-1] == "8080, behind nginx."
    assert not any("upload test" in f.read_text("utf-8") for f in vault_files(home))


def test_cursor_prompt_and_its_time_come_from_the_tags_cursor_wraps_it_in():
    from chrollo.harness.cursor import prompt_of

    said, when = prompt_of("<timestamp>Wednesday, Sep 16, 2026, 12:05 AM (UTC-4:30)</timestamp>\n"
                           "<attached_files>\nsrc/a.ts\n</attached_files>\n<user_query>\n  fix the login bug\n</user_query>")
    assert said == "fix the login bug" and when.isoformat() == "2026-09-16T00:05:00-04:30"
    said, when = prompt_of("<timestamp>Friday, Feb 30, 2026, 1:00 PM (UTC+1)</timestamp>\nno query tags here")
    assert said == "no query tags here" and when is None  # (no such day: no time rather than a wrong one)


@pytest.mark.parametrize("harness,store", [("aider", "work"), ("cursor", ".cursor/projects"),
                                           ("continue", ".continue/sessions"), ("kimi", ".kimi/sessions"),
                                           ("factory-droid", ".factory/sessions")])
def test_the_same_transcript_found_twice_is_one_session(home, tmp_path, harness, store):
    """A copy of a tool's store (a backup, another machine's home) imported after the original
    adds nothing: a session is named by what the file holds, not by where it lies."""
    user, env = fake_home(tmp_path)
    imp(home, harness, **env)
    before = snapshot(home)
    copy = tmp_path / "backup" / "shop-copy"
    shutil.copytree(user / store, copy)
    out = imp(home, harness, "--source", copy, **env)
    assert out["turns"] == 0 and snapshot(home) == before, out


def test_a_forgotten_first_session_of_a_jsonl_file_does_not_stop_the_others(home, tmp_path):
    # (before: the file's first session decided for all — forgotten, the whole file was skipped)
    f = tmp_path / "export.jsonl"
    rows = [{"role": "user", "content": "alpha asks about the helm chart", "timestamp": 1767261600, "session_id": "s-one"},
            {"role": "assistant", "content": "alpha answer", "timestamp": 1767261605},
            {"role": "user", "content": "bravo asks about terraform", "timestamp": 1767348000, "session_id": "s-two"},
            {"role": "assistant", "content": "bravo answer", "timestamp": 1767348005}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    imp(home, "jsonl", "--source", f)
    p = run(["forget", session_file(home, "s-one").name, "--yes"], home)
    assert p.returncode == 0, p.stderr
    with open(f, "a") as fh:
        fh.write(json.dumps({"role": "user", "content": "bravo asks again", "timestamp": 1767348100, "session_id": "s-two"}) + "\n")
        fh.write(json.dumps({"role": "assistant", "content": "bravo again", "timestamp": 1767348105}) + "\n")
    out = imp(home, "jsonl", "--source", f)
    assert out["turns"] == 2, out
    assert [t[1] for t in turns_of(session_file(home, "s-two"))][-1] == "bravo again"
