"""`chrollo stats`' activity: turns per day or week, by project or harness, as a chart and in --json."""
from __future__ import annotations

import datetime as dt

import pytest

from conftest import run, run_json, write_session


def _vault(tmp_path):
    vault = tmp_path / "v"
    write_session(vault, "aaaa1111-x", "2026-10-27T09:00:00", [
        ("user", "09:00:00", "q1"), ("agent", "09:00:05", ["a1"]),
        ("user", "2026-10-28 10:00:00", "next day"), ("agent", "2026-10-28 10:00:09", ["a2"])],
        cwd="/home/user/infra", fmt=2)
    write_session(vault, "bbbb2222-x", "2026-10-28T14:00:00", [("user", "14:00:00", "zsh")],
                  harness="codex", cwd="/home/user/dotfiles")
    write_session(vault, "cccc3333-x", "2026-08-01T08:00:00", [("user", "08:00:00", "old")], cwd="/home/user/infra")
    return vault


def test_series_per_day_by_project(home, tmp_path):
    vault = _vault(tmp_path)
    r, out = run_json(["stats", "--dir", vault, "--since", "2026-10-26", "--by", "project"], home)
    assert r.returncode == 0
    act = out["activity"]
    assert (act["per"], act["by"], act["since"], act["until"], act["turns"]) == \
        ("day", "project", "2026-10-26", "2026-11-01", 5)
    days = {d["start"]: d for d in act["series"]}
    assert list(days) == [f"2026-10-{d}" for d in range(26, 32)] + ["2026-11-01"]  # every day, zeros too
    assert days["2026-10-27"] == {"start": "2026-10-27", "turns": 2, "by": {"infra": 2}}
    assert days["2026-10-28"]["by"] == {"infra": 2, "dotfiles": 1}  # each turn on its own day
    assert days["2026-10-26"]["turns"] == 0
    # the totals are still the whole vault's
    assert (out["sessions"], out["turns"]) == (3, 6)


def test_weeks_by_harness_and_the_default_window(home, tmp_path):
    vault = _vault(tmp_path)
    r, out = run_json(["stats", "--dir", vault, "--by", "harness"], home)
    act = out["activity"]
    assert act["per"] == "week" and act["until"] == "2026-11-01"
    assert dt.date.fromisoformat(act["since"]) == dt.date(2026, 11, 1) - dt.timedelta(weeks=12) + dt.timedelta(days=1)
    weeks = {w["start"]: w for w in act["series"]}
    assert all(dt.date.fromisoformat(k).weekday() == 0 for k in weeks)  # weeks start on Monday
    assert weeks["2026-10-26"]["by"] == {"claude-code": 4, "codex": 1}
    assert "2026-07-27" not in weeks and act["turns"] == 5  # 2026-08-01 is before the 12 weeks


def test_chart_piped_and_errors(home, tmp_path):
    vault = _vault(tmp_path)
    out = run(["stats", "--dir", vault, "--since", "2026-10-26", "--by", "project"], home).stdout
    assert "turns per day, 2026-10-26 .. 2026-11-01 by project: 5" in out
    row = next(ln for ln in out.splitlines() if ln.startswith("  2026-10-28"))
    assert row.count("█") == 40 and row.rstrip().endswith("3  infra 2, dotfiles 1")
    half = next(ln for ln in out.splitlines() if ln.startswith("  2026-10-27"))
    assert half.count("█") == 27  # 2 of 3, of 40 columns
    assert "\x1b" not in out  # (no recall line: --dir names another folder than the vault, #44)
    for args, kind in ((["--since", "soon"], "bad_date"), (["--since", "2026-11-01", "--until", "2026-10-01"], "bad_date")):
        r, err = run_json(["stats", "--dir", vault, *args], home)
        assert r.returncode == 2 and err["error"]["kind"] == kind
    r = run(["stats", "--dir", vault, "--by", "colour"], home)
    assert r.returncode == 2


@pytest.mark.parametrize("text,end,want", [
    ("today", False, "2026-11-01T00:00:00"), ("today", True, "2026-11-01T23:59:59.999999"),
    ("yesterday", False, "2026-10-31T00:00:00"), ("7d", False, "2026-10-25T12:00:00"),
    ("2w", False, "2026-10-18T12:00:00"), ("3m", False, "2026-08-01T12:00:00"), ("1y", False, "2025-11-01T12:00:00"),
    ("2026-06-01", False, "2026-06-01T00:00:00"), ("2026-06-01", True, "2026-06-01T23:59:59.999999"),
    ("2026-06-01T14:30", False, "2026-06-01T14:30:00"), ("YESTERDAY", True, "2026-10-31T23:59:59.999999"),
])
def test_one_date_grammar(home, text, end, want):
    from chrollo.dates import parse

    assert parse(text, end=end).isoformat() == want


def test_offsets_become_local_time(home):
    from chrollo.dates import parse
    from chrollo.errors import UsageError

    got = parse("2026-06-01T14:30:00+02:00")
    assert got.tzinfo is None and got == dt.datetime(2026, 6, 1, 12, 30, tzinfo=dt.timezone.utc).astimezone().replace(tzinfo=None)
    assert parse("2026-06-01T12:30:00Z") == got
    for bad in ("1969-12-31", "next week", "7x", "2026-13-01", ""):
        if bad:
            with pytest.raises(UsageError):
                parse(bad)
    assert parse("") is None and parse(None) is None


def test_forget_and_import_take_the_same_dates(home, tmp_path):
    vault = home / "memories"
    write_session(vault, "aaaa1111-x", "2026-10-31T09:00:00", [("user", "09:00:00", "recent")])
    write_session(vault, "bbbb2222-x", "2026-10-01T09:00:00", [("user", "09:00:00", "older")])
    r, out = run_json(["forget", "--since", "yesterday", "--dry-run"], home)
    assert r.returncode == 0 and [s["session_id"] for s in out["sessions"]] == ["aaaa1111-x"]
    r, out = run_json(["forget", "--until", "2w", "--dry-run"], home)  # started on or before 10-18
    assert [s["session_id"] for s in out["sessions"]] == ["bbbb2222-x"]
    r, out = run_json(["forget", "--since", "next week", "--dry-run"], home)
    assert r.returncode == 2 and out["error"]["kind"] == "bad_date"
    r, out = run_json(["import", "jsonl", "--source", tmp_path / "none", "--since", "7d", "--dry-run"], home)
    assert out.get("error", {}).get("kind") != "bad_date"
    r, out = run_json(["import", "jsonl", "--source", tmp_path / "none", "--since", "soon", "--dry-run"], home)
    assert r.returncode == 2 and out["error"]["kind"] == "bad_date"


def test_a_second_run_reads_only_the_files_that_changed(home, tmp_path, monkeypatch):
    """stats keeps each file's counts beside the vault's cached listing, keyed by the file's
    size and mtime: a second run opens no unchanged file; a file appended to, a new one and a
    deleted one are counted as they are now, exactly as a run without the cache counts them;
    `forget` drops the cache with the listings (it holds project names and dates)."""
    import os
    import shutil
    import time

    from chrollo import layout, vaultstats

    vault = _vault(tmp_path)
    old = time.time() - 60  # (a file changed in the last second is not trusted to the cache)
    for p in vault.rglob("*.md"):
        os.utime(p, (old, old))

    def both(**kw):
        return (vaultstats.stats(str(vault), since="2026-10-20", **kw).to_json(),
                vaultstats.stats(str(vault), since="2026-10-20", per="week", by="harness").to_json())

    first = both(by="project")
    cache = layout.stats_cache(str(vault.resolve()))
    assert os.path.isfile(cache) and oct(os.stat(cache).st_mode & 0o777) == "0o600"
    opened = []
    real = vaultstats._vault.open_regular
    monkeypatch.setattr(vaultstats._vault, "open_regular", lambda p: opened.append(os.path.basename(p)) or real(p))
    assert both(by="project") == first and opened == []

    grown = next(vault.glob("*aaaa1111*.md"))
    with open(grown, "a") as fh:
        fh.write("## [2026-10-30 08:00:00] [User]\none more\n\n\n")
    os.utime(grown, (old + 1, old + 1))
    next(vault.glob("*cccc3333*.md")).unlink()
    write_session(vault, "dddd4444-x", "2026-10-29T09:00:00", [("user", "09:00:00", "new"), ("agent", "09:00:01", ["ok"])])
    got = both(by="project")
    assert sorted(set(opened)) == sorted([grown.name, next(vault.glob("*dddd4444*.md")).name])
    assert got[0]["turns"] == 6 + 1 - 1 + 2 and got[0]["sessions"] == 3
    shutil.rmtree(os.path.dirname(cache))
    assert both(by="project") == got  # what a run without the cache counts

    assert run(["forget", "dddd4444-x", "--yes", "--dir", vault], home).returncode == 0
    assert not os.path.exists(cache)


def test_header_dates_finds_exactly_the_headers():
    """stats' fast header scan (after a newline, not ^ with re.M) finds what HEADER_BYTES_RE finds."""
    import random

    from chrollo.fileformat import HEADER_BYTES_RE, header_dates

    pieces = [b"## [2026-10-01 10:00:00] [User]", b"[2026-10-02 10:00:00] [Agent]", b"[10:00:00] [User]",
              b"## [10:00:01] [Agent] legacy text", b"\\[2026-10-01 10:00:00] [User]", b"> [2026-10-01 10:00:00] [User]",
              b"## [2026-10-01 10:00] [User]", b"text", b"", b"\r", b"---", b"#", b"["]
    rnd = random.Random(3)
    for _ in range(3000):
        data = rnd.choice([b"", b"\n"]).join(rnd.choice(pieces) + rnd.choice([b"\n", b"\n\n", b"", b"\r\n"])
                                             for _ in range(rnd.randint(0, 8)))
        assert sorted(header_dates(data)) == sorted(s for s, _t, _r in HEADER_BYTES_RE.findall(data)), data


def test_a_damaged_count_cache_is_read_around(home, tmp_path):
    """state/ is disposable: counts that are not what stats wrote are not trusted (the file
    is read again), never a crash."""
    import json
    import os
    import time

    from chrollo import layout, vaultstats

    vault = _vault(tmp_path)
    old = time.time() - 60
    for p in vault.rglob("*.md"):
        os.utime(p, (old, old))
    want = vaultstats.stats(str(vault), since="2026-10-20", by="project").to_json()
    cache = layout.stats_cache(str(vault.resolve()))
    got = json.loads(open(cache).read())
    for rel, packed in got["files"].items():
        fields = packed.split("\t")
        got["files"][rel] = "\t".join(fields[:6] + ["many", "2026-10-27=x,2026-10-28=2"])
    with open(cache, "w") as fh:
        json.dump(got, fh)
    assert vaultstats.stats(str(vault), since="2026-10-20", by="project").to_json() == want


def test_a_range_ending_at_year_9999_gives_buckets_not_an_overflow(home, tmp_path):
    """#44: `--until 9999-12-27` (the last week reaches past the calendar's end) is counted,
    not an OverflowError."""
    vault = _vault(tmp_path)
    for per in ("day", "week"):
        r, out = run_json(["stats", "--dir", vault, "--since", "9999-12-20", "--until", "9999-12-27", "--per", per], home)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        assert out["activity"]["series"][-1]["start"] <= "9999-12-27" and out["activity"]["turns"] == 0


def test_a_range_of_too_many_bars_is_a_usage_error_at_once(home, tmp_path):
    """#44: 1970..9999 per day was 2.9 million bars (94 s, 272 MB of JSON): past MAX_BARS
    it is a usage error of its own kind (`too_many_bars`: the dates are good, the range is too
    long for --per) naming --per week and a narrower range, before any counting."""
    import time

    from chrollo.vaultstats import MAX_BARS

    vault = _vault(tmp_path)
    t0 = time.monotonic()
    r, err = run_json(["stats", "--dir", vault, "--since", "1970-01-01", "--until", "9999-12-01", "--per", "day"], home)
    assert r.returncode == 2 and err["error"]["kind"] == "too_many_bars", r.stdout
    assert "--per week" in err["error"]["message"] + err["error"].get("hint", "")
    assert time.monotonic() - t0 < 10
    r, err = run_json(["stats", "--dir", vault, "--since", "1970-01-01", "--until", "9999-12-01"], home)
    assert r.returncode == 2 and err["error"]["kind"] == "too_many_bars"
    human = run(["stats", "--dir", vault, "--since", "1970-01-01", "--until", "9999-12-01"], home)
    assert human.returncode == 2 and "at most 5,000" in human.stderr and "Traceback" not in human.stderr
    # a long range that fits is still every bar, zeros too
    r, out = run_json(["stats", "--dir", vault, "--since", "1970-01-01"], home)
    assert r.returncode == 0 and len(out["activity"]["series"]) <= MAX_BARS
    assert out["activity"]["series"][0]["start"] == "1969-12-29"  # (the Monday of its week)


def test_stats_of_another_folder_leaves_the_recall_counts_out(home, tmp_path):
    """#44: the recall log counts prompts of every vault; `stats --dir OTHER` showed them as if
    they were that folder's. The vault's own stats keep them."""
    vault = _vault(tmp_path)
    r, out = run_json(["stats", "--dir", vault], home)
    assert r.returncode == 0 and out["recall"] is None
    assert "recall:" not in run(["stats", "--dir", vault], home).stdout
    write_session(home / "memories", "dddd4444-x", "2026-10-28T14:00:00", [("user", "14:00:00", "hi")])
    r, out = run_json(["stats"], home)
    assert out["recall"] is not None and "prompts" in out["recall"]
    r, out = run_json(["stats", "--dir", home / "memories"], home)
    assert out["recall"] is not None
