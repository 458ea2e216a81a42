"""Issue 30: the derived index (chrollo/index/). It may only narrow what rg reads: with and
without it every search gives the same JSON, whatever happened to the vault since it was
built; and a forgotten word is nowhere in its files. Real rg, real SQLite, frozen clock."""
from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chrollo import forget, recall, retrieval, vaultfiles
from chrollo import rg as _rg
from chrollo.index import build as index_build
from chrollo.index import plan as index_plan
from chrollo.index import scope as index_scope
from chrollo.index import store as index_store
from chrollo.index import terms as index_terms
from chrollo.index import universe as index_universe
from chrollo.index import update as index_update
from chrollo.retrieval import tuning
from conftest import ROOT, run, run_json, write_session

@pytest.fixture(autouse=True)
def _index_small_vaults(monkeypatch):
    """The tests' vaults are tiny: let complete searches use the index anyway (and with more
    candidates than a large vault would hand to rg as a list)."""
    monkeypatch.setattr(tuning, "INDEX_MIN_FILES", 0)
    monkeypatch.setattr(tuning, "INDEX_SCAN_SHARE", 0.6)
    # (and the selection of a large vault's best files, retrieval/select.py, at their size)
    monkeypatch.setattr(tuning, "SELECT_AFTER", 12)
    monkeypatch.setattr(tuning, "SELECT_FILES", 5)


def plan_of(vault, forms):
    """A complete search's read plan of the whole vault, with retrieval's knobs as set here."""
    return index_plan.plan(str(vault), str(vault), forms, min_files=tuning.INDEX_MIN_FILES,
                           scan_share=tuning.INDEX_SCAN_SHARE)


WORDS = ("falcon quartz ingest worker parser lantern cobalt ripple meadow harbor tundra "
         "glacier saffron orbit velvet beacon").split()
IDENTS = ("parse_config loadSettings HTTPServer yaml_loader.py auth-service _CONFIGValue "
          "optimizeRerenders IMPORTANT retryCount max_retries XMLHttpRequest getURLPath "
          "snake_Case_MIX café_parser naïve").split()


def search_json(vault: Path, query: str, use_index: bool, **kw) -> dict:
    old = os.environ.get("CHROLLO_INDEX")
    os.environ["CHROLLO_INDEX"] = "1" if use_index else "0"
    try:
        return retrieval.search(query, dir=str(vault), **kw).to_json()
    finally:
        if old is None:
            os.environ.pop("CHROLLO_INDEX")
        else:
            os.environ["CHROLLO_INDEX"] = old


def index_bytes(vault: Path) -> bytes:
    """Every byte of the index's files (SQLite's side files included)."""
    p = index_store.db_path(str(vault))
    out = b""
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            out += Path(p + suffix).read_bytes()
        except OSError:
            pass
    return out


def sentence(rng: random.Random, extra=()) -> str:
    pool = WORDS + IDENTS + list(extra)
    return " ".join(rng.choice(pool) for _ in range(rng.randint(3, 9)))


# ----------------------------------------------------------------------------- terms vs rg

def test_terms_hold_every_form_rg_matches(tmp_path):
    """For random text and random forms (whole words, identifier parts, multi-run forms), every
    file rg's own regex matches holds all the index terms of the form: the index's
    candidates are a superset of rg's matches."""
    rng = random.Random(30)
    alphabet = "aBcDeFgHiJ_kLmNo_PqRsTuVwXyZ09-."
    files = []
    for i in range(300):
        runs = []
        for _ in range(rng.randint(5, 30)):
            w = rng.choice(IDENTS + WORDS) if rng.random() < 0.5 else \
                "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 12)))
            if rng.random() < 0.3:
                w = w.upper() if rng.random() < 0.5 else w.swapcase()
            runs.append(w)
        p = tmp_path / f"f{i:03d}.md"
        p.write_text(" ".join(runs) + "\n")
        files.append(p)
    terms_by_file = {str(p): index_terms.terms_of(p.read_bytes()) for p in files}
    forms = ["config", "settings", "server", "http", "loader", "yaml_loader.py", "auth-service",
             "value", "rerenders", "import", "retry", "count", "max_retries", "request", "url",
             "path", "case", "mix", "parser", "caf", "configvalue"]
    forms += ["".join(rng.choice("abcdefgno") for _ in range(rng.randint(3, 5))) for _ in range(40)]
    checked = 0
    for form in forms:
        parts = [form] if len(form) >= 3 and form.isalnum() else []
        matched = {p.decode() for p, _rows in _rg.scan([form], [str(tmp_path)], parts=parts)}
        need = index_terms.form_terms(form)
        assert need is not None
        for path in matched:
            assert set(need) <= terms_by_file[path], (form, path, Path(path).read_text())
        checked += len(matched)
    assert checked > 200  # (the check was not vacuous)


# (the tokeniser as it was up to FORMAT 4: terms_of must give exactly its set, a faster way)
_OLD_RUN = re.compile(rb"[A-Za-z0-9_]+")
_OLD_PIECEFUL = re.compile(rb"\b(?:[A-Za-z0-9]+[A-Z_]|_)\w*")
_OLD_NOT_TERM = re.compile(rb"\b\w(?:\b|\w{%d,})" % index_terms.MAX_TERM)


def _old_terms_of(data: bytes) -> set:
    runs = b" ".join(set(_OLD_RUN.findall(data)))
    low = runs.lower()
    out = set(low.split())
    for r in _OLD_PIECEFUL.findall(runs):
        out.update(index_terms.pieces(r))
    return out - set(_OLD_NOT_TERM.findall(low))


def _soup(rng: random.Random) -> bytes:
    """Random identifier soup: mixed case, digits, underscores alone and in runs, runs of 1, 2,
    3, 64, 65 and hundreds of characters, non-ASCII letters and bytes, punctuation and control
    bytes."""
    pieces = ["a", "B", "_", "__", "x1", "Z9", "HTTP", "Server", "get", "URL", "max_retries",
              "loadSettings", "café", "naïve", "ÉCOLE", "日本", "\u00e9", "_CONFIGValue", "IMPORTANT",
              "snake_Case_MIX", "aB", "Ab", "ABc", "abC", "0", "9x", "x" * 63, "y" * 64, "Q" * 65,
              "w_" * 40, "Mixed" * 20]
    glue = [" ", "-", ".", "\n", "\t", "/", "(", "'", "é", "\x00", "\x7f", "\x1c", "", ""]
    parts = []
    for _ in range(rng.randint(0, 40)):
        if rng.random() < 0.6:
            w = rng.choice(pieces)
        else:
            w = "".join(rng.choice("aAbBzZ09_") for _ in range(rng.randint(1, 90)))
        parts.append(w.swapcase() if rng.random() < 0.2 else w)
        parts.append(rng.choice(glue))
    data = "".join(parts).encode("utf-8")
    if rng.random() < 0.1:  # (raw bytes too: not every file is UTF-8)
        data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 300)))
    return data


def test_terms_are_the_old_tokenisers_exactly():
    """On random identifier soup (_soup) terms_of gives the same set as the regex tokeniser it
    replaced (the index's contract with rg rests on that set)."""
    rng = random.Random(3001)
    checked = 0
    for n in range(3000):
        data = _soup(rng)
        got, want = index_terms.ascii_terms(data), _old_terms_of(data)
        assert got == want, (data, got ^ want)
        checked += len(want)
    assert index_terms.ascii_terms(b"") == set() == _old_terms_of(b"")
    assert checked > 50_000


def test_terms_of_a_file_says_none_past_the_cap():
    """A file of more than MAX_FILE_RUNS distinct runs is not tokenised (read directly: by rg,
    as a walk reads it — index.universe.rg_masks)."""
    many = b" ".join(b"w%d" % i for i in range(50))
    assert index_terms.ascii_terms(many, 49) is None and len(index_terms.ascii_terms(many, 50)) == 50


@pytest.mark.parametrize("cache,chunk_terms", [(index_build.RUN_CACHE, index_build.CHUNK_TERMS), (5, index_build.CHUNK_TERMS),
                                               (index_build.RUN_CACHE, 30)])
def test_a_build_files_each_file_under_exactly_its_terms(home, tmp_path, monkeypatch, cache, chunk_terms):
    """The postings a build writes — chunks of a few files, tokenised by worker processes — hold
    each file under exactly terms_of of its bytes: also with the run cache emptied every few
    files, with chunks cut short by their count of terms (the files left go in later chunks),
    and after a chunk that failed midway in the same process (its ids must not leak
    into the next chunk's postings)."""
    monkeypatch.setattr(index_build, "RUN_CACHE", cache)
    monkeypatch.setattr(index_build, "CHUNK_BYTES", 3000)
    monkeypatch.setattr(index_build, "POOL_BYTES", 20_000)  # (the workers' path, not only in-process)
    rng = random.Random(3002)
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(150):
        (vault / f"f{n:03d}.md").write_bytes(_soup(rng) * rng.randint(1, 3))
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    items = [(n + 1, str(p).encode(), p.name.encode(), 1, p.stat().st_size)
             for n, p in enumerate(sorted(vault.iterdir()))]
    real_read, calls = index_build.read_file, []

    def failing_read(path):
        calls.append(path)
        if len(calls) > 40:
            raise OSError("disk gone")
        return real_read(path)

    monkeypatch.setattr(index_build, "read_file", failing_read)
    with pytest.raises(OSError):
        index_build.index_chunk(items)  # (its _Posts hold 40 files' ids when it fails)
    monkeypatch.setattr(index_build, "read_file", real_read)
    monkeypatch.setattr(index_build, "CHUNK_TERMS", chunk_terms)
    for pool in (False, True):
        if not pool:
            monkeypatch.setattr(index_build, "POOL_BYTES", 1 << 40)
        else:
            monkeypatch.setattr(index_build, "POOL_BYTES", 20_000)
        got = index_build.build(str(vault), rebuild=True)
        assert got["read"] == 150
        con = sqlite3.connect(index_store.db_path(str(vault)))
        names = dict(con.execute("SELECT id, rel FROM files"))
        held: dict = {}
        for term, blob in con.execute("SELECT term, ids FROM post"):
            for fid in index_store.unpack_ids(blob):
                held.setdefault(names[fid], set()).add(term.encode())
        assert con.execute("SELECT count(DISTINCT seg) FROM post").fetchone()[0] > 10  # (many chunks)
        con.close()
        for fid, rel in names.items():
            assert held.get(rel, set()) == index_terms.terms_of((vault / rel.decode()).read_bytes()), (pool, rel)


def test_forms_the_index_cannot_answer():
    assert index_terms.form_terms("x" * 100) is None        # longer than any indexed term
    assert index_terms.form_terms("auth-service") == [b"auth", b"service"]
    # and what it can since #47: text beyond ASCII (CJK bigrams, folded spellings, other scripts)
    assert index_terms.form_terms("café") == [b"cafe"]
    assert index_terms.form_terms("连接") == ["连".encode(), "接".encode()]  # (CJK: characters, a superset)
    assert index_terms.form_terms("连") == ["连".encode()]
    assert index_terms.form_terms("ёлка") == ["елка".encode()]


def test_the_index_gives_frontmatter_ends_so_a_search_reads_no_head(home, tmp_path, monkeypatch):
    """Where each file's frontmatter ends (its rows there never count) comes from the index
    for the files it vouches for — a long frontmatter, none at all, format 1 and 2 — both when
    rg reads a list of candidates and when it walks the folder; the results are the full
    scan's, and a file the index cannot vouch for has its head read as before."""
    monkeypatch.setattr(tuning, "SELECT_FILES", 0)  # (the scan of every candidate, not the selection)
    from chrollo.retrieval import collect

    vault = tmp_path / "v"
    for i in range(12):
        write_session(vault, f"f{i:04d}-0000", f"2026-03-{1 + i:02d}T10:00:00",
                      [("user", "10:00:00", f"falcon {'quartz' if i < 2 else 'meadow'} {i}"),
                       ("agent", "10:00:05", "falcon again")], fmt=1 + i % 2)
    (vault / "long.md").write_text("---\ntitle: falcon\nnotes: " + "falcon quartz " * 600 + "\n---\nfalcon body\n")
    (vault / "bare.md").write_text("falcon quartz without a frontmatter\n---\nfalcon\n")
    (vault / "edit.md").write_text("---\na: 1\nb: 2\nc: 3\n---\nbody\nfalcon\n")
    time.sleep(index_store.RACY_NS / 1e9 + 0.05)
    index_build.build(str(vault))
    reads = []
    real = collect.frontmatter_end
    monkeypatch.setattr(collect, "frontmatter_end", lambda path: reads.append(path) or real(path))
    for q in ("falcon", "quartz"):  # (in every file: rg walks; in four: a list)
        want = search_json(vault, q, False, limit=50)
        reads.clear()
        assert search_json(vault, q, True, limit=50) == want, q
        assert reads == [], q
        assert (plan_of(vault, [q]).paths is None) == (q == "falcon")
    # an in-place edit by hand (same inode: no folder moves) that moves the frontmatter's end:
    # a walk reads every file as it is now, so it takes no end the file's stat does not vouch for
    # (even before the verification sweep reaches it: here it never does)
    monkeypatch.setattr(index_scope, "SWEEP", 0)
    with open(vault / "edit.md", "r+") as fh:
        fh.write("---\na: 1\n---\nfalcon at 4\nbody\nfalcon\n")
    want = search_json(vault, "falcon", False, limit=50)
    reads.clear()
    assert search_json(vault, "falcon", True, limit=50) == want
    assert reads == [os.fsencode(vault / "edit.md")]
    late = vault / "late.md"
    late.write_text("---\ntitle: quartz\n---\nquartz body\n")
    want = search_json(vault, "quartz", False, limit=50)
    reads.clear()
    assert search_json(vault, "quartz", True, limit=50) == want
    assert reads == [os.fsencode(late)]
    # the recall hook's search (a deadline): heads are read only for the newest files, which
    # it reads whatever the index says

    monkeypatch.setattr(tuning, "DEADLINE_BATCH", 3)
    want = search_json(vault, "falcon", False, limit=50, deadline=60)
    reads.clear()
    assert search_json(vault, "falcon", True, limit=50, deadline=60) == want
    newest = sorted(n for n in os.listdir(vault) if n.endswith(".md"))[-3:]  # (names start with their time)
    assert reads and {os.path.basename(os.fsdecode(p)) for p in reads} <= set(newest)


# ----------------------------------------------------------------------------- random histories

def _session(vault: Path, rng: random.Random, n: int, folder: Path | None = None) -> Path:
    day = 1 + n % 28
    turns = [("user" if k % 2 == 0 else "agent", f"10:{k:02d}:00", sentence(rng)) for k in range(rng.randint(1, 4))]
    return write_session(folder or vault, f"s{n:06d}-{rng.randrange(16**6):06x}", f"2026-0{1 + n % 9}-{day:02d}T10:00:00", turns)


QUERIES = ["falcon", "quartz ingest", "parse config", "loadSettings", "server", "auth-service",
           "yaml_loader.py", "glacier saffron orbit", "important", "rerenders", "retry count",
           "zebra", "unicorn", "velvet beacon harbor", "Config", "café parser", "url path"]


def _assert_same(vault: Path, step: str, used: list, queries=QUERIES) -> None:
    for q in queries:
        a, b = search_json(vault, q, False), search_json(vault, q, True)
        assert a == b, (step, q)
        p = plan_of(vault, [w for w in q.lower().split()])
        used.append(p is not None and p.paths is not None)


def _swept(vault: Path, rng: random.Random) -> None:
    """What the index promises for a file edited in place outside chrollo (same name, same
    inode: its folder does not move): it is read directly once the verification sweep has
    passed it — at most files / SWEEP complete searches later — or after `chrollo index`."""
    if rng.random() < 0.5:
        index_build.build(str(vault))
        return
    files = len(vaultfiles.walk(str(vault)))
    for _ in range(-(-files // index_scope.SWEEP) + 1):
        plan_of(vault, ["falcon"])


def test_search_with_index_equals_full_scan_over_random_histories(home, tmp_path, monkeypatch):
    """Appends through chrollo, hand appends and same-size hand edits, deletions, files
    created by hand, forgets (whole sessions and lines), peer receipts and kill -9 during
    index updates: after each step the index-assisted search equals the full scan — at once
    for what moves a folder (a file created, deleted, renamed, saved atomically) and for
    chrollo's own writes; for a file edited in place by hand, once the sweep has passed it or
    `chrollo index` ran (docs/index.md) — and no forgotten word is in the index's own files."""
    monkeypatch.setattr(index_scope, "SWEEP", 7)
    chosen: list = []  # (whether each search's selection came from the index)
    real_universe = index_universe.indexed_universe
    monkeypatch.setattr(index_universe, "indexed_universe",
                        lambda *a, **kw: (u := real_universe(*a, **kw), chosen.append(u is not None and u.n > 12))[0])
    rng = random.Random(3030)
    vault = tmp_path / "vault"
    made = [_session(vault, rng, n) for n in range(30)]
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)  # (files changed within RACY_NS are read directly)
    index_build.build(str(vault))
    used: list = []
    forgotten: list = []
    _assert_same(vault, "built", used)
    for step in range(36):
        op = rng.choice(["capture", "hand_append", "hand_edit", "delete", "hand_create", "forget",
                         "forget_lines", "peer", "kill", "new_session", "build", "atomic_save", "rename"])
        live = [p for p in made if p.exists()]
        if op == "capture" and live:
            p = rng.choice(live)
            with open(p, "a") as fh:
                fh.write(f"\n[2026-10-0{rng.randint(1, 9)} 10:00:00] [User]\n{sentence(rng, ['zebra'])}\n")
            index_update.update(str(vault), [p])
        elif op == "new_session":
            made.append(_session(vault, rng, 100 + step))
            index_update.update(str(vault), [made[-1]])
        elif op == "hand_append" and live:
            with open(rng.choice(live), "a") as fh:
                fh.write(f"\nunicorn {sentence(rng)}\n")
        elif op == "hand_edit" and live:
            p = rng.choice(live)
            text = p.read_text()
            for a, b in (("falcon", "unicor"), ("quartz", "zebras"), ("server", "harbor")):
                text = text.replace(a, b)  # (same length: the file's size does not change)
            p.write_text(text)
        elif op == "atomic_save" and live:  # (an editor's save: a new file renamed over the old)
            p = rng.choice(live)
            tmp = p.with_suffix(".tmp")
            tmp.write_text(p.read_text().replace("falcon", "zebra"))
            os.replace(tmp, p)
        elif op == "rename" and live:
            p = rng.choice(live)
            made.append(p.with_name("r" + p.name))
            p.rename(made[-1])
        elif op == "delete" and live:
            rng.choice(live).unlink()
        elif op == "hand_create":
            (vault / "notes").mkdir(exist_ok=True)
            (vault / "notes" / f"note{step}.md").write_text(f"velvet beacon {sentence(rng)}\n")
        elif op == "forget" and live:
            p = rng.choice(live)
            secret = f"xyzzy{step}plugh"
            with open(p, "a") as fh:
                fh.write(f"\n[2026-10-01 10:00:00] [User]\nthe password is {secret}\n")
            index_update.update(str(vault), [p])
            assert secret.encode() in index_bytes(vault)
            forget.forget([str(p)], dir=str(vault))
            forgotten.append(secret)
        elif op == "forget_lines" and live:
            p = rng.choice(live)
            secret = f"qwop{step}leak"
            with open(p, "a") as fh:
                fh.write(f"\n[2026-10-01 10:00:00] [User]\nmy token {secret} here\n")
            index_update.update(str(vault), [p])
            forget.forget(lines=secret, dir=str(vault))
            forgotten.append(secret)
        elif op == "peer":
            folder = vault / "peers" / "laptop"
            folder.mkdir(parents=True, exist_ok=True)
            made.append(_session(vault, rng, 500 + step, folder))
            if rng.random() < 0.5:
                index_update.update(str(vault), [made[-1]])
        elif op == "kill":
            _kill_during_update(vault, rng)
        elif op == "build":
            index_build.build(str(vault))
        if op in ("hand_append", "hand_edit"):
            _swept(vault, rng)
        _assert_same(vault, f"{step}:{op}", used, rng.sample(QUERIES, 6))
        blob = index_bytes(vault)
        for w in forgotten:
            assert w.encode() not in blob, (step, op, w)
    _assert_same(vault, "end", used)
    assert sum(used) > len(used) // 5  # the index was used (not bypassed) for many searches
    assert sum(chosen) > len(chosen) // 2  # and the large vault's best files came from it
    assert forgotten


def _kill_during_update(vault: Path, rng: random.Random) -> None:
    """kill -9 a process that is updating the index (a build of every file, to be slow)."""
    code = ("import sys, glob; from chrollo.index import build as index_build, update as index_update\n"
            "while True:\n"
            "    index_build.build(sys.argv[1], rebuild=sys.argv[2] == '1')\n"
            "    index_update.update(sys.argv[1], glob.glob(sys.argv[1] + '/*.md'))\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", code, str(vault), str(int(rng.random() < 0.3))], env=env)
    time.sleep(rng.uniform(0.3, 1.2))
    proc.send_signal(signal.SIGKILL)
    proc.wait()


# ----------------------------------------------------------------------------- a bad index

@pytest.fixture
def indexed(home, tmp_path):
    rng = random.Random(7)
    vault = tmp_path / "vault"
    for n in range(20):
        _session(vault, rng, n)
    index_build.build(str(vault))
    return vault


@pytest.mark.parametrize("damage", ["truncated", "garbage", "other_version", "locked", "row"])
def test_a_damaged_index_is_bypassed_then_rebuilt(indexed, damage, home):
    vault = indexed
    want = {q: search_json(vault, q, False) for q in QUERIES}
    db = index_store.db_path(str(vault))
    lock = None
    if damage == "truncated":
        with open(db, "r+b") as fh:
            fh.truncate(os.path.getsize(db) // 2)
    elif damage == "garbage":
        data = bytearray(Path(db).read_bytes())
        for i in range(4096, len(data), 997):
            data[i] ^= 0x5A
        Path(db).write_bytes(bytes(data))
    elif damage == "other_version":
        con = sqlite3.connect(db)
        con.execute("UPDATE meta SET v = '0.0.0-other' WHERE k = 'version'")
        con.commit()
        con.close()
    elif damage == "locked":  # a writer mid-transaction, its changes not committed
        lock = sqlite3.connect(db, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        lock.execute("DELETE FROM post")
    elif damage == "row":  # a posting silently changed: its checksum no longer holds
        con = sqlite3.connect(db)
        con.execute("UPDATE post SET ids = X'00000000' WHERE term = 'falcon'")
        con.commit()
        con.close()
    for q in QUERIES:
        assert search_json(vault, q, True) == want[q], q
    if damage in ("row", "other_version"):
        assert plan_of(vault, ["falcon"]) is None
    if damage == "locked":  # (WAL: a search reads the last commit, whatever a writer is doing)
        assert plan_of(vault, ["falcon"]) is not None
    if lock is not None:
        lock.rollback()
        lock.close()
    p, out = run_json(["index", "--dir", vault] + (["--rebuild"] if damage == "row" else []), home)
    assert p.returncode == 0, p.stderr
    assert out["files"] == 20
    assert plan_of(vault, ["falcon"]) is not None
    for q in QUERIES:
        assert search_json(vault, q, True) == want[q], q


# ----------------------------------------------------------------------------- the command

def test_index_command_builds_then_reads_only_what_changed(home, tmp_path):
    rng = random.Random(1)
    vault = tmp_path / "vault"
    files = [_session(vault, rng, n) for n in range(12)]
    # files changed within RACY_NS of being read are read again once: let them age first, or
    # whether the second build reads them depends on how fast the first one started
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    p, first = run_json(["index", "--dir", vault], home)
    assert p.returncode == 0 and first["files"] == 12 and first["read"] == 12 and first["terms_read"] > 10
    assert os.stat(first["index"]).st_mode & 0o777 == 0o600
    p, again = run_json(["index", "--dir", vault], home)
    assert again["read"] == 0 and again["files"] == 12 and again["terms_read"] == 0  # (of this run: was "terms")
    with open(files[0], "a") as fh:
        fh.write("\nappended by hand\n")
    files[1].unlink()
    p, third = run_json(["index", "--dir", vault], home)
    assert (third["read"], third["dropped"], third["files"]) == (1, 1, 11)
    p, rebuilt = run_json(["index", "--dir", vault, "--rebuild"], home)
    assert rebuilt["read"] == 11
    p = run(["index", "--dir", vault], home)
    assert p.returncode == 0 and "indexed 11 files" in p.stdout and not p.stderr
    p, err = run_json(["index", "--dir", tmp_path / "nope"], home)
    assert p.returncode == 1 and err["error"]["kind"] == "vault_not_found"


def test_capture_keeps_the_index_in_step(home, tmp_path):
    """A turn captured after the index was built is in it (an increment, not a rebuild)."""
    import datetime as dt

    from chrollo.capture import Capture
    from chrollo.harness.common import Unit

    vault = tmp_path / "vault"
    rng = random.Random(2)
    for n in range(5):
        _session(vault, rng, n)
    index_build.build(str(vault))
    with Capture("live0001-x", "claude-code", "/tmp/p", vault=str(vault)) as cap:
        cap.run([Unit("user", dt.datetime(2026, 10, 1, 10), ["the marmalade pipeline broke"], "k1")])
    con = sqlite3.connect(index_store.db_path(str(vault)))
    assert con.execute("SELECT count(*) FROM delta WHERE term = 'marmalade'").fetchone()[0] == 1
    assert search_json(vault, "marmalade", True) == search_json(vault, "marmalade", False)
    assert search_json(vault, "marmalade", True)["hits"]


# ----------------------------------------------------------------------------- recall at scale

def test_the_hook_recalls_the_oldest_of_50000_sessions(home, tmp_path):
    """With the vault indexed, the recall hook's deadline search reaches every session: the
    answer is only in the oldest of 50,000 (without the index the hook reads the newest
    first and runs out of time long before it)."""
    vault = tmp_path / "vault"
    vault.mkdir()
    body = ("---\nsession_id: \"{sid}\"\ndate: \"{d}\"\nharness: \"claude-code\"\n---\n\n"
            "[{d} 10:00:00] [User]\n{text}\n\n[{d} 10:00:30] [Agent]\nok, noted.\n")
    n = 50_000
    t0 = 1_500_000_000
    for i in range(n):
        ts = time.gmtime(t0 + i * 3600)
        d = time.strftime("%Y-%m-%d", ts)
        sid = f"{i:08x}-0000-4000-8000-000000000000"
        text = ("the staging database password rotation uses the vault cronjob at 3am"
                if i == 0 else f"we talked about the weather and lunch plans, note {i}")
        (vault / f"{time.strftime('%Y-%m-%d_%H%M%S', ts)}_{sid[:8]}.md").write_text(
            body.format(sid=sid, d=d, text=text))
    index_build.build(str(vault))
    # (a first prompt lists the vault for the listing cache, as any first prompt does)
    recall.recall("what did we say about lunch plans?", "other-session", vault=str(vault))
    started = time.monotonic()
    block = recall.recall("how does the staging database password rotation work?", "other-session",
                          vault=str(vault), started=started)
    assert "cronjob at 3am" in block


def test_a_same_size_edit_right_after_indexing_is_not_trusted(home, tmp_path):
    """An edit within the file system's time granularity of being indexed, keeping the size,
    leaves size and mtime as they were: such a file is read directly (RACY_NS)."""
    vault = tmp_path / "vault"
    rng = random.Random(5)
    for n in range(6):
        _session(vault, rng, n)
    index_build.build(str(vault))
    time.sleep(index_store.RACY_NS / 1e9)
    index_build.build(str(vault))
    p = next(vault.glob("*.md"))
    for k in range(20):
        with open(p, "a") as fh:
            fh.write(f"\nmarker{k:02d} aaaa\n")
        index_update.update(str(vault), [p])
        with open(p, "r+b") as fh:  # at once: same size, most likely the same mtime tick
            data = fh.read().replace(f"marker{k:02d} aaaa".encode(), f"marker{k:02d} zulu".encode())
            fh.seek(0)
            fh.write(data)
        assert search_json(vault, "zulu", True) == search_json(vault, "zulu", False)
        assert search_json(vault, "zulu", True)["hits"]


# ----------------------------------------------------------------------------- install, import, mesh, doctor, stats

def test_install_and_import_build_the_index_and_doctor_and_stats_say_how_much(home, tmp_path):
    vault = tmp_path / "vault"
    rng = random.Random(9)
    for n in range(4):
        _session(vault, rng, n)
    fake = tmp_path / "h"
    fake.mkdir()
    env = {"HOME": fake, "CLAUDE_CONFIG_DIR": tmp_path / "claude", "CHROLLO_MEMORIES_DIR": vault}
    p, out = run_json(["stats"], home, **env)
    assert out["index"]["usable"] is False and out["index"]["files"] == 4
    assert run(["install", "claude-code"], home, **env).returncode == 0
    assert os.path.isfile(index_store.db_path(str(vault)))
    p, out = run_json(["stats"], home, **env)
    assert out["index"]["usable"] and out["index"]["files"] == 4
    src = tmp_path / "old.jsonl"
    src.write_text("\n".join(json.dumps({"role": r, "content": c, "timestamp": f"2026-10-0{k + 1}T10:00:00Z",
                                         "session_id": "imported-0001"})
                             for k, (r, c) in enumerate([("user", "where is the kumquat ledger"),
                                                         ("assistant", "in the kumquat folder")])) + "\n")
    p = run(["import", "jsonl", "--source", src], home, **env)
    assert p.returncode == 0, p.stderr
    con = sqlite3.connect(index_store.db_path(str(vault)))
    assert con.execute("SELECT count(*) FROM post WHERE term = 'kumquat'").fetchone()[0] \
        + con.execute("SELECT count(*) FROM delta WHERE term = 'kumquat'").fetchone()[0] >= 1
    time.sleep(index_store.RACY_NS / 1e9)
    index_build.build(str(vault))
    p, out = run_json(["stats"], home, **env)
    assert (out["index"]["indexed"], out["index"]["files"]) == (5, 5)
    p = run(["stats"], home, **env)
    assert "indexed   5 of 5 files" in p.stdout
    p, report = run_json(["doctor"], home, **env)
    check = next(c for c in report["checks"] if c["name"] == "search index")
    assert check["status"] == "ok" and "5 of 5 files indexed" in check["detail"]


def test_files_a_peer_sent_are_indexed_by_ensure_under_peers(indexed):
    vault = indexed
    folder = vault / "peers" / "laptop"
    folder.mkdir(parents=True)
    got = _session(vault, random.Random(3), 900, folder)
    with open(got, "a") as fh:
        fh.write("\nthe persimmon rollout\n")
    assert index_build.ensure(str(vault), under="peers")["read"] == 1
    con = sqlite3.connect(index_store.db_path(str(vault)))
    assert con.execute("SELECT count(*) FROM post WHERE term = 'persimmon'").fetchone()[0] == 1
    assert index_build.ensure(str(tmp := vault / "nothing-here")) is None and not tmp.exists()


def test_a_new_session_renews_its_folders_record_so_searches_do_not_list_it(home, tmp_path):
    """Capture's update of a file new to the index lists its folder and makes that listing
    the folder's record (a search then trusts the folder instead of listing it each time);
    a record made within RACY_NS of the folder's change is renewed by a later update."""
    rng = random.Random(11)
    vault = tmp_path / "vault"
    made = [_session(vault, rng, n) for n in range(8)]
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    index_build.build(str(vault))

    def trusted() -> bool:
        con = index_store.open_reader(str(vault))
        try:
            s = index_scope.Scope.of(con, os.path.realpath(vault), str(vault), False, frozenset())
            return bool(s.trusted) and not s.new
        finally:
            con.close()

    assert trusted()
    new = _session(vault, rng, 50)
    assert not trusted()  # (the folder moved: listed by the search, the new file read directly)
    assert search_json(vault, "falcon", True) == search_json(vault, "falcon", False)
    index_update.update(str(vault), [new])
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    index_update.update(str(vault), [made[0]])  # (the next turn: a record made racily is renewed)
    assert trusted()
    assert search_json(vault, "falcon", True) == search_json(vault, "falcon", False)


def test_a_new_session_in_a_folder_far_behind_its_record_is_indexed_alone(home, tmp_path, monkeypatch):
    """Capture runs inside a hook: a file new to the index whose folder grew far behind its
    record (a sync tool delivered thousands of files) is indexed alone — the folder's other
    new names are left to the catch-up build, its record stays stale (searches list it) — so
    the hook does not record a whole foreign folder (4.7 s at 245,000 files, profiled)."""
    rng = random.Random(12)
    vault = tmp_path / "vault"
    for n in range(8):
        _session(vault, rng, n)
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    index_build.build(str(vault))
    for n in range(100, 160):   # (delivered behind the index)
        _session(vault, rng, n)
    monkeypatch.setattr(index_update, "RELIST_MAX", 20, raising=False)
    new = _session(vault, rng, 500)
    index_update.update(str(vault), [new])
    con = sqlite3.connect(index_store.db_path(str(vault)))
    try:
        rows = con.execute("SELECT count(*) FROM files").fetchone()[0]
        words = con.execute("SELECT count(*) FROM delta WHERE id = (SELECT id FROM files WHERE rel = ?)",
                            (os.path.basename(new).encode(),)).fetchone()[0]
    finally:
        con.close()
    assert rows == 9, rows   # the 8 indexed and the new one: not the 60 delivered
    assert words > 0         # the new file's words are in the index
    for q in ("falcon", "quartz harbor"):
        assert search_json(vault, q, True) == search_json(vault, q, False)


def test_search_with_index_equals_full_scan_for_nul_utf16_and_hidden_md_folders(home, tmp_path):
    """Files rg reads but a naive reading misses: a session holding a NUL byte (rg's "binary
    file matches" must not eat the next file's hits), a UTF-16 session with a BOM (rg
    transcodes it) and sessions inside a hidden folder named ``*.md`` (rg's ``-g '*.md'``
    whitelists the folder itself): the index-assisted search equals the full scan."""
    rng = random.Random(42)
    vault = tmp_path / "vault"
    made = [_session(vault, rng, n) for n in range(12)]
    nul = made[3]
    nul.write_bytes(nul.read_bytes() + b"\n[2026-10-01 10:00:00] [User]\nfalcon in\0side zebra\n")
    (vault / "utf16.md").write_bytes(b"\xff\xfe" + "zebra falcon unicorn\nquartz\n".encode("utf-16-le"))
    (vault / "utf16be.md").write_bytes(b"\xfe\xff" + "unicorn beacon\n".encode("utf-16-be"))
    hidden = vault / ".notes.md"
    (hidden / "deeper").mkdir(parents=True)
    (hidden / "n.md").write_text("unicorn velvet zebra\n")
    (hidden / "deeper" / "d.md").write_text("unicorn harbor\n")
    (hidden / ".skipped").mkdir()
    (hidden / ".skipped" / "s.md").write_text("unicorn\n")
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    index_build.build(str(vault))
    for q in ("zebra", "unicorn", "falcon", "quartz", "velvet beacon harbor"):
        a, b = search_json(vault, q, False), search_json(vault, q, True)
        assert a == b, q
        p = plan_of(vault, q.split())
        assert p is not None and p.paths is not None, q  # (the index was used)
    hits = {Path(h["path"]).name for h in search_json(vault, "unicorn", True, limit=50)["hits"]}
    assert {"utf16.md", "utf16be.md", "n.md", "d.md"} <= hits and "s.md" not in hits
    assert nul.name in {Path(h["path"]).name for h in search_json(vault, "zebra", True, limit=50)["hits"]}
    # and kept in step: a capture's update of the hidden folder's file
    with open(hidden / "n.md", "a") as fh:
        fh.write("glacier\n")
    index_update.update(str(vault), [hidden / "n.md"])
    assert search_json(vault, "glacier", True) == search_json(vault, "glacier", False)


def test_a_file_of_millions_of_distinct_words_is_read_directly_and_the_build_stays_small(home, tmp_path):
    """A session of a million distinct words (a peer may send 64 MiB of them) is not
    tokenised whole — a 28 MB one peaked at 2.1 GB — but left unindexed (read directly by
    every search): the build's memory stays bounded and the search still finds every word of
    it, as the full scan does."""
    vault = tmp_path / "vault"
    vault.mkdir()
    words = [f"k{i:06x}" for i in range(1_000_000)]
    big = vault / "2026-01-01-big.md"
    big.write_text("# big\n\n" + "\n".join(" ".join(words[i:i + 12]) for i in range(0, len(words), 12))
                   + "\nfalcon\n")
    for n in range(14):  # (more than SELECT_AFTER: the selection reads the unindexed file too)
        (vault / f"2026-01-{n + 2:02d}-s.md").write_text(f"falcon k00000{n % 10} quartz\n")
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)
    # (VmHWM, the peak of this process's own memory: ru_maxrss survives exec, so a child forked
    # from a large pytest process would report the parent's size)
    code = ("import sys; from chrollo.index.build import build; r = build(sys.argv[1]);"
            "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM:')][0].split()[1];"
            "print(r['files'], int(hwm) // 1024)")
    out = subprocess.run([sys.executable, "-c", code, str(vault)], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout.split()
    assert int(out[0]) == 15
    assert int(out[1]) < 200, f"peak RSS {out[1]} MB"
    con = sqlite3.connect(index_store.db_path(str(vault)))
    assert con.execute("SELECT ok FROM files WHERE rel = ?", (big.name.encode(),)).fetchone() == (-1,)
    con.close()
    for q in ("k0f423f", "k000003", "falcon", "quartz k000005"):
        a, b = search_json(vault, q, False), search_json(vault, q, True)
        assert a == b, q
        assert a["hits"], q
    assert plan_of(vault, ["k0f423f"]).paths is not None  # (the index was used)
    # a capture's update keeps it so (and reads it the same way)
    with open(big, "a") as fh:
        fh.write("glacier\n")
    index_update.update(str(vault), [big])
    assert search_json(vault, "glacier", True) == search_json(vault, "glacier", False)
    assert search_json(vault, "glacier", True)["hits"]


def test_rg_masks_are_what_the_index_says_each_file_holds(tmp_path):
    """The selection's view of files the index cannot vouch for (index.universe.rg_masks: one
    rg pass, each distinct text worked out once) is, file by file, what terms_of of its body
    holds — forms of one run and of several (``auth-service``), identifier parts, accented
    spellings, with and without a frontmatter holding the words too."""
    rng = random.Random(4707)
    folder = tmp_path / "v"
    folder.mkdir()
    heads = ["", "---\ntitle: falcon parse_config\n---\n", "---\r\nfalcon: 1\r\n---\r\n", "---\nx: 1\n",
             "---\n" + "k: falcon\n" * 3 + "---\n"]
    for n in range(120):
        body = _soup(rng) + b"\n" + " ".join(rng.choice(WORDS + IDENTS) for _ in range(rng.randint(0, 12))).encode()
        (folder / f"f{n:03d}.md").write_bytes(rng.choice(heads).encode() + body)
    forms = [["falcon"], ["parse_config", "parse-config"], ["auth-service"], ["cafe"], ["settings"], ["mix"],
             ["quartz", "quartzes"], ["http", "server"]]
    for k in range(1, len(forms) + 1):
        groups = index_terms.term_groups(forms[:k])
        want = {}
        for p in folder.iterdir():
            _fm, body = index_terms.body_and_end(p.read_bytes())
            held = index_terms.terms_of(body)
            m = sum(1 << i for i, g in enumerate(groups) if index_terms.holds(held, g))
            if m:
                want[str(p).encode()] = m
        got = dict(index_universe.rg_masks(groups, [str(folder)], ("*.md",), 30))
        assert got == want, k
        assert len(want) > 10


def test_a_build_committing_while_a_search_reads_the_index_is_not_half_seen(indexed, monkeypatch):
    """The order file and the postings are read in one snapshot of the index: a build that
    commits new files between the two reads is seen whole or not at all. (Seen at 1 GB while
    a catch-up ran: postings named files newer than the order file the search had read, and
    the search failed with "IndexError: array index out of range".)"""
    vault = indexed
    time.sleep(index_store.RACY_NS / 1e9 * 1.5)  # (files changed within RACY_NS are read directly)
    index_build.build(str(vault))
    before = search_json(vault, "falcon", False)
    real = index_universe.read_postings
    new = []

    def commit_first(con, words):
        if not new:
            new.extend(write_session(vault, f"late{n}", "2026-11-30T10:00:00", [("user", "10:00:00", "falcon " * 3)])
                       for n in range(3))
            index_update.update(str(vault), [str(p) for p in new])
        return real(con, words)

    monkeypatch.setattr(index_universe, "read_postings", commit_first)
    got = search_json(vault, "falcon", True)
    assert new and got.get("error") is None, got.get("error")
    monkeypatch.setattr(index_universe, "read_postings", real)
    assert got in (before, search_json(vault, "falcon", False))
