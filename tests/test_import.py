"""`chrollo import`: real transcript fixtures → the same session files as live capture, once."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import run, run_json
from hookkit import OWN_FIXTURES, hook, ok, payload, sets, snapshot, vault_files
from recorded import materialise
from test_hook_capture import CLAUDE_RUN, assert_expected, prompt_lines, session_file, turns_of
from test_harness_adapters import SHARED_TRANSCRIPTS, TRANSCRIPTS

from chrollo.harness import importers
ROOTS = {"claude-code": "claude-code/projects", "codex": "codex/sessions", "gemini": "gemini/tmp",
         "pi": "pi/sessions", "qwen-code": "qwen-code/projects"}


def copy_tree(tmp: Path, src: Path = OWN_FIXTURES) -> Path:
    dst = tmp / "transcripts"
    shutil.copytree(src / "transcripts", dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def imp(home, *args, **env):
    p, out = run_json(["import", *map(str, args)], home, **env)
    assert p.returncode == 0, p.stderr
    return out


def _own_subagents(home, tmp):
    """Claude Code 2.1.330's background subagent and /compact (tests/fixtures/recorded)."""
    imp(home, "claude-code", "--source", materialise(CLAUDE_RUN, tmp / "run", tmp / "work"))
    sid = "ec4e8646-6fa2-482c-a8c1-9455d7b32d84"
    sub = session_file(home, f"{sid}:a5c94e535a9c4460d")
    assert turns_of(sub)[0][1] == "check the module and report"
    return [sub]


def _shared_subagents(home, tmp):
    """The inline sidechain of 2.0.13 (../shared); 2.1.39's compaction agent's own file is left
    out, as live capture leaves it out (#33 item 13)."""
    side = session_file(home, "609efeca-2f51-4118-b077-e91c9fe63f73:sidechain")
    assert turns_of(side)[0][1].startswith("Hey there! Just checking in")
    assert not any("acompact-fffbd0" in f.read_text() for f in vault_files(home))
    return [side]


@pytest.mark.parametrize("src,transcripts,subagents", sets((TRANSCRIPTS, _own_subagents),
                                                           (SHARED_TRANSCRIPTS, _shared_subagents)))
def test_every_fixture_transcript_imports_to_its_turns(home, tmp_path, src, transcripts, subagents):
    root = copy_tree(tmp_path, src)
    for harness, folder in ROOTS.items():
        if not (root / folder).exists():   # (../shared has no Qwen Code chats)
            continue
        out = imp(home, harness, "--source", root / folder)
        assert out["failed"] == 0 and out["skipped"] == 0 and out["imported"] == out["files"] > 0
    checked = 0
    for exp in sorted((src / "expected").glob("*/*.turns.json")):
        assert_expected(session_file(home, exp.name.removesuffix(".turns.json")), exp)
        checked += 1
    assert checked >= 3
    for rel, (harness, roles, first) in transcripts.items():
        got = [f for f in vault_files(home) if f.name.endswith(".md") and
               turns_of(f) and turns_of(f)[0][1].startswith(first) and harness in f.read_text()]
        assert got, rel
        assert "".join(t[0][0].upper() for t in turns_of(got[0])) == roles
    for sub in subagents(home, tmp_path):  # a subagent's own file, linked to its parent
        assert "parent_session" in sub.read_text()
    for f in vault_files(home):
        assert f.stat().st_mode & 0o777 == 0o600


def test_import_twice_changes_nothing(home, tmp_path):
    src = copy_tree(tmp_path)
    imp(home, "codex", "--source", src / ROOTS["codex"])
    before = snapshot(home)
    again = imp(home, "codex", "--source", src / ROOTS["codex"])
    assert again["unchanged"] == again["files"] and again["turns"] == 0
    assert snapshot(home) == before
    # and with the size/mtime shortcut gone (state wiped), still nothing new
    shutil.rmtree(home / "state")
    third = imp(home, "codex", "--source", src / ROOTS["codex"])
    assert third["turns"] == 0 and snapshot(home) == before


@pytest.mark.parametrize("src,rel", sets(
    ("claude-code/projects/-home-user-project/159ba704-46fa-43cf-9343-e0001f5e3c1e.jsonl",),
    ("claude-code/projects/-home-user-projects-spotter/d6e0bada-1959-4eec-a9d2-0bfade768d8f.jsonl",)))
def test_a_grown_session_gets_only_its_new_turns(home, tmp_path, src, rel):
    lines = (src / "transcripts" / rel).read_bytes().splitlines(keepends=True)
    sid = Path(rel).stem
    want = json.loads((src / "expected/claude-code" / f"{sid}.turns.json").read_text())
    dst = tmp_path / "projects" / "-p" / f"{sid}.jsonl"
    dst.parent.mkdir(parents=True)
    dst.write_bytes(b"".join(lines[:prompt_lines(lines)[1]]))  # the first turn, answered
    first = imp(home, "claude-code", "--source", tmp_path / "projects")
    assert first["imported"] == 1 and first["turns"] == 2
    dst.write_bytes(b"".join(lines))
    second = imp(home, "claude-code", "--source", tmp_path / "projects")
    assert second["updated"] == 1 and second["turns"] == len(want) - 2
    assert_expected(session_file(home, sid), src / "expected/claude-code" / f"{sid}.turns.json")


@pytest.mark.parametrize("src,claude_events,more", sets(
    (("Stop",), []), (("Stop", "SubagentStop"), ["609efeca-2f51-4118-b077-e91c9fe63f73:sidechain"])))
def test_live_captured_then_imported_is_one_file(home, tmp_path, src, claude_events, more):
    sids = []
    for name in claude_events:
        body = payload("claude-code", name, tmp_path, src)
        ok(hook(home, "claude-code", name, body))
        sids.append(body["session_id"])
    for event in ("before_agent_start", "agent_end"):
        body = payload("pi", event, tmp_path, src)
        ok(hook(home, "pi", event, body))
    sids.append(body["session_id"])
    ups = payload("codex", "UserPromptSubmit", tmp_path, src, transcript_path=None)
    ok(hook(home, "codex", "UserPromptSubmit", ups))
    ok(hook(home, "codex", "Stop", payload("codex", "Stop", tmp_path, src, transcript_path=None)))
    sids.append(ups["session_id"])
    live = {f.name for f in vault_files(home)}
    # the harness's own transcripts, in place (the hooks read the same files)
    imp(home, "claude-code", "--source", tmp_path / "transcripts/claude-code/projects")
    imp(home, "pi", "--source", tmp_path / "transcripts/pi/sessions")
    root = copy_tree(tmp_path / "c", src)
    imp(home, "codex", "--source", root / "codex/sessions")
    assert live <= {f.name for f in vault_files(home)}
    for sid in dict.fromkeys(sids + more):
        f = session_file(home, sid)  # exactly one file each
        turns = turns_of(f)
        assert len({(r, t) for r, t, _ in turns}) == len(turns), f"{sid}: a turn written twice"
    codex = [t[1] for t in turns_of(session_file(home, ups["session_id"])) if t[0] == "user"]
    assert codex.count(ups["prompt"].strip()) == 1


@pytest.mark.parametrize("src,rel", sets(
    ("pi/sessions/--home-user-project--/2026-11-23T21-03-37-390Z_01a20a38-b19b-7399-8f8c-b83a933d3059.jsonl",),
    ("pi/sessions/--home-user-dev-agentlogs-fixtures-pi--/"
     "2026-02-03T22-02-17-181Z_1fa031b8-444e-429d-bbaa-1db4cda65b5f.jsonl",)))
def test_hostile_files_are_reported_never_fatal(home, tmp_path, src, rel):
    root = tmp_path / "sessions" / "--proj--"
    root.mkdir(parents=True)
    good = (src / "transcripts" / rel).read_bytes()
    (root / "good.jsonl").write_bytes(good)
    (root / "truncated.jsonl").write_bytes(good[: len(good) // 2 + 7])  # cut inside a line
    (root / "nul.jsonl").write_bytes(b"\x00\x01\x02binary junk\x00" * 1000)
    (root / "huge-line.jsonl").write_bytes(good.splitlines(keepends=True)[0] + b'{"x": "' + b"y" * (50 << 20) + b"\n")
    (root / "x.jsonl").mkdir()
    (root / "empty.jsonl").write_bytes(b"")
    (tmp_path / "elsewhere.jsonl").write_bytes(good)
    (root / "link.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")  # live capture never follows one either
    out = imp(home, "pi", "--source", tmp_path / "sessions")
    by_name = {Path(p["path"]).name: p for p in out["problems"]}
    assert out["files"] == 7
    for name in ("x.jsonl", "link.jsonl"):
        assert by_name[name]["status"] == "skipped" and "regular file" in by_name[name]["reason"]
    assert by_name["nul.jsonl"]["status"] == "skipped"
    assert by_name["empty.jsonl"]["status"] == "skipped"
    assert "good.jsonl" not in by_name
    assert out["imported"] >= 1 and out["failed"] == 0
    human = run(["import", "pi", "--source", tmp_path / "sessions"], home)
    assert human.returncode == 0 and "unchanged" in human.stdout


def test_dry_run_since_and_missing_sources(home, tmp_path):
    src = copy_tree(tmp_path)
    dry = imp(home, "gemini", "--source", src / ROOTS["gemini"], "--dry-run")
    assert dry["dry_run"] and dry["turns"] > 0 and not vault_files(home)
    old = imp(home, "gemini", "--source", src / ROOTS["gemini"], "--since", "2999-01-01")
    assert old["skipped"] == old["files"] and not vault_files(home)
    p, err = run_json(["import", "pi", "--source", tmp_path / "nope"], home)
    assert p.returncode == 1 and err["error"]["kind"] == "source_not_found"
    p, err = run_json(["import", "jsonl"], home)
    assert p.returncode == 2 and err["error"]["kind"] == "bad_usage"
    fake = tmp_path / "emptyhome"
    fake.mkdir()
    out = imp(home, "all", HOME=fake, CLAUDE_CONFIG_DIR=fake / "c", CODEX_HOME=fake / "x")
    assert out["files"] == 0


def test_default_locations(home, tmp_path):
    src = copy_tree(tmp_path)
    fake = tmp_path / "h"
    (fake / ".gemini").mkdir(parents=True)
    shutil.copytree(src / "gemini/tmp", fake / ".gemini/tmp")
    env = {"HOME": fake, "CLAUDE_CONFIG_DIR": src / "claude-code", "CODEX_HOME": src / "codex",
           "PI_CODING_AGENT_DIR": src / "pi", "QWEN_HOME": src / "qwen-code", "XDG_DATA_HOME": fake / ".local" / "share"}
    out = imp(home, "all", **env)
    assert out["files"] == len(TRANSCRIPTS) and out["failed"] == 0
    assert set(out["roots"]) == set(importers())  # (every source; only the four hold files here)
    assert {"claude-code", "codex", "copilot", "gemini", "opencode", "pi", "qwen-code"} < set(out["roots"])


def test_generic_jsonl_and_old_chrollo_vault(home, tmp_path):
    f = tmp_path / "chats" / "my-tool-session.jsonl"
    f.parent.mkdir()
    f.write_text("\n".join(json.dumps(x) for x in [
        {"role": "user", "content": "how do I bump the helm chart version", "timestamp": "2026-05-01T10:00:00Z",
         "session_id": "tool-0001"},
        {"role": "assistant", "content": [{"type": "text", "text": "Edit Chart.yaml and run helm package."}],
         "timestamp": "2026-05-01T10:00:05Z"},
        {"role": "system", "content": "ignored"}]) + "\n")
    out = imp(home, "jsonl", "--source", f.parent, "--as", "my-tool")
    assert out["imported"] == 1
    s = session_file(home, "tool-0001")
    assert "harness: \"my-tool\"" in s.read_text()
    assert [t[0] for t in turns_of(s)] == ["user", "agent"]
    old = tmp_path / "old"
    old.mkdir()
    legacy = "---\nsession_id: old-1\n---\n\n[10:00:00] [User] what is the deploy command\n[10:00:05] [Agent]\n> make deploy\n"
    (old / "2025-01-02_100000_old-1.md").write_text(legacy)
    (old / "notes.md").write_text("not a session")
    out = imp(home, "chrollo-vault", "--source", old)
    assert out["imported"] == 1 and out["skipped"] == 1
    assert (home / "memories" / "2025-01-02_100000_old-1.md").read_text() == legacy
    assert imp(home, "chrollo-vault", "--source", old)["unchanged"] == 1
    p, hits = run_json(["search", "deploy", "command"], home)
    assert hits["hits"] and hits["hits"][0]["path"].endswith("2025-01-02_100000_old-1.md")


COMPACT_PROMPT = "Your task is to create a detailed summary of the conversation so far"


def with_compaction_agent(tmp: Path) -> tuple:
    """The recorded Claude Code run plus what some versions leave after /compact: the summary
    agent's own sidechain transcript, subagents/agent-acompact-<id>.jsonl."""
    root = materialise(CLAUDE_RUN, tmp / "run", tmp / "work")
    (sub,) = root.rglob("agent-*.jsonl")
    compact = sub.with_name("agent-acompact-7f3e2a.jsonl")
    compact.write_text(sub.read_text().replace("a5c94e535a9c4460d", "acompact-7f3e2a")
                       .replace("check the module and report", COMPACT_PROMPT))
    return root, compact


def test_compaction_agent_transcripts_are_left_out_as_live_capture_does(home, tmp_path):
    # #33 item 13: import made a session of /compact's own prompt (titled with it in Obsidian)
    root, compact = with_compaction_agent(tmp_path)
    out = imp(home, "claude-code", "--source", root)
    assert out["failed"] == 0 and str(compact) not in json.dumps(out), out
    texts = [f.read_text() for f in vault_files(home)]
    assert texts and not any(COMPACT_PROMPT in t or "acompact" in t for t in texts)
    sid = "ec4e8646-6fa2-482c-a8c1-9455d7b32d84"
    assert turns_of(session_file(home, f"{sid}:a5c94e535a9c4460d"))[0][1] == "check the module and report"
    # live capture: the same agent's SubagentStop writes nothing either
    before = snapshot(home)
    body = {"hook_event_name": "SubagentStop", "session_id": sid, "agent_id": "acompact-7f3e2a", "agent_type": "",
            "agent_transcript_path": str(compact), "transcript_path": None, "cwd": str(tmp_path / "work"),
            "last_assistant_message": "<summary>…</summary>"}
    p = hook(home, "claude-code", "SubagentStop", body)
    ok(p)
    assert p.stdout == b"" and snapshot(home) == before


def test_a_wrong_source_imports_nothing_says_so_and_marks_nothing_done(home, tmp_path):
    # #33 item 6: `import jsonl` of a Claude Code transcript said "unchanged 1" and recorded the
    # file as seen, so `import claude-code` of the same folder never imported it
    root = materialise(CLAUDE_RUN, tmp_path / "run", tmp_path / "work")
    main = next(root.glob("*/*.jsonl"))
    for _ in range(2):  # the second run is no "unchanged" either
        out = imp(home, "jsonl", "--source", main)
        assert (out["imported"], out["unchanged"], out["skipped"], out["turns"]) == (0, 0, 1, 0), out
        (problem,) = out["problems"]
        assert "no jsonl turns recognised" in problem["reason"]
        assert "chrollo import claude-code --source" in problem["reason"], problem
    assert not vault_files(home)
    human = run(["import", "jsonl", "--source", main], home)
    assert human.returncode == 0 and "skipped: " in human.stdout and "claude-code transcript" in human.stdout
    out = imp(home, "claude-code", "--source", root)
    assert out["imported"] == out["files"] == 2 and out["unchanged"] == 0, out


def test_generic_jsonl_sessions_epoch_seconds_and_malformed_lines(home, tmp_path):
    # #33 item 7: three session_ids were one session under the first; epoch seconds were read
    # as milliseconds (1970-01-21); malformed lines were counted, never reported
    lines = [json.dumps(x) for x in [
        {"role": "user", "content": "alpha asks about the helm chart", "timestamp": 1767261600, "session_id": "s-one"},
        {"role": "assistant", "content": "alpha answer", "timestamp": 1767261605},
        {"role": "user", "content": "bravo asks about terraform", "timestamp": 1767348000000, "session_id": "s-two"},
        {"role": "assistant", "content": "bravo answer", "timestamp": 1767348005000, "session_id": "s-two"}]]
    lines.insert(2, '{"role": "user", "content": "a torn line')
    lines += [json.dumps({"role": "user", "content": "charlie asks about redis", "timestamp": "2026-01-03T10:00:00Z",
                          "session_id": "s-three"}),
              json.dumps({"role": "assistant", "content": "charlie answer", "timestamp": "2026-01-03T10:00:09Z"})]
    f = tmp_path / "export.jsonl"
    f.write_text("\n".join(lines) + "\n")
    human = run(["import", "jsonl", "--source", f, "--dry-run"], home)
    assert human.returncode == 0 and "1 unreadable line skipped" in human.stdout
    out = imp(home, "jsonl", "--source", f)
    assert out["imported"] == 1 and out["turns"] == 6, out
    (problem,) = out["problems"]
    assert problem["path"] == str(f) and "1 unreadable line skipped" in problem["reason"], problem
    got = {}
    for sid, day, first in (("s-one", "2026-01-01", "alpha asks"), ("s-two", "2026-01-02", "bravo asks"),
                            ("s-three", "2026-01-03", "charlie asks")):
        s = session_file(home, sid)
        got[sid] = [t[1] for t in turns_of(s)]
        assert s.name.startswith(day) and got[sid][0].startswith(first), (s.name, got[sid])
    assert got["s-one"] == ["alpha asks about the helm chart", "alpha answer"]
    assert got["s-two"] == ["bravo asks about terraform", "bravo answer"]
    again = imp(home, "jsonl", "--source", f)
    assert again["turns"] == 0 and len(vault_files(home)) == 3
