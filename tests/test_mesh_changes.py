"""#34: a publication reads the session files capture changed (its journal, chrollo/changes.py),
not the whole vault, and keeps its records without rewriting them whole; what the journal
cannot tell — an edit by hand, a file deleted, a journal lost or damaged — is still published,
within a bound (docs/design.md §8). Real files, the real Stop hook, a real identity."""
from __future__ import annotations

import json
import os
import time
import uuid

import pytest

from conftest import run
from hookkit import hook, ok

from chrollo import layout

N = 30  # own files; the sweep is set to 10 a publication, so it covers them in 3


@pytest.fixture
def node(tmp_path, monkeypatch):
    from chrollo.mesh import manifests

    home = tmp_path / "home"
    assert run(["mesh", "init", "--name", "bravo"], home).returncode == 0
    monkeypatch.setenv("CHROLLO_HOME", str(home))
    monkeypatch.setattr(manifests, "SWEEP", 10, raising=False)
    vault = home / "memories"
    vault.mkdir(exist_ok=True)
    for i in range(N):
        (vault / f"2026-09-01_10{i // 60:02d}{i % 60:02d}_s{i:07d}.md").write_text(
            f'---\nsession_id: "s{i:07d}"\n---\n\n[2026-09-01 10:00:00] [User]\nold turn {i}\n')
    return home


class Agent:
    """A Claude Code session captured by the real Stop hook, one turn at a time."""

    def __init__(self, home, tmp_path):
        self.home, self.sid, self.n = home, str(uuid.uuid4()), 0
        self.transcript = tmp_path / "transcript.jsonl"

    def turn(self, text: str) -> None:
        t = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{self.n:03d}Z"
        base = {"sessionId": self.sid, "cwd": "/home/user/project", "isSidechain": False, "timestamp": t}
        recs = [{**base, "type": "user", "uuid": str(uuid.uuid4()), "message": {"role": "user", "content": text}},
                {**base, "type": "assistant", "uuid": str(uuid.uuid4()),
                 "message": {"id": f"msg_{self.n}", "role": "assistant", "content": [{"type": "text", "text": "done: " + text}]}}]
        self.n += 1
        with open(self.transcript, "a") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in recs)
        ok(hook(self.home, "claude-code", "Stop", {
            "session_id": self.sid, "transcript_path": str(self.transcript), "cwd": "/home/user/project",
            "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "done: " + text}))


def publish(home):
    from chrollo.mesh.identity import Identity
    from chrollo.mesh.manifests import publish

    return publish(Identity.load(str(home / "mesh")), "bravo", str(home / "memories"), str(home))


def text_of(pub, fname: str) -> bytes:
    """What the publication sends for own file ``fname`` (b"": the manifest lists an older
    version of it, which a peer asking for the file is refused)."""
    from chrollo.mesh.files import Refused

    try:
        return pub.data({v: k for k, v in pub.real.items()}[fname])
    except Refused:
        return b""


def settle(vault) -> None:
    """The vault as a while ago: its folder's mtime out of the racy second a publication distrusts."""
    past = time.time() - 60
    os.utime(vault, (past, past))


def stamp(path) -> tuple:
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns


def test_a_captured_turn_is_published_without_a_walk_or_a_rewrite(node, tmp_path):
    """One turn captured: the next publication stats the file capture noted (and a sweep), not
    every file, and appends its record to a log instead of rewriting 30 (10,000) of them."""
    vault, agent = node / "memories", Agent(node, tmp_path)
    agent.turn("first prompt about the ingress controller")
    settle(vault)
    first = publish(node)
    mine = next(p.name for p in vault.glob("*.md") if not p.name.startswith("2026-09-01"))
    assert b"ingress controller" in text_of(first, mine)
    records = stamp(layout.mesh_manifest_cache(str(node)))
    agent.turn("second prompt about the helm chart")
    second = publish(node)
    assert b"helm chart" in text_of(second, mine)
    assert stamp(layout.mesh_manifest_cache(str(node))) == records  # not rewritten whole
    state = json.loads(open(layout.mesh_publish_state(str(node))).read())
    agent.turn("third prompt about the service mesh")
    assert open(layout.mesh_changes(str(vault), str(node))).read().splitlines()[-1] == mine
    assert b"service mesh" in text_of(publish(node), mine)
    log = open(layout.mesh_manifest_log(str(node))).read().splitlines()
    assert [json.loads(x)[0] for x in log[1:]] == [mine, mine]
    after = json.loads(open(layout.mesh_publish_state(str(node))).read())
    assert after["walked"] == state["walked"] and after["offset"] > state["offset"]  # no walk
    assert os.stat(layout.mesh_changes(str(vault), str(node))).st_mode & 0o777 == 0o600


def test_what_the_journal_cannot_tell_is_still_published(node, tmp_path):
    """An edit by hand in place: found by the sweep within files / SWEEP publications; a file
    deleted or added by hand: at once (the folder's mtime moved); a journal lost or damaged:
    the next publication walks the vault, so even an edit out of the sweep's reach is found."""
    vault = node / "memories"
    settle(vault)
    publish(node)
    files = sorted(vault.glob("*.md"))
    last = files[-1]  # the sweep starts at the first name: the last is out of its reach for 2 rounds
    with open(last, "a") as fh:
        fh.write("\n[2026-09-01 11:00:00] [User]\nedited by hand\n")
    seen = [b"edited by hand" in text_of(publish(node), last.name) for _ in range(3)]
    assert seen == [False, False, True]

    files[0].unlink()
    (vault / "2026-09-02_100000_added00.md").write_text('---\nsession_id: "added00"\n---\n\nhand made\n')
    pub = publish(node)
    assert files[0].name not in pub.real.values() and "2026-09-02_100000_added00.md" in pub.real.values()

    settle(vault)
    publish(node)
    for damage in ("lost", "damaged"):
        with open(files[-2], "a") as fh:
            fh.write(f"\n[2026-09-01 12:00:00] [User]\n{damage} journal\n")
        journal = layout.mesh_changes(str(vault), str(node))
        if damage == "lost":
            os.unlink(journal)
        else:
            with open(journal, "a") as fh:
                fh.write("../../etc/passwd\n")
        assert f"{damage} journal".encode() in text_of(publish(node), files[-2].name)


def test_records_torn_or_left_from_before_are_not_trusted(node, tmp_path):
    """The records' log torn, or older than the records written whole (a crash between the two
    writes): the next publication walks the vault and publishes what is there."""
    vault = node / "memories"
    settle(vault)
    publish(node)
    target = sorted(vault.glob("*.md"))[-1]
    for damage in (b'["2026', b"0123456789abcdef\n"):
        with open(target, "a") as fh:
            fh.write(f"\n[2026-09-01 12:00:00] [User]\nafter {damage[:3]!r}\n")
        log = layout.mesh_manifest_log(str(node))
        if damage.endswith(b"\n"):
            open(log, "wb").write(damage)  # (a log of another generation)
        else:
            open(log, "ab").write(damage)
        assert f"after {damage[:3]!r}".encode() in text_of(publish(node), target.name)


def test_records_written_whole_damaged_are_not_trusted(node, tmp_path):
    """The records written whole (marshal behind their SHA-256) damaged — a flipped byte, cut
    short, emptied: never parsed; the next publication walks the vault and publishes it."""
    from chrollo.mesh import records

    vault = node / "memories"
    settle(vault)
    publish(node)
    cache = layout.mesh_manifest_cache(str(node))
    target = sorted(vault.glob("*.md"))[-1]
    for damage in ("flip", "cut", "empty"):
        records._HELD.clear()  # (a new process)
        with open(target, "a") as fh:
            fh.write(f"\n[2026-09-01 12:00:00] [User]\nafter {damage}\n")
        data = bytearray(open(cache, "rb").read())
        assert data.startswith(records.MAGIC)
        if damage == "flip":
            data[len(data) // 2] ^= 1
        open(cache, "wb").write(data[:len(data) // 2] if damage == "cut" else b"" if damage == "empty" else data)
        assert records.load(cache, layout.mesh_manifest_log(str(node)), None) == (None, 0)
        assert f"after {damage}".encode() in text_of(publish(node), target.name)


def test_records_an_older_version_wrote_as_json_are_read_then_replaced(node, tmp_path):
    """An older version's records (JSON at ``<name>.json``) are read — no walk, no file taken
    again — and replaced by the current form at the next change."""
    from chrollo.mesh import records

    vault = node / "memories"
    settle(vault)
    publish(node)
    cache, log = layout.mesh_manifest_cache(str(node)), layout.mesh_manifest_log(str(node))
    data = open(cache, "rb").read()
    import marshal

    whole = marshal.loads(data[len(records.MAGIC) + 32:])
    legacy = os.path.splitext(cache)[0] + ".json"
    open(legacy, "w").write(json.dumps(whole))
    os.unlink(cache)
    records._HELD.clear()
    got, _ = records.load(cache, log, whole["tag"])
    assert got == whole["records"] and len(got) == N
    Agent(node, tmp_path).turn("a prompt after the upgrade")
    records._HELD.clear()
    pub = publish(node)
    assert len(pub.entries) == N + 1
    mine = next(p.name for p in vault.glob("*.md") if not p.name.startswith("2026-09-01"))
    assert b"after the upgrade" in text_of(pub, mine)
    assert open(cache, "rb").read().startswith(records.MAGIC) and not os.path.exists(legacy)
    open(legacy, "w").write("{}")  # (unpairing a peer drops its records, under either name)
    records.drop(cache, log)
    assert not any(os.path.exists(p) for p in (cache, log, legacy))


def test_a_long_lived_publisher_patches_what_a_fresh_one_would_make(node, tmp_path):
    """The LAN server publishes for every manifest asked and keeps what it made in memory;
    after turns appended, a file added and one forgotten, its publication is the one a fresh
    process makes from the files."""
    from chrollo.mesh import manifests, records

    vault, agent = node / "memories", Agent(node, tmp_path)
    agent.turn("first prompt about the ingress controller")
    settle(vault)
    publish(node)

    def fresh_and_kept():
        kept = publish(node)
        manifests._LAST.clear()
        records._HELD.clear()
        return kept, publish(node)
    for step in ("turn", "hand-made file", "forgotten"):
        if step == "turn":
            agent.turn("second prompt about the helm chart")
        elif step == "hand-made file":
            (vault / "2026-09-02_100000_added00.md").write_text('---\nsession_id: "added00"\n---\n\nhand made\n')
        else:
            assert os.path.exists(layout.mesh_changes(str(vault), str(node)))
            assert run(["forget", "s0000003", "--yes"], node).returncode == 0
            assert not os.path.exists(layout.mesh_changes(str(vault), str(node)))  # (names hold titles)
        kept, fresh = fresh_and_kept()
        assert kept.entries == fresh.entries and kept.envelope == fresh.envelope and kept.real == fresh.real, step


def test_a_copy_edited_here_is_taken_again_within_the_sweep_and_a_deleted_one_at_once(tmp_path, monkeypatch):
    """A pull stats a peer's folder whole only when its mtime is not the one the last pull
    left; a copy edited here in place is found by the sweep within copies / SWEEP pulls, a
    copy deleted at the next pull."""
    from chrollo.mesh import manifests
    from chrollo.mesh.sync import sync

    monkeypatch.setattr(manifests, "SWEEP", 10, raising=False)
    homes = {n: tmp_path / n for n in ("alpha", "bravo")}
    ids = {}
    for n, h in homes.items():
        p = run(["mesh", "init", "--name", n], h)
        assert p.returncode == 0, p.stderr
        ids[n] = p.stdout.strip()
    for n, h in homes.items():
        other = "bravo" if n == "alpha" else "alpha"
        assert run(["mesh", "peers", "add", "--id", ids[other], "--name", other], h).returncode == 0
    vault = homes["bravo"] / "memories"
    vault.mkdir()
    for i in range(N):
        (vault / f"2026-09-01_10{i // 60:02d}{i % 60:02d}_s{i:07d}.md").write_text(
            f'---\nsession_id: "s{i:07d}"\n---\n\n[2026-09-01 10:00:00] [User]\nold turn {i}\n')
    shared = tmp_path / "shared"
    shared.mkdir()

    def on(node):
        monkeypatch.setenv("CHROLLO_HOME", str(homes[node]))
        return sync(folder=str(shared))["peers"][0]
    for node in ("alpha", "bravo", "alpha", "bravo", "alpha"):
        on(node)
    copies = sorted((homes["alpha"] / "memories" / "peers" / "bravo").glob("*.md"))
    assert len(copies) == N
    last = copies[-1]  # out of the next pull's sweep
    original = last.read_bytes()
    last.write_bytes(original.replace(b"old turn", b"OLD TURN"))  # in place: the folder's mtime holds
    taken = [on("alpha")["downloaded"] for _ in range(N // 10)]
    assert taken[0] == 0 and sum(taken) == 1 and last.read_bytes() == original  # (no whole stat; within 3)
    copies[0].unlink()
    assert on("alpha")["downloaded"] == 1 and copies[0].exists()


def test_two_files_whose_published_names_meet_are_both_published_under_distinct_names(node):
    """Two own files of one session key whose titles slug alike (a copy renamed by hand) would
    leave under one name: the first in name order keeps it, the next goes as ``…_n1``."""
    vault = node / "memories"
    for slug in ("aaa", "bbb"):
        (vault / f"2026-09-02_100000_{slug}_k0000001.md").write_text(
            f'---\nsession_id: "k0000001"\ntitle: "Fix the login bug"\n---\n\nfile {slug}\n')
    names = {e["name"] for e in publish(node).entries if e["name"].startswith("2026-09-02")}
    assert names == {"2026-09-02_100000_fix_the_login_bug_k0000001.md", "2026-09-02_100000_n1.md"}
