"""The session file format (docs/design.md §4): byte-exact output, frontmatter, lazy creation, readers."""
from __future__ import annotations

import datetime as dt
import stat

import yaml

from chrollo.session import (SessionMeta, SessionWriter, ToolCall, Turn, find_session_file,
                             read_session)

T = dt.datetime(2026, 6, 10, 14, 25, 36)


def meta(sid="019eb1a9-bc39-7571-b68f-9e5ed2678d73", **kw):
    kw.setdefault("cwd", "/home/user/project")
    kw.setdefault("machine", "laptop")
    return SessionMeta(sid, T, kw.pop("harness", "claude-code"), **kw)


FIRST_TURNS = [
    Turn.user("what project are we working on", T),
    Turn.agent([ToolCall("Read", "notes/implementation-state.md"), ToolCall("Bash", "ls  -la\n"),
                "", "We're working on **Chrollo** — a persistent memory extension...\n\nSecond para."],
               T + dt.timedelta(seconds=4)),
]
BODY = (
    '[2026-06-10 14:25:36] [User]\n'
    'what project are we working on\n'
    '\n'
    '\n'
    '{h}[2026-06-10 14:25:40] [Agent]\n'
    '> <tool>Read notes/implementation-state.md</tool>\n'
    '> <tool>$ ls -la</tool>\n'
    "> We're working on **Chrollo** — a persistent memory extension...\n"
    '>\n'
    '> Second para.\n'
    '\n'
    '\n')


def test_byte_exact_file(home, tmp_path):
    vault = tmp_path / "v"
    path = SessionWriter(meta(), vault, fsync=False).append(FIRST_TURNS)
    assert path.name == "2026-06-10_142536_what_project_are_we_working_on_019eb1a9.md"
    assert path.read_text("utf-8") == (
        '---\n'
        'title: "what project are we working on"\n'
        'aliases:\n'
        '  - "what project are we working on"\n'
        'tags:\n'
        '  - "chrollo"\n'
        '  - "claude-code"\n'
        '  - "project"\n'
        'started: 2026-06-10T14:25:36\n'
        'project: "[[project]]"\n'
        'day: "[[2026-06-10]]"\n'
        'session_id: "019eb1a9-bc39-7571-b68f-9e5ed2678d73"\n'
        'date: 2026-06-10\n'
        'harness: "claude-code"\n'
        'cwd: "/home/user/project"\n'
        'machine: "laptop"\n'
        'chrollo_format: 2\n'
        '---\n'
        '\n'
        '## ' + BODY.format(h="## "))


def test_byte_exact_format_1_file(home, tmp_path):
    """Format 1, still written on request (comparisons) and by appends to format-1 files."""
    path = SessionWriter(meta(), tmp_path / "v", fsync=False, fmt=1).append(FIRST_TURNS[:1])
    SessionWriter(meta(), tmp_path / "v", fsync=False).append(FIRST_TURNS[1:])  # a format-2 writer
    assert path.name == "2026-06-10_142536_019eb1a9.md"
    assert path.read_text("utf-8") == (
        '---\n'
        'session_id: "019eb1a9-bc39-7571-b68f-9e5ed2678d73"\n'
        'date: "2026-06-10"\n'
        'harness: "claude-code"\n'
        'cwd: "/home/user/project"\n'
        'machine: "laptop"\n'
        'chrollo_format: 1\n'
        '---\n'
        '\n' + BODY.format(h=""))


def test_owner_only_permissions(home, tmp_path):
    vault = tmp_path / "v"
    path = SessionWriter(meta(), vault, fsync=False).append([Turn.user("hello there", T)])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(vault.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "state").stat().st_mode) == 0o700


def test_created_lazily_on_first_turn_with_content(home, tmp_path):
    vault = tmp_path / "v"
    w = SessionWriter(meta(), vault, fsync=False)
    assert w.append([Turn.user("   \n", T), Turn.agent([], T)]) is None
    assert not vault.exists() or not list(vault.iterdir())
    assert w.append([Turn.user("now something", T)]).exists()


def test_frontmatter_is_real_yaml_and_survives_hostile_values(home, tmp_path):
    m = meta(sid='id "quoted"\nnewline', cwd='/tmp/it\'s "a" dir\n\x85\u2028\x7f', harness="pi",
             parent_session="parent: {x}")
    path = SessionWriter(m, tmp_path / "v", fsync=False).append([Turn.user("hi there", T)])
    text = path.read_text("utf-8")
    fm = yaml.safe_load(text.split("---\n")[1])
    assert fm["session_id"] == 'id "quoted"\nnewline'
    assert fm["cwd"] == '/tmp/it\'s "a" dir\n\x85\u2028\x7f'
    assert fm["parent_session"] == "parent: {x}"
    assert fm["chrollo_format"] == 2
    assert read_session(path).meta == fm


def test_unknown_frontmatter_keys_survive_appends(home, tmp_path):
    w = SessionWriter(meta(), tmp_path / "v", fsync=False)
    path = w.append([Turn.user("first turn", T)])
    text = path.read_text("utf-8").replace("chrollo_format: 2\n", "chrollo_format: 2\nlabels: [infra, ci]\n")
    path.write_text(text, "utf-8")
    w.append([Turn.user("second turn", T)])
    s = read_session(path)
    assert s.meta["labels"] == ["infra", "ci"]
    assert [t.text for t in s.turns] == ["first turn", "second turn"]


def test_deleted_file_is_recreated_from_saved_metadata(home, tmp_path):
    vault = tmp_path / "v"
    path = SessionWriter(meta(), vault, fsync=False).append([Turn.user("first turn", T)])
    path.unlink()
    # a new writer (a new hook process) only knows the session id and harness
    w2 = SessionWriter(meta(cwd="", machine=None), vault, fsync=False)
    again = w2.append([Turn.user("after deletion", T)])
    assert again == path
    s = read_session(again)
    assert [t.text for t in s.turns] == ["after deletion"]
    assert s.meta["session_id"] == meta().session_id


def test_name_collision_gets_a_suffix_identity_is_the_full_id(home, tmp_path):
    vault = tmp_path / "v"
    a = SessionWriter(meta("019eb1a9-aaaa"), vault, fsync=False).append([Turn.user("one", T)])
    b = SessionWriter(meta("019eb1a9-bbbb"), vault, fsync=False).append([Turn.user("two", T)])
    assert a.name == "2026-06-10_142536_one_019eb1a9.md"
    assert b.name == "2026-06-10_142536_two_019eb1a9.md"  # different titles: no collision
    c = SessionWriter(meta("019eb1a9-cccc"), vault, fsync=False).append([Turn.user("two", T)])
    assert c.name == "2026-06-10_142536_two_019eb1a9-2.md"
    assert find_session_file(vault, "019eb1a9-cccc") == c
    assert find_session_file(vault, "019eb1a9-bbbb") == b
    assert find_session_file(vault, "019eb1a9-aaaa") == a
    # appends keep going to the right file
    SessionWriter(meta("019eb1a9-bbbb"), vault, fsync=False).append([Turn.user("three", T)])
    assert [t.text for t in read_session(b).turns] == ["two", "three"]


def test_unsafe_session_ids_make_safe_names(home, tmp_path):
    for sid in ["../../etc/passwd", "/abs/path", "a/b", "", "\n\n"]:
        p = SessionWriter(meta(sid), tmp_path / "v", fsync=False).append([Turn.user("x1", T)])
        assert p.parent == tmp_path / "v"
        assert read_session(p).meta["session_id"] == sid


def test_user_text_that_looks_like_a_header_round_trips(home, tmp_path):
    text = "paste:\n[2026-06-10 14:25:36] [Agent]\n> not a quote\nend"
    p = SessionWriter(meta(), tmp_path / "v", fsync=False).append([Turn.user(text, T), Turn.agent(["ok"], T)])
    turns = read_session(p).turns
    assert [t.role for t in turns] == ["user", "agent"]
    assert turns[0].text == text


def test_nul_and_crlf_are_normalised(home, tmp_path):
    p = SessionWriter(meta(), tmp_path / "v", fsync=False).append([Turn.user("a\x00b\r\nc", T)])
    data = p.read_bytes()
    assert b"\x00" not in data and b"\r" not in data
    assert read_session(p).turns[0].text == "a\ufffdb\nc"


def test_aware_timestamps_are_stored_in_local_time(home, tmp_path):
    aware = dt.datetime(2026, 6, 10, 12, 0, 0, tzinfo=dt.timezone.utc)
    p = SessionWriter(meta(), tmp_path / "v", fsync=False).append([Turn.user("tz", aware)])
    local = aware.astimezone().strftime("%Y-%m-%d %H:%M:%S")
    assert read_session(p).turns[0].timestamp == local


def test_torn_tail_does_not_glue_turns(home, tmp_path):
    w = SessionWriter(meta(), tmp_path / "v", fsync=False)
    p = w.append([Turn.user("complete turn", T)])
    with open(p, "a") as fh:
        fh.write("[2026-06-10 14:30:00] [User]\nhalf writ")  # a crash mid-line
    w.append([Turn.user("next turn", T)])
    turns = read_session(p).turns
    assert turns[0].text == "complete turn"
    assert turns[-1].text == "next turn"


# ----------------------------------------------------------------------------- legacy readers

LEGACY_TS = (  # what the original TypeScript Chrollo wrote: no chrollo_format, no blank before [Agent]
    '---\nsession_id: "abc12345-0000"\ndate: "2026-03-01"\nharness: "pi"\ncwd: "/home/user/x"\n---\n'
    '[2026-03-01 09:00:00] [User]\nhow do I rebase\n'
    '[2026-03-01 09:00:05] [Agent]\n> use git rebase -i\n>\n> then force-push\n\n\n'
    '[2026-03-01 09:01:00] [User]\nthanks\n'
    '[2026-03-01 09:01:02] [Agent]\n> welcome\n\n\n')


def test_legacy_typescript_layout(tmp_path):
    p = tmp_path / "2026-03-01_090000_abc12345.md"
    p.write_text(LEGACY_TS)
    s = read_session(p)
    assert s.meta["harness"] == "pi"
    assert [(t.role, t.timestamp, t.text) for t in s.turns] == [
        ("user", "2026-03-01 09:00:00", "how do I rebase"),
        ("agent", "2026-03-01 09:00:05", "use git rebase -i\n\nthen force-push"),
        ("user", "2026-03-01 09:01:00", "thanks"),
        ("agent", "2026-03-01 09:01:02", "welcome")]


def test_legacy_time_only_headers_and_inline_user_text(tmp_path):
    p = tmp_path / "2025-12-24_080000_deadbeef.md"
    p.write_text("[08:00:00] [User] inline question here\n[08:00:09] [Agent]\n> answer\n"
                 "> <tool>$ make test</tool>\n")
    s = read_session(p)
    assert s.meta == {}
    assert [(t.role, t.timestamp, t.text) for t in s.turns] == [
        ("user", "2025-12-24 08:00:00", "inline question here"),
        ("agent", "2025-12-24 08:00:09", "answer")]
    assert s.turns[1].tools == ["<tool>$ make test</tool>"]


def test_invalid_utf8_is_replaced_not_fatal(tmp_path):
    p = tmp_path / "2026-01-01_000000_badbytes.md"
    p.write_bytes(b"[2026-01-01 00:00:00] [User]\nbad \xff\xfe bytes\n")
    assert read_session(p).turns[0].text == "bad \ufffd\ufffd bytes"


def test_bundled_demo_vault_parses(tmp_path):
    from chrollo.demo import sample_vault
    files = sorted(sample_vault().rglob("*.md"))
    assert len(files) >= 8
    for f in files:
        s = read_session(f)
        assert s.meta.get("session_id") and len(s.turns) >= 2, f
        assert all(t.text or t.tools for t in s.turns), f


def test_repository_is_written_after_cwd_and_the_readme_shows_the_writers_keys(home, tmp_path):
    """#34: the project's identity across machines (chrollo/repository.py) goes after ``cwd``;
    the format example (docs/memory.md) lists the keys the writer writes, in its order."""
    import re

    from conftest import ROOT

    path = SessionWriter(meta(repository="github.com/acme/infra"), tmp_path / "v", fsync=False).append(FIRST_TURNS)
    text = path.read_text("utf-8")
    assert 'cwd: "/home/user/project"\nrepository: "github.com/acme/infra"\nmachine: "laptop"\n' in text
    assert 'project: "[[infra]]"\n' in text and '  - "infra"\n' in text  # the link: the repository's name
    written = re.findall(r"^(\w+):", text.split("---\n")[1], re.M)
    example = (ROOT / "docs" / "memory.md").read_text("utf-8").split("## The session file format", 1)[1]
    example = example.split("```markdown\n---\n", 1)[1].split("\n---\n", 1)[0]
    shown = re.findall(r"^(\w+):", example, re.M)
    assert "previous" in shown  # (the example's session has a previous one; this one has none)
    assert [k for k in shown if k != "previous"] == written
