"""Privacy: forget (sessions, lines), excluded projects, opt-outs, <private> spans — through the
real `chrollo hook` processes, the real importer and the real CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from hookkit import hook, ok, vault_files
from conftest import ROOT, run, run_json, write_session

from chrollo.session import read_session

SID = "7f3c2a1e-0b4d-4c55-9e21-5a0c8e7d6f10"
SECRET = "sk_live_51H8xQpL2eZvKYlo2C9a8bT7"


class Claude:
    """A Claude Code session as the harness leaves it: a transcript under projects/<slug>/
    and the payloads its hooks send."""

    def __init__(self, root: Path, cwd: Path, sid: str = SID):
        self.sid, self.cwd = sid, cwd
        self.path = root / "projects" / "-work-proj" / f"{sid}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch()
        self.n = 0

    def turn(self, prompt: str, answer: str) -> None:
        self.n += 1
        recs = [
            {"type": "user", "uuid": f"u{self.n}", "sessionId": self.sid, "cwd": str(self.cwd),
             "timestamp": f"2026-10-30T10:{self.n:02d}:00Z", "message": {"role": "user", "content": prompt}},
            {"type": "assistant", "uuid": f"a{self.n}", "sessionId": self.sid, "cwd": str(self.cwd),
             "timestamp": f"2026-10-30T10:{self.n:02d}:05Z",
             "message": {"id": f"m{self.n}", "role": "assistant", "content": [{"type": "text", "text": answer}]}},
        ]
        with self.path.open("a") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in recs))

    def payload(self, event: str, **extra) -> dict:
        return {"session_id": self.sid, "transcript_path": str(self.path), "cwd": str(self.cwd),
                "hook_event_name": event, **extra}

    def live(self, home: Path, prompt: str, answer: str, **env) -> bytes:
        """One turn as Claude Code runs it: UserPromptSubmit (recall), the reply, Stop."""
        p = hook(home, "claude-code", "UserPromptSubmit", self.payload("UserPromptSubmit", prompt=prompt), **env)
        ok(p)
        self.turn(prompt, answer)
        ok(hook(home, "claude-code", "Stop", self.payload("Stop", last_assistant_message=answer), **env))
        return p.stdout


def _project(tmp_path: Path, name: str = "proj") -> Path:
    d = tmp_path / name
    (d / ".git").mkdir(parents=True)
    return d


def _texts(home: Path) -> str:
    return "".join(p.read_text() for p in vault_files(home))


def _import(home: Path, root: Path) -> dict:
    p, out = run_json(["import", "claude-code", "--source", root / "projects"], home)
    assert p.returncode == 0, p.stderr
    return out


# ----------------------------------------------------------------------------- forget sessions

def test_forgotten_session_stays_gone_as_it_goes_on_after_import_and_twice(home, tmp_path):
    s = Claude(tmp_path / "claude", _project(tmp_path))
    s.live(home, "why does the ledger settle twice", "Because the retry wraps the whole settle.")
    (f,) = vault_files(home)
    p, out = run_json(["forget", SID[:12]], home)
    assert p.returncode == 0 and out["sessions"][0]["session_id"] == SID
    assert not f.exists() and vault_files(home) == []
    # the session goes on: its later turns are not kept either
    s.live(home, "and what about the refund path", "The refund path has the same retry.")
    assert vault_files(home) == []
    # import of the whole transcript does not bring it back
    out = _import(home, tmp_path / "claude")
    assert out["files"] == out["skipped"] == 1 and "forgotten" in out["problems"][0]["reason"]
    assert vault_files(home) == []
    # nothing of it stays in chrollo's state either (the pending prompt held its text)
    state = home / "state"
    leftovers = [p for p in state.rglob("*.json") if p.name != "forgotten.json"]
    assert not any("refund path" in p.read_text() for p in leftovers)
    # twice is fine
    p = run(["forget", SID[:12]], home)
    assert p.returncode == 0 and "already forgotten" in p.stdout


def test_forget_dry_run_range_project_and_subagents(home, tmp_path):
    v = home / "memories"
    a = write_session(v, "aaaaaaaa-1", "2026-10-01T09:00:00", [("user", "09:00:01", "alpha question")], cwd="/w/client")
    b = write_session(v, "bbbbbbbb-2", "2026-10-15T09:00:00", [("user", "09:00:01", "beta question")], cwd="/w/client/sub")
    c = write_session(v, "cccccccc-3", "2026-10-20T09:00:00", [("user", "09:00:01", "gamma question")], cwd="/w/other")
    from chrollo.session import SessionMeta, SessionWriter, Turn
    import datetime as dt

    sub = SessionWriter(SessionMeta("cccccccc-3:agent1", dt.datetime(2026, 10, 20, 9, 5), "claude-code", "/w/other",
                                    parent_session="cccccccc-3"), v, fsync=False).append(
        [Turn.user("subagent task", dt.datetime(2026, 10, 20, 9, 5))])
    before = {p: p.read_bytes() for p in (a, b, c, sub)}
    p, out = run_json(["forget", "--project", "/w/client", "--dry-run"], home)
    assert p.returncode == 0 and out["dry_run"] is True
    assert sorted(Path(s["path"]).name for s in out["sessions"]) == sorted([a.name, b.name])
    assert {p: p.read_bytes() for p in before} == before  # a dry run changes nothing
    assert not (home / "state" / "forgotten.json").exists()
    p, out = run_json(["forget", "--since", "2026-10-10", "--until", "2026-10-16"], home)
    assert [Path(s["path"]) for s in out["sessions"]] == [b] and not b.exists() and a.exists()
    p, out = run_json(["forget", c.name], home)  # a session goes with its subagents
    assert sorted(Path(s["path"]) for s in out["sessions"]) == sorted([c, sub])
    assert not c.exists() and not sub.exists()
    tomb = json.loads((home / "state" / "forgotten.json").read_text())
    assert {"bbbbbbbb-2", "cccccccc-3", "cccccccc-3:agent1"} <= set(tomb["sessions"])
    assert oct(os.stat(home / "state" / "forgotten.json").st_mode & 0o777) == "0o600"


def test_forget_refuses_paths_outside_the_vault_and_bad_usage(home, tmp_path):
    v = home / "memories"
    write_session(v, "aaaaaaaa-1", "2026-10-01T09:00:00", [("user", "09:00:01", "alpha question")])
    outside = tmp_path / "outside.md"
    outside.write_text("---\nsession_id: \"x\"\n---\n")
    (v / "2026-10-02_090000_linkedxx.md").symlink_to(outside)
    for target in (str(outside), "2026-10-02_090000_linkedxx.md", "../outside.md"):
        p, out = run_json(["forget", target], home)
        assert p.returncode == 1 and out["error"]["kind"] in ("outside_vault", "file_not_found"), (target, out)
    assert outside.exists()
    p, out = run_json(["forget"], home)
    assert p.returncode == 2 and out["error"]["kind"] == "bad_usage"
    p, out = run_json(["forget", "--since", "0001-13-01"], home)
    assert p.returncode == 2 and out["error"]["kind"] == "bad_date"
    p, out = run_json(["forget", "--lines", "(", "--regex"], home)
    assert p.returncode == 2 and out["error"]["kind"] == "bad_pattern"
    p, out = run_json(["forget", "no-such-session-id"], home)
    assert p.returncode == 1 and out["error"]["kind"] == "file_not_found"


# ----------------------------------------------------------------------------- forget lines

def test_forgotten_line_is_gone_from_every_file_and_no_other_byte_changed(home, tmp_path):
    v = home / "memories"
    a = write_session(v, "aaaaaaaa-1", "2026-10-01T09:00:00", [
        ("user", "09:00:01", f"export STRIPE_KEY={SECRET}\nthen deploy"),
        ("agent", "09:00:05", [f"I set {SECRET} in the env.", "Deployed."])])
    b = write_session(v / "peers" / "laptop", "bbbbbbbb-2", "2026-10-02T09:00:00",
                      [("user", "09:00:01", f"the key was {SECRET} right?")])
    c = write_session(v, "cccccccc-3", "2026-10-03T09:00:00", [("user", "09:00:01", "nothing secret here")])
    before = {p: p.read_text() for p in (a, b, c)}
    p, out = run_json(["forget", "--lines", SECRET], home)
    assert p.returncode == 0 and out["lines"]["count"] == 3 and out["lines"]["pattern_added"] == SECRET
    for path, old in before.items():
        new = path.read_text()
        assert SECRET not in new
        old_lines, new_lines = old.split("\n"), new.split("\n")
        assert len(old_lines) == len(new_lines)
        for o, n in zip(old_lines, new_lines):  # only the matching lines changed, to the marker
            assert n == o or (SECRET in o and n in ("[forgotten by chrollo]", "> [forgotten by chrollo]"))
    assert "then deploy" in a.read_text() and "> Deployed." in a.read_text()
    assert c.read_text() == before[c]
    assert oct(os.stat(a).st_mode & 0o777) == "0o600"
    assert not [x for x in v.rglob(".*") if x.is_file()]  # no temp file left behind
    # twice: nothing more to do
    p, out = run_json(["forget", "--lines", SECRET], home)
    assert out["lines"]["count"] == 0 and out["lines"]["pattern_added"] is None


def test_a_forgotten_pattern_stays_out_of_later_captures_and_imports(home, tmp_path):
    run(["forget", "--lines", SECRET], home)  # a pattern is remembered even before it occurs
    s = Claude(tmp_path / "claude", _project(tmp_path))
    s.live(home, f"use {SECRET} for the charge test", "Done, the charge test uses the live key.")
    text = _texts(home)
    assert SECRET not in text and "[forgotten by chrollo]" in text and "the charge test uses" in text
    other = Claude(tmp_path / "claude", _project(tmp_path, "proj2"), sid="0a0b0c0d-1111-2222-3333-444455556666")
    other.turn(f"key {SECRET} leaked in the log?", "Yes, rotate it.")
    _import(home, tmp_path / "claude")
    assert SECRET not in _texts(home) and "Yes, rotate it." in _texts(home)


CONCURRENT = textwrap.dedent("""
    import datetime as dt, sys
    from pathlib import Path
    from chrollo.privacy import writer_scrub
    from chrollo.session import SessionMeta, SessionWriter, Turn
    who, n, vault, secret = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    meta = SessionMeta("busy-session-0001", dt.datetime(2026, 6, 10, 14, 0, 0), "claude-code", "/w")
    w = SessionWriter(meta, vault, fsync=False, scrub=writer_scrub)  # (as capture writes)
    t = dt.datetime(2026, 6, 10, 14, 0, 0)
    for j in range(n):
        w.append([Turn.user(f"writer {who} turn {j}" + (f" key {secret}" if j % 5 == 0 else ""), t),
                  Turn.agent([f"reply {who}-{j}"], t)])
""")


def test_16_concurrent_captures_during_forget_lose_nothing(home, tmp_path):
    v = home / "memories"
    keep = write_session(v, "dddddddd-4", "2026-06-01T09:00:00", [("user", "09:00:01", f"old {SECRET} line")])
    doomed = write_session(v, "eeeeeeee-5", "2026-06-02T09:00:00", [("user", "09:00:01", "a session to forget")])
    env = dict(os.environ, CHROLLO_HOME=str(home), PYTHONPATH=str(ROOT))
    writers = [subprocess.Popen([sys.executable, "-c", CONCURRENT, f"p{i:02d}", "40", str(v), SECRET], env=env)
               for i in range(16)]
    forgets = [run(["forget", "--lines", SECRET], home), run(["forget", "--yes", doomed.name], home),
               run(["forget", "--lines", SECRET], home)]
    assert all(w.wait(timeout=300) == 0 for w in writers)
    assert all(f.returncode == 0 for f in forgets), [f.stderr for f in forgets]
    busy = [p for p in v.glob("*.md") if read_session(p).meta.get("session_id") == "busy-session-0001"]
    assert len(busy) == 1
    turns = read_session(busy[0]).turns
    marker_users = [t.text for t in turns if t.role == "user" and "forgotten by chrollo" in t.text]
    assert len(turns) == 16 * 40 * 2  # none lost, none duplicated
    assert len(set(t.text for t in turns if t.role == "agent")) == 16 * 40
    assert len({t.text for t in turns if t.role == "user"} - set(marker_users)) == 16 * 40 - 16 * 8
    assert SECRET not in busy[0].read_text() and SECRET not in keep.read_text()
    assert len(marker_users) == 16 * 8  # every fifth turn of each writer held the key
    assert not doomed.exists()


# ----------------------------------------------------------------------------- keep out

def test_excluded_project_captures_and_injects_nothing(home, tmp_path):
    proj, other = _project(tmp_path), _project(tmp_path, "other")
    s = Claude(tmp_path / "claude", proj)
    s.live(home, "how do we rotate the walrus certificates", "Run make rotate-walrus-certs in ops/.")
    assert len(vault_files(home)) == 1
    p, out = run_json(["exclude", "add", str(proj)], home)
    assert out == {"exclude": [str(proj.resolve())]}
    # in the excluded project: nothing captured, nothing injected
    s2 = Claude(tmp_path / "claude", proj / "sub", sid="11111111-2222-3333-4444-555555555555")
    (proj / "sub").mkdir()
    reply = s2.live(home, "how do we rotate the walrus certificates again", "Same as before.")
    assert reply == b"" and len(vault_files(home)) == 1
    # elsewhere, the excluded project's older session is never injected
    s3 = Claude(tmp_path / "claude", other, sid="22222222-3333-4444-5555-666666666666")
    assert s3.live(home, "how do we rotate the walrus certificates here", "Look it up.") == b""
    # and import skips its transcripts
    before = _texts(home)
    _import(home, tmp_path / "claude")
    assert "Same as before." not in _texts(home)
    p, out = run_json(["exclude", "remove", str(proj)], home)
    assert out == {"exclude": []}
    p, out = run_json(["exclude", "remove", str(proj)], home)
    assert p.returncode == 1 and out["error"]["kind"] == "not_excluded"
    assert run_json(["exclude", "add"], home)[1]["error"]["kind"] == "bad_usage"
    assert before


def test_capture_env_off_and_a_repository_opt_out(home, tmp_path):
    proj = _project(tmp_path)
    Claude(tmp_path / "claude", proj).live(home, "how do we rotate the walrus certificates",
                                           "Run make rotate-walrus-certs.", CHROLLO_CAPTURE="off")
    assert vault_files(home) == []
    # a cloned repository can turn capture (and recall) off for itself
    repo = _project(tmp_path, "cloned")
    (repo / ".chrollo-private").write_text("capture: on\n")  # whatever it says: off
    (repo / "src").mkdir()
    s = Claude(tmp_path / "claude", repo / "src", sid="33333333-4444-5555-6666-777777777777")
    s.live(home, "tell me about this repository layout", "It has src/ only.")
    assert vault_files(home) == []
    Claude(tmp_path / "claude", proj, sid="44444444-5555-6666-7777-888888888888").live(
        home, "how do we rotate the walrus certificates", "Run make rotate-walrus-certs.")
    assert len(vault_files(home)) == 1
    assert s.live(home, "how do we rotate the walrus certificates", "no idea") == b""


def test_private_span_never_reaches_the_vault_or_a_recall_block(home, tmp_path):
    s = Claude(tmp_path / "claude", _project(tmp_path))
    s.live(home, "connect to the billing db <private>password hunter2-zebra</private> and list the tables",
           "Connected; tables: invoices, refunds.")
    # no transcript (Codex exec without one): the payload's prompt is kept, minus the span
    codex = {"session_id": "55555555-6666-7777-8888-999999999999", "cwd": str(tmp_path / "proj"),
             "transcript_path": None}
    ok(hook(home, "codex", "UserPromptSubmit", dict(codex, hook_event_name="UserPromptSubmit",
                                                   prompt="deploy with <PRIVATE>token hunter2-zebra and the rest")))
    ok(hook(home, "codex", "Stop", dict(codex, hook_event_name="Stop", last_assistant_message="Deployed.")))
    text = _texts(home)
    assert "hunter2" not in text
    assert "connect to the billing db <private>[not stored]</private> and list the tables" in text
    assert "deploy with <private>[not stored]</private>" in text
    _import(home, tmp_path / "claude")
    assert "hunter2" not in _texts(home)
    recall = Claude(tmp_path / "claude", _project(tmp_path, "p3"), sid="66666666-7777-8888-9999-000000000000")
    out = recall.live(home, "which tables are in the billing db password", "invoices, refunds")
    assert b"billing db" in out and b"hunter2" not in out


def test_a_prompt_marks_its_session_private(home, tmp_path):
    s = Claude(tmp_path / "claude", _project(tmp_path))
    s.live(home, "draft the offer letter for the new hire", "Here is a draft of the offer letter.")
    assert len(vault_files(home)) == 1
    s.live(home, "#chrollo-private this one is confidential, keep going", "Understood.")
    assert vault_files(home) == []
    s.live(home, "now add the salary figures to the letter", "Added the salary figures.")
    assert vault_files(home) == []
    _import(home, tmp_path / "claude")
    assert vault_files(home) == []
    # importing a transcript that says so is the same
    t = Claude(tmp_path / "claude2", _project(tmp_path, "q"), sid="77777777-8888-9999-0000-111111111111")
    t.turn("plan the surprise party", "Sure.")
    t.turn("#CHROLLO-PRIVATE please", "Ok.")
    out = _import(home, tmp_path / "claude2")
    assert vault_files(home) == [] and out["files"] == 1


def test_doctor_lists_what_is_kept_out(home, tmp_path):
    proj = _project(tmp_path)
    run(["exclude", "add", str(proj)], home)
    run(["forget", "--lines", SECRET], home)
    p, out = run_json(["doctor", "--harness", "pi"], home)
    (check,) = [c for c in out["checks"] if c["name"] == "privacy"]
    assert str(proj.resolve()) in check["detail"] and "1 forgotten line patterns" in check["detail"]


# ----------------------------------------------------------------------------- the mesh

def test_a_forgotten_session_is_withdrawn_from_peers_and_never_taken_back(tmp_path):
    from meshkit import Node

    a, b = Node(tmp_path, "alpha"), Node(tmp_path, "bravo")
    gone = a.session("aaaa0001-forget", "alpha pasted the staging database dump here")
    a.session("aaaa0002-keep", "alpha tuned the ingress timeouts")
    b.session("bbbb0001-keep", "bravo wrote the runbook")
    a.pair(b)
    b.pair(a)
    shared = tmp_path / "shared"
    shared.mkdir()
    for n in (a, b, a, b):
        p, out = n.sync("--folder", str(shared))
        assert p.returncode == 0, out
    assert gone.name in b.peer_files("alpha") and len(b.peer_files("alpha")) == 2
    # alpha forgets a session: it stops publishing it and tells its peers it was withdrawn
    assert a.cli("forget", "--yes", gone.name).returncode == 0
    a.sync("--folder", str(shared))
    p, out = b.sync("--folder", str(shared))
    assert p.returncode == 0 and out["peers"][0]["withdrawn"] == 1, out
    assert list(b.peer_files("alpha")) == ["2026-10-01_100000_aaaa0002.md"]
    # bravo forgets alpha's other file locally: the next sync does not bring it back
    keep = b.vault / "peers" / "alpha" / "2026-10-01_100000_aaaa0002.md"
    assert b.cli("forget", "--yes", str(keep)).returncode == 0 and not keep.exists()
    for n in (a, b):
        n.sync("--folder", str(shared))
    assert b.peer_files("alpha") == {}
    # and alpha's own capture or import never brings its forgotten session back either
    assert not gone.exists()


def test_forget_secrets_scrubs_what_was_captured_before_redaction_was_on(home, tmp_path):
    v = home / "memories"
    a = write_session(v, "aaaaaaaa-1", "2026-10-01T09:00:00", [
        ("user", "09:00:01", f"set STRIPE_KEY={SECRET} and DATABASE_URL=postgres://app:s3cr3tpw@db:5432/x"),
        ("agent", "09:00:05", ["Done; the ledger tests pass.", "Also rotated the npm token npm_abcdefghijklmnopqrstuvwxyz0123456789"])])
    b = write_session(v, "bbbbbbbb-2", "2026-10-02T09:00:00", [("user", "09:00:01", "nothing secret here, just refactor the parser")])
    before_b = b.read_text()
    p, out = run_json(["forget", "--secrets", "--dry-run"], home)
    assert p.returncode == 0 and [Path(f["path"]) for f in out["lines"]["files"]] == [a] and SECRET in a.read_text()
    p, out = run_json(["forget", "--secrets"], home)
    text = a.read_text()
    for secret in (SECRET, "s3cr3tpw", "npm_abcdefghijklmnopqrstuvwxyz0123456789"):
        assert secret not in text
    assert "[REDACTED:" in text and "Done; the ledger tests pass." in text and "postgres://app:" in text
    assert b.read_text() == before_b
    assert [t.role for t in read_session(a).turns] == ["user", "agent"]
    p, out = run_json(["forget", "--secrets"], home)  # twice: nothing left to do
    assert out["lines"]["count"] == 0


def test_config_turns_capture_redaction_on_and_off(home, tmp_path):
    assert run_json(["config"], home)[1]["redact-capture"] == "off"
    s = Claude(tmp_path / "claude", _project(tmp_path))
    s.live(home, f"the stripe key is {SECRET} for staging", "Noted, staging uses it.")
    assert SECRET in _texts(home)
    p, out = run_json(["config", "redact-capture", "on"], home)
    assert p.returncode == 0 and out == {"redact-capture": "on"}
    s.live(home, f"and for prod it is {SECRET[:-4]}Zq9w", "Noted for prod.")
    assert f"{SECRET[:-4]}Zq9w" not in _texts(home) and "[REDACTED:" in _texts(home)
    assert run_json(["config", "redact-capture", "off"], home)[1] == {"redact-capture": "off"}
    assert run_json(["config", "nope"], home)[0].returncode == 2


def test_forget_reaches_every_session_a_search_finds_even_in_a_hidden_md_folder(home, tmp_path):
    """One walk of a vault's files (chrollo.vaultfiles): rg's `-g '*.md'` reads a hidden folder
    named `*.md`, so search finds its sessions — and forget must reach them too (it walked on
    its own and skipped every hidden folder)."""
    from conftest import run_json, write_session

    vault = home / "memories"
    write_session(vault / ".notes.md", "h1dden00-x", "2026-10-01T10:00:00",
                  [("user", "10:00:00", "the quokka deployment password rotation")])
    write_session(vault, "v1s1ble0-x", "2026-10-02T10:00:00", [("user", "10:00:00", "plain session")])
    p, out = run_json(["search", "quokka"], home)
    assert [h["session_id"] for h in out["hits"]] == ["h1dden00-x"]
    p, out = run_json(["forget", "h1dden00-x", "--yes"], home)
    assert p.returncode == 0, p.stderr
    assert [s["session_id"] for s in out["sessions"]] == ["h1dden00-x"]
    assert not list((vault / ".notes.md").glob("*.md"))
    p, out = run_json(["search", "quokka"], home)
    assert out["hits"] == []
