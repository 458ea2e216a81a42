"""Forget is final everywhere under $CHROLLO_HOME (#42): tombstones keep hashes, not names;
receipts, recall and capture records, torn remnants, the mesh's records, caches and the index
lose a forgotten session's words and name at once; a `forget --lines` renames only what it
scrubbed (#44); a forget pattern never holds a capture hook past its deadline. Real `chrollo`
processes throughout (tests/forgetkit.py builds the home)."""
from __future__ import annotations

import hashlib
import json
import shutil
import time

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import run, run_json, write_session
from forgetkit import SID_A, TOKEN, TOKEN_TAIL, Codex, World, traces
from hookkit import hook, ok
from meshkit import mesh  # noqa: F401 (a fixture)

WORDS = ["zebrafinch", "quokka", "marmoset"]
SLUG = "zebrafinch_quokka_marmoset"


def _tombstones(home) -> str:
    return (home / "state" / "forgotten.json").read_text()


# ----------------------------------------------------------------------------- tombstones

def test_a_tombstone_keeps_a_hash_of_the_file_name_never_the_name(tmp_path):
    w = World(tmp_path, WORDS, extras=())
    name = w.file_a().name
    assert run(["forget", "aaaa1111", "--yes"], w.home).returncode == 0
    kept = _tombstones(w.home)
    assert SID_A in kept  # (the session id: what capture and import check)
    assert not any(x in kept for x in WORDS) and name not in kept, kept
    assert hashlib.sha256(name.encode()).hexdigest() in kept


def test_tombstones_holding_names_are_migrated_and_still_keep_the_session_out(mesh, tmp_path):
    """A forgotten.json written by an older version (file names in it) is rewritten with
    hashes on first read, and a forgotten session still never comes back by import, by hand
    or through the mesh."""
    from meshkit import introduce, transport_args, two

    a, b = two(mesh)
    write_session(a.vault, "aaaa0003-x", "2026-10-03T10:00:00",
                  [("user", "10:00:00", "narwhal migration of the billing cluster"), ("agent", "10:00:05", ["planned"])],
                  fmt=2)
    args = transport_args("folder", tmp_path)
    introduce(args, a, b)
    backup = tmp_path / "backup"
    shutil.copytree(a.vault, backup, ignore=shutil.ignore_patterns("peers"))
    (name,) = [p.name for p in backup.glob("*aaaa0003*")]
    assert "narwhal" in name and any("narwhal" in n for n in b.peer_files("alpha"))
    assert a.cli("forget", "aaaa0003-x", "--yes").returncode == 0
    path = a.home / "state" / "forgotten.json"
    when = "2026-11-01T12:00:00+00:00"
    path.write_text(json.dumps({"sessions": {"aaaa0003-x": {"file": name, "when": when},
                                             f"file:{name}": {"file": name, "when": when}}}))
    a.sync(*args)
    kept = path.read_text()
    assert "narwhal" not in kept and "aaaa0003-x" in kept, kept
    assert hashlib.sha256(name.encode()).hexdigest() in kept
    b.sync(*args)
    assert not any("narwhal" in n for n in b.peer_files("alpha"))  # (withdrawn, by its key)
    p, _ = run_json(["import", "chrollo-vault", "--source", str(backup)], a.home)
    assert p.returncode == 0, p.stderr
    assert not (a.vault / name).exists(), "import brought a forgotten session back"
    shutil.copy(backup / name, a.vault / name)  # copied back by hand: still never published
    a.sync(*args)
    b.sync(*args)
    assert not any(b"narwhal" in v for v in b.peer_files("alpha").values())


# ----------------------------------------------------------------------------- what is left behind

def test_a_forgotten_session_leaves_no_trace_under_the_home(tmp_path):
    """Receipts and another session's recall record citing it, its torn remnant, the mesh's
    records: its words and its name go at once, and stay gone after the next publication."""
    w = World(tmp_path, WORDS)
    assert traces(w.home, WORDS)  # (the home holds them before)
    assert run(["forget", "aaaa1111", "--yes"], w.home).returncode == 0
    assert traces(w.home, WORDS + [SLUG, TOKEN_TAIL]) == []
    w.after()
    assert traces(w.home, WORDS + [SLUG, TOKEN_TAIL]) == []


def test_forget_lines_leaves_the_old_name_and_the_lines_nowhere(tmp_path):
    """After `forget --lines`, the file's old name is gone from the receipts, the other
    session's recall record, the session's own capture record, and its torn remnant's name;
    the lines' words from the remnant and the prompt in flight."""
    w = World(tmp_path, WORDS)
    old = w.file_a().name
    assert run(["forget", "--lines", "zebrafinch"], w.home).returncode == 0
    assert w.file_a().name != old
    left = WORDS[1:] + [SLUG, old]  # ("zebrafinch" itself is the pattern kept in forgotten.json)
    assert traces(w.home, left) == []
    w.after()
    assert traces(w.home, left) == []


def test_forget_lines_changes_only_files_holding_the_pattern_and_counts_them(home, tmp_path):
    """#44: hand-edited titles are not renamed by a forget that did not touch them; the
    summary counts every file it changed."""
    vault = home / "memories"
    files = []
    for i in range(4):
        files.append(write_session(vault, f"cccc000{i}-x", f"2026-10-0{i + 1}T10:00:00",
                                   [("user", "10:00:00", f"plan the rollout number {i}"),
                                    ("agent", "10:00:05", [f"rollout {i} planned" + (" with hunter2" if i == 3 else "")])],
                                   fmt=2))
    for f in files[:3]:  # titles edited by hand (in Obsidian, say)
        text = f.read_text()
        assert 'title: "plan the rollout' in text
        f.write_text(text.replace('title: "plan the rollout', 'title: "my own words for the rollout'))
    before = {p.name: p.read_bytes() for p in vault.glob("*.md")}
    p, out = run_json(["forget", "--lines", "hunter2"], home)
    assert p.returncode == 0, p.stderr
    after = {p.name: p.read_bytes() for p in vault.glob("*.md")}
    changed = {n for n in before if after.get(n) != before[n]}
    assert changed == {files[3].name}
    assert set(after) - set(before) == set()  # (no file renamed)
    assert [f["path"] for f in out["lines"]["files"]] == [str(files[3])]


# ----------------------------------------------------------------------------- receipts

def _receipts(home) -> str:
    return (home / "logs" / "recall.jsonl").read_text()


def _shown(home, tmp_path, prompt: str, redact: bool = False) -> None:
    """A session A about the staging proxy (and a key), then session B's prompt that is shown
    it (``redact``: with redact-capture turned on in between)."""
    (tmp_path / "a").mkdir(exist_ok=True)
    (tmp_path / "b").mkdir(exist_ok=True)
    a = Codex(tmp_path / "a", SID_A)
    a.live(home, "where does the staging proxy listen", f"the staging proxy listens on port 8443, key {TOKEN}")
    a.live(home, "and what is the staging proxy timeout", "the staging proxy timeout is 30 seconds")
    if redact:
        assert run(["config", "redact-capture", "on"], home).returncode == 0
    out = Codex(tmp_path / "b", "bbbb2222-x").live(home, prompt, "ok")
    assert b"8443" in out, out


def test_forget_secrets_takes_the_token_out_of_the_receipts(home, tmp_path):
    _shown(home, tmp_path, f"which port does the staging proxy listen on, key {TOKEN}")
    assert TOKEN_TAIL in _receipts(home)
    assert run(["forget", "--secrets"], home).returncode == 0
    assert TOKEN_TAIL not in _receipts(home)


def test_redact_capture_keeps_the_token_out_of_the_receipts(home, tmp_path):
    _shown(home, tmp_path, f"which port does the staging proxy listen on, key {TOKEN}", redact=True)
    assert TOKEN_TAIL not in _receipts(home) and "staging" in _receipts(home)


def test_a_line_tombstone_applies_to_later_receipts(home, tmp_path):
    assert run(["forget", "--lines", "wombat-account"], home).returncode == 0
    _shown(home, tmp_path, "which port does the staging proxy listen on for wombat-account")
    assert "wombat" not in _receipts(home)


# ----------------------------------------------------------------------------- bounds

def test_a_backtracking_forget_pattern_never_holds_a_capture_hook(home, tmp_path):
    """`(\\w+\\s?)+password` ran for minutes on one 130-character line in Python's engine: forget
    patterns run in a linear-time one (RE2), and one it cannot run is refused (exit 2)."""
    p = run(["forget", "--lines", r"(\w+\s?)+password", "--regex"], home)
    assert p.returncode == 0, p.stderr
    line = " ".join(["abcdefghi"] * 13)  # 130 characters, no "password": the worst case
    t = time.monotonic()
    Codex(tmp_path, "dddd0000-x").live(home, f"please look at {line}", f"I looked at {line}!", )
    assert time.monotonic() - t < 10
    p = run(["forget", "--lines", r"(a)\1", "--regex", "--json"], home)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    err = json.loads(p.stdout)["error"]
    assert err["kind"] == "bad_pattern" and "backreference" in err["message"] + err["hint"], err
    assert p.stderr.count("\n") <= 3, p.stderr  # (the engine's own log lines stay out of it)


# ----------------------------------------------------------------------------- the property

KINDS = ["session", "lines", "secrets", "project"]
POOL = ["zebrafinch", "quokka", "marmoset", "axolotl", "pangolin", "capybara", "narwhal", "okapi"]
EXTRAS = ["receipts", "pending", "torn", "mesh", "index", "listing", "later"]


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=3, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.generate])  # (no shrinking: each example is seconds)
@given(words=st.lists(st.sampled_from(POOL), min_size=2, max_size=3, unique=True),
       extras=st.sets(st.sampled_from(EXTRAS), min_size=4), redact=st.booleans())
def test_after_every_kind_of_forget_no_file_under_the_home_holds_what_was_forgotten(
        tmp_path_factory, kind, words, extras, redact):
    """Whatever traces the home holds (receipts, a prompt in flight, a torn turn, a mesh
    publication, the index, the listings), after a forget of any kind a grep of every file under
    $CHROLLO_HOME (any bytes; names too) finds nothing of what was forgotten — at once, and
    after the next publication and index update."""
    w = World(tmp_path_factory.mktemp("forget"), words, extras=extras, redact_capture=redact)
    slug = "_".join(words)
    if kind == "session":
        args, gone = ["forget", "aaaa1111", "--yes"], words + [slug, TOKEN_TAIL]
    elif kind == "project":
        args, gone = ["forget", "--project", str(w.proj), "--yes"], words + [slug, TOKEN_TAIL]
    elif kind == "lines":  # (the pattern itself is kept, in forgotten.json: the other words are checked)
        args, gone = ["forget", "--lines", words[0]], words[1:] + [slug, TOKEN_TAIL]
    else:
        args, gone = ["forget", "--secrets"], [TOKEN_TAIL]
    p = run(args, w.home)
    assert p.returncode == 0, p.stderr
    assert traces(w.home, gone) == []
    w.after()
    assert traces(w.home, gone) == []


def test_a_link_to_a_forgotten_or_renamed_file_goes_or_follows_it(tmp_path):
    """A later session's `previous` link names the forgotten file (its title's words): it goes
    with the file; after a rename by `forget --lines` it names the new file; both counted."""
    w = World(tmp_path, WORDS, extras=("later",))
    (later,) = [p for p in (w.home / "memories").glob("*cccc1111*")]
    assert SLUG in later.read_text()
    p, out = run_json(["forget", "--lines", "zebrafinch"], w.home)
    assert p.returncode == 0, p.stderr
    assert SLUG not in later.read_text() and f"[[{w.file_a().stem}]]" in later.read_text()
    assert out["relinked"] == [str(later)]
    p, out = run_json(["forget", "aaaa1111", "--yes"], w.home)
    assert "previous:" not in later.read_text() and out["relinked"] == [str(later)]
    assert "rotate the staging proxy" in later.read_text()  # (nothing else of it changed)


def test_a_kept_pattern_re2_refuses_runs_under_a_deadline_and_forgets_what_it_cannot_decide(home, tmp_path):
    """A lookahead pattern an older version kept (RE2 refuses it) runs in Python's engine under
    a deadline: the hook keeps its own, and a line not decided in time is forgotten."""
    (home / "state").mkdir(parents=True)
    (home / "state" / "forgotten.json").write_text(json.dumps(
        {"lines": [{"pattern": r"(\w+\s?)+(?=password)", "regex": True, "when": "2026-11-01T12:00:00+00:00"}]}))
    line = " ".join(["abcdefghi"] * 13)
    t = time.monotonic()
    Codex(tmp_path, "eeee0000-x").live(home, f"please look at {line}", "fine, looked")
    assert time.monotonic() - t < 15
    (f,) = (home / "memories").glob("*.md")
    text = f.read_text()
    assert "abcdefghi" not in text and "[forgotten by chrollo]" in text and "fine, looked" in text


def test_a_forgotten_peer_copy_leaves_no_trace_in_the_pull_records(mesh, tmp_path):
    """A peer's copy forgotten here: its name (the peer's title slug) leaves the records of
    what was taken from that peer and the pull's sweep note at once, and the next sync neither
    takes it again nor writes its name anywhere."""
    from meshkit import introduce, transport_args, two

    a, b = two(mesh)
    write_session(b.vault, "bbbb0003-x", "2026-10-03T10:00:00",
                  [("user", "10:00:00", "walrus migration of the billing cluster"), ("agent", "10:00:05", ["planned"])],
                  fmt=2)
    args = transport_args("folder", tmp_path)
    introduce(args, a, b)
    (name,) = [n for n in a.peer_files("bravo") if "walrus" in n]
    assert traces(a.home / "state", ["walrus"])
    p = a.cli("forget", str(a.vault / "peers" / "bravo" / name), "--yes")
    assert p.returncode == 0, p.stderr
    assert traces(a.home, ["walrus"]) == []
    a.sync(*args)
    assert traces(a.home, ["walrus"]) == []


def test_import_of_a_backup_never_brings_a_scrubbed_title_back_in_a_name(home, tmp_path):
    """A file `forget --lines` renamed (its title held the line) is not imported again from a
    backup under its old name: the backup's copy is the same file, scrubbed, unchanged."""
    vault = home / "memories"
    write_session(vault, "ffff0000-x", "2026-10-05T10:00:00",
                      [("user", "10:00:00", "walrus migration of the billing cluster"), ("agent", "10:00:05", ["ok"])],
                      fmt=2)
    backup = tmp_path / "backup"
    shutil.copytree(vault, backup)
    assert run(["forget", "--lines", "walrus"], home).returncode == 0
    p, out = run_json(["import", "chrollo-vault", "--source", str(backup)], home)
    assert p.returncode == 0, p.stderr
    assert not [n.name for n in vault.glob("*.md") if "walrus" in n.name]
    assert out["unchanged"] == 1 and out["imported"] == 0, out


def test_a_peer_copy_renamed_by_forget_lines_keeps_its_new_name_through_syncs(mesh, tmp_path):
    """A peer's copy whose title (and so its name, the peer's slug) held a forgotten line is
    renamed by `forget --lines`; the next syncs keep it so — never taken again under the old name."""
    from meshkit import introduce, transport_args, two

    a, b = two(mesh)
    write_session(b.vault, "bbbb0003-x", "2026-10-03T10:00:00",
                  [("user", "10:00:00", "walrus migration of the billing cluster"), ("agent", "10:00:05", ["planned"])],
                  fmt=2)
    args = transport_args("folder", tmp_path)
    introduce(args, a, b)
    assert any("walrus" in n for n in a.peer_files("bravo"))
    assert a.cli("forget", "--lines", "walrus").returncode == 0
    for _ in range(2):
        a.sync(*args)
        names = sorted(a.peer_files("bravo"))
        assert not any("walrus" in n for n in names) and any("bbbb0003" in n for n in names), names
        assert traces(a.home, ["walrus_migration"]) == []
    _, out = a.sync(*args)
    assert out["peers"][0]["downloaded"] == 0, out  # (stable: not taken again at every sync)


@pytest.mark.parametrize("how", [["forget", "aaaa1111", "--yes"], ["forget", "--lines", "zebrafinch"]])
def test_a_log_line_naming_the_file_loses_the_name(tmp_path, how):
    """An error in logs/hooks.log (and its rotated .1) that names the forgotten or renamed file
    keeps the file's slug-free key, not its title's words."""
    w = World(tmp_path, WORDS, extras=())
    name = w.file_a().name
    logs = w.home / "logs"
    logs.mkdir(exist_ok=True)
    for n in ("hooks.log", "hooks.log.1"):
        with open(logs / n, "a") as fh:
            fh.write(f"2026-11-01T12:00:00 codex Stop: [Errno 27] File too large: '{w.home / 'memories' / name}'\n")
    assert run(how, w.home).returncode == 0
    assert traces(logs, [SLUG, "quokka"]) == []
    assert "aaaa1111" in (logs / "hooks.log").read_text()  # (the line stays: only the title's words went)
