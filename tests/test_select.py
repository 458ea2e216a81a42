"""Issue 30: a large vault's search reads its best files only (retrieval/select.py) — the same
files, hence the same JSON, with and without the index; the recall hook reaches every session of
an indexed vault, and has an unindexed one indexed in the background. Real rg, real SQLite,
real processes, frozen clock."""
from __future__ import annotations

import datetime as dt
import math
import os
import random
import subprocess
import time
from array import array
from pathlib import Path

import pytest

from chrollo import recall, retrieval
from chrollo.index import build as index_build
from chrollo.index import scope as index_scope
from chrollo.index import store as index_store
from chrollo.index import universe as index_universe
from chrollo import rg as _rg
from chrollo.fileformat import file_key, name_time
from chrollo.retrieval import select, tuning
from conftest import run_json

NOW = dt.datetime(2026, 11, 1, 12, 0, 0)


# ----------------------------------------------------------------------------- the selection itself

def _brute(files: list, weights: list, want: int) -> list:
    """The definition, file by file: (-score, key, path) sorted, the best ``want`` paths."""
    r = select.Recency(NOW)
    scored = []
    for mask, path in files:
        if mask:
            w = sum(weights[i] for i in range(len(weights)) if mask >> i & 1)
            scored.append((-w * r(name_time(path.rpartition(b"/")[2])), file_key(path), path))
    return [p for _s, _k, p in sorted(scored)[:want]]


def test_a_names_time_is_the_datetime_it_spells():
    """name_time (the recency of every file the selection weighs: computed from a cache of days,
    not a datetime per name) is the seconds the name's datetime is from NAME_EPOCH — NaN for a
    name with none, or with a time that does not exist (a 13th month, February 30, 24:00)."""
    from chrollo.fileformat import NAME_EPOCH

    def spelled(name: bytes) -> float:
        try:
            y, mo, d, h, mi, s = (int(x) for x in (name[:4], name[5:7], name[8:10], name[11:13], name[13:15],
                                                    name[15:17]))
            return (dt.datetime(y, mo, d, h, mi, s) - NAME_EPOCH).total_seconds()
        except ValueError:
            return math.nan

    rng = random.Random(47)
    for _ in range(20_000):
        parts = (rng.choice([rng.randint(1, 9999), rng.randint(1960, 2100)]), rng.randint(0, 13), rng.randint(0, 32),
                 rng.randint(0, 25), rng.randint(0, 61), rng.randint(0, 61))
        name = b"%04d-%02d-%02d_%02d%02d%02d_5ca1ab1e.md" % parts
        want, got = spelled(name), name_time(name)
        assert (got == want or math.isnan(got) and math.isnan(want)) and isinstance(got, float), name
    assert name_time(b"2026-11-01_120000_x.md") == (NOW - NAME_EPOCH).total_seconds()
    for none in (b"notes.md", b"2026-11-01_120000.md", b"2026-11-01-120000_x.md", b"2026-1x-01_120000_x.md"):
        assert math.isnan(name_time(none)), none


@pytest.mark.parametrize("seed", range(40))
def test_the_best_files_are_those_the_definition_ranks_first(seed):
    """Random files (some holding rare terms, most only common ones; equal times, names
    without a time, bad dates; vouched by the index or read directly): select.best gives what
    scoring every file and sorting gives, ties and all."""
    rng = random.Random(seed)
    k = rng.randint(1, 6)
    weights = [rng.choice([0.3, 0.7, 1.1, 2.5, 4.0]) for _ in range(k)]
    share = [rng.choice([0.02, 0.1, 0.5, 0.9]) for _ in range(k)]
    files = []
    for n in range(rng.randint(5, 300)):
        when = rng.choice(["2026-10-31_120000", "2026-09-01_080000", "2025-01-01_000000", "2026-10-31_120000",
                           f"2026-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}_{rng.randint(0, 23):02d}0000",
                           "2026-13-01_000000", "notes"])
        name = f"{when}_{n:08x}.md" if when != "notes" else f"notes-{n}.md"
        mask = sum(1 << i for i in range(k) if rng.random() < share[i])
        files.append((mask, f"/v/{rng.choice(['', 'peers/a/'])}{name}".encode()))
    vouched = [f for f in files if rng.random() < 0.8]
    extras = [f for f in files if f not in vouched]
    rows = sorted(((file_key(p), p, i + 1, m) for i, (m, p) in enumerate(vouched)))
    order = array("I", (fid for _k, _p, fid, _m in rows))
    times = array("d", (name_time(p.rpartition(b"/")[2]) for _k, p, _f, _m in rows))
    pos = array("i", [-1]) * (len(rows) + 2)
    for place, fid in enumerate(order):
        pos[fid] = place
    sets = [{fid for _k, _p, fid, m in rows if m >> i & 1} for i in range(k)]
    by_id = {fid: (key, p) for key, p, fid, _m in rows}
    u = index_universe.TermFiles(len(files), sets, order, times, pos,
                        [(m, file_key(p), p, name_time(p.rpartition(b"/")[2])) for m, p in extras],
                        lambda ids: {i: by_id[i] for i in ids})
    want = rng.choice([1, 3, 10, 50])
    assert select.best(u, weights, NOW, want) == _brute(files, weights, want)
    keep = {p for _m, p in files if rng.random() < 0.5}
    assert select.best(u, weights, NOW, want, keep.__contains__) == \
        _brute([(m, p) for m, p in files if p in keep], weights, want)


# ----------------------------------------------------------------------------- real vaults

BODY = ("---\nsession_id: \"{sid}\"\nharness: \"claude-code\"\n---\n\n"
        "## [{d} 10:00:00] [User]\n{text}\n\n## [{d} 10:00:30] [Agent]\nnoted, {text2}.\n")


def _vault(root: Path, n: int, special: dict | None = None) -> Path:
    """``n`` sessions a day apart, newest last; ``special``: {i: text} of some."""
    vault = root / "vault"
    vault.mkdir(parents=True)
    t0 = dt.datetime(2026, 10, 31, 9, 0, 0)
    for i in range(n):
        when = t0 - dt.timedelta(days=i)
        sid = f"{i:08x}-0000-4000-8000-000000000000"
        text = (special or {}).get(i, f"we talked about the weather and lunch plans today, note {i}")
        (vault / f"{when:%Y-%m-%d_%H%M%S}_{sid[:8]}.md").write_text(
            BODY.format(sid=sid, d=f"{when:%Y-%m-%d}", text=text, text2="lunch plans are fine"))
    return vault


def _search(vault: Path, q: str, use_index: bool, **kw) -> dict:
    old = os.environ.get("CHROLLO_INDEX")
    os.environ["CHROLLO_INDEX"] = "1" if use_index else "0"
    try:
        return retrieval.search(q, dir=str(vault), now=NOW, **kw).to_json()
    finally:
        os.environ.pop("CHROLLO_INDEX") if old is None else os.environ.__setitem__("CHROLLO_INDEX", old)


def test_a_large_vault_is_read_at_its_best_files_the_same_with_and_without_the_index(home, tmp_path, monkeypatch):
    """Past SELECT_AFTER files rg reads SELECT_FILES of them — those holding the rarest words
    first, whatever their age —, and the JSON with the index, without it, and after files
    changed behind its back (a new file, an edit the sweep found) is the same."""
    monkeypatch.setattr(tuning, "SELECT_AFTER", 30)
    monkeypatch.setattr(tuning, "SELECT_FILES", 6)
    monkeypatch.setattr(index_scope, "SWEEP", 1000)
    vault = _vault(tmp_path, 80, {79: "the staging database password rotation runs from the vault cronjob",
                                  40: "the staging database is slow on mondays",
                                  60: "install tailwind v-4 with the vite plugin", 20: "the v4 plugin for vite"})
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    index_build.build(str(vault))
    read: list = []
    real = _rg.scan

    def counting(patterns, paths, **kw):
        read.append(len(paths))
        return real(patterns, paths, **kw)

    monkeypatch.setattr(_rg, "scan", counting)
    # (v4: an identifier whose spelling v-4 holds no index term — its other spellings stand for it)
    queries = ["staging database password rotation", "lunch plans weather", "cronjob", "staging mondays",
               "tailwind v4 vite plugin"]
    for q in queries:
        read.clear()
        with_index = _search(vault, q, True)
        assert read and max(read) <= 6, (q, read)  # (each pass: the exact terms', the synonyms')
        assert with_index == _search(vault, q, False), q
    got = _search(vault, "staging database password rotation", True)
    assert got["hits"][0]["path"].endswith("_0000004f.md")  # (the oldest session: it holds them all)
    assert any(h["path"].endswith("_00000028.md") for h in got["hits"])
    # behind the index's back: a new file, and an in-place edit the sweep finds
    (vault / "2026-11-01_080000_ffffffff.md").write_text(
        BODY.format(sid="ffffffff-0000-4000-8000-000000000000", d="2026-11-01",
                    text="password rotation moved to the new cronjob", text2="ok"))
    first = sorted(vault.glob("*.md"))[3]
    first.write_text(first.read_text().replace("weather", "cronjob"))
    _search(vault, "weather", True)  # (its sweep sees the edit)
    for q in queries:
        assert _search(vault, q, True) == _search(vault, q, False), q


@pytest.mark.parametrize("damage", ["empty", "truncated", "no magic", "wrong counts", "garbage", "older format"])
def test_a_damaged_order_file_is_never_trusted_and_is_written_again(home, tmp_path, monkeypatch, damage):
    """The order file beside the index (every file id in file-key order, read as views of its
    bytes) cut, garbled, or claiming other counts: a search gives the JSON of a search without
    the index, and writes the file again."""
    monkeypatch.setattr(tuning, "SELECT_AFTER", 30)
    monkeypatch.setattr(tuning, "SELECT_FILES", 6)
    vault = _vault(tmp_path, 60, {50: "the staging database password rotation runs from the vault cronjob",
                                  10: "the staging database is slow on mondays"})
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    index_build.build(str(vault))
    q = "staging database password rotation"
    want = _search(vault, q, False)
    assert _search(vault, q, True) == want
    order = Path(index_store.db_path(str(vault)) + ".order")
    good = order.read_bytes()
    head, magic, body = good.partition(b"\n" + index_store.ORDER_MAGIC)
    upto, n, n_dead, gone, fmt = map(int, head.split())
    bad = {"empty": b"",
           "truncated": good[:len(good) - 6],
           "no magic": head + b"\n" + body,
           "wrong counts": b"%d %d %d %d %d" % (upto, n - 1, n_dead + 1, gone, fmt) + magic + body,
           "garbage": bytes(range(256)) * 3,
           "older format": b"%d %d %d %d %d" % (upto, n, n_dead, gone, fmt - 1) + magic + body}[damage]
    order.write_bytes(bad)
    assert _search(vault, q, True) == want
    assert order.read_bytes() == good  # (written again from the rows)


def _wait_built(vault: Path) -> None:
    deadline = time.monotonic() + 120
    while not index_build.building(str(vault)) and not os.path.exists(index_store.db_path(str(vault)) + ".order") \
            and time.monotonic() < deadline:
        time.sleep(0.02)
    while index_build.building(str(vault)) and time.monotonic() < deadline:
        time.sleep(0.1)


def test_a_search_of_a_large_unindexed_vault_reads_it_once_and_has_it_indexed(home, tmp_path, monkeypatch):
    """Without an index, the same files come from one rg pass over the vault (the same JSON);
    the search says a build is due, and `chrollo search` starts one in the background (a note
    on stderr, stdout as ever) — not with CHROLLO_INDEX=0, and not for a small vault."""
    monkeypatch.setattr(tuning, "SELECT_AFTER", 30)
    small = _vault(tmp_path / "small", 20)
    assert retrieval.search("lunch plans", dir=str(small)).unindexed is None
    vault = _vault(tmp_path / "large", 40)
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)  # (files changed this close to being read are read again)
    want = _search(vault, "lunch plans", False)
    assert retrieval.search("lunch plans", dir=str(vault), now=NOW).unindexed == str(vault)
    assert not os.path.exists(index_store.db_path(str(vault)))
    p, _out = run_json(["search", "lunch plans", "--dir", vault], home, CHROLLO_INDEX="0", CHROLLO_SELECT_AFTER=30)
    assert p.returncode == 0 and "background" not in p.stderr
    p, _out = run_json(["search", "lunch plans", "--dir", vault], home, CHROLLO_SELECT_AFTER=30)
    assert p.returncode == 0 and "built in the background" in p.stderr, p.stderr
    _wait_built(vault)
    assert index_store.status(str(vault))["indexed"] == 40
    assert _search(vault, "lunch plans", True) == want


def test_the_recall_hook_reaches_an_old_session_of_an_indexed_vault_and_has_an_unindexed_one_built(
        home, tmp_path, monkeypatch):
    """With the index the hook's search is the complete one's (the answer is in the oldest of
    8,200 sessions); without one it reads the newest first, says so in its trace, and the hook
    leaves one detached background build — not a second while it runs."""
    n = max(tuning.SELECT_AFTER, 8_000) + 200  # (more than the hook reads newest first in its least deadline)
    vault = _vault(tmp_path, n, {n - 1: "the staging database password rotation runs from the vault cronjob"})
    prompt = "how does the staging database password rotation work?"
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)  # (files changed this close to being read are read again)
    trace: dict = {}
    block = recall.recall(prompt, "s1", vault=str(vault), started=time.monotonic() - 10, trace=trace)
    assert "cronjob" not in block
    started: list = []
    real_popen = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **kw: started.append(a) or real_popen(*a, **kw))
    assert trace["unindexed"] == str(vault)
    assert index_build.build_in_background(trace["unindexed"])
    deadline = time.monotonic() + 120
    while not index_build.building(str(vault)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not index_build.build_in_background(str(vault))  # (while it builds: no second build)
    _wait_built(vault)
    assert len(started) == 1
    assert index_store.status(str(vault))["indexed"] == n
    trace = {}
    block = recall.recall(prompt, "s2", vault=str(vault), trace=trace)
    assert "cronjob" in block and not trace.get("unindexed")


def test_search_json_counts_the_vault_and_reads_the_chosen_files(home, tmp_path, monkeypatch):
    """``sessions`` (the idf's N) is every file in scope; total_matches counts the occurrences in
    the files read (README: *How search works*)."""
    monkeypatch.setattr(tuning, "SELECT_AFTER", 30)
    monkeypatch.setattr(tuning, "SELECT_FILES", 4)
    vault = _vault(tmp_path, 50)
    index_build.build(str(vault))
    r = retrieval.search("lunch plans", dir=str(vault), now=NOW)
    assert r.sessions == 50
    assert r.total_matches == 4 * 2 * 2  # (4 files, each "lunch" and "plans" twice)
    assert math.isclose(r.weights["lunch"], math.log(1 + 50 / 50))


def test_a_vault_of_select_after_files_or_fewer_is_read_whole_without_its_index(home, tmp_path, monkeypatch):
    """Up to SELECT_AFTER files (the hook's first batch, read in full) a search reads the whole
    vault and leaves its index alone — reading 10 MB costs rg less than asking the index
    (docs/index.md); past it, the search asks the index (its verification sweep moves on)."""
    assert tuning.SELECT_AFTER == tuning.DEADLINE_BATCH
    vault = _vault(tmp_path, 40)
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)  # (files changed this close to being read are read again)
    index_build.build(str(vault))
    sweep = index_scope.sweep_file(os.path.realpath(vault))
    want = _search(vault, "lunch plans", False)
    assert _search(vault, "lunch plans", True) == want and not os.path.exists(sweep)
    monkeypatch.setattr(tuning, "SELECT_AFTER", 30)
    _search(vault, "lunch plans", True)
    assert os.path.exists(sweep)
