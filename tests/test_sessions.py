"""`chrollo sessions`: one line per session, newest first, filters shared with search, --json."""
from __future__ import annotations

import json
import os

import pytest

from conftest import run, run_json, write_session

SCHEMA = {"path", "id", "session_id", "started", "title", "project", "cwd", "harness", "turns", "bytes", "repository",
          "peer", "parent"}


def _vault(tmp_path):
    vault = tmp_path / "v"
    write_session(vault, "aaaa1111-x", "2026-10-30T09:00:00", [
        ("user", "09:00:00", "why does the nightly backup fail?"),
        ("agent", "09:00:05", ["the bucket policy denies PutObject"]),
        ("user", "09:01:00", "fix it")], cwd="/home/user/infra", fmt=2)
    write_session(vault, "bbbb2222-x", "2026-10-20T14:00:00", [
        ("user", "14:00:00", "profile the zsh startup")], harness="codex", cwd="/home/user/dotfiles")
    write_session(vault, "cccc3333-x", "2026-09-01T08:00:00", [
        ("user", "08:00:00", "rotate the s3 keys"), ("agent", "08:00:09", ["done"])], cwd="/home/user/infra")
    write_session(vault / "peers" / "desk", "dddd4444-x", "2026-10-25T10:00:00", [
        ("user", "10:00:00", "a question asked on the desktop")], harness="gemini", cwd="/srv/api")
    return vault


def test_newest_first_with_every_column(home, tmp_path):
    vault = _vault(tmp_path)
    r, out = run_json(["sessions", "--dir", vault], home)
    assert r.returncode == 0
    assert [s["id"] for s in out["sessions"]] == ["aaaa1111", "dddd4444", "bbbb2222", "cccc3333"]
    assert all(set(s) == SCHEMA for s in out["sessions"])
    assert set(out) == {"vault", "files", "count", "more", "sessions"}
    first = out["sessions"][0]
    assert first["title"] == "why does the nightly backup fail?"  # format 2's title
    assert (first["project"], first["harness"], first["turns"], first["peer"]) == ("infra", "claude-code", 3, None)
    assert first["started"] == "2026-10-30 09:00:00" and first["session_id"] == "aaaa1111-x"
    assert first["bytes"] == os.path.getsize(first["path"])
    assert out["sessions"][1]["peer"] == "desk"
    assert out["sessions"][2]["title"] == "profile the zsh startup"  # format 1: the first prompt
    assert (out["files"], out["count"], out["more"]) == (4, 4, False)
    plain = run(["sessions", "--dir", vault], home).stdout.splitlines()
    assert len(plain) == 4 and "\x1b" not in "".join(plain)
    assert plain[0].startswith("2026-10-30 09:00  aaaa1111  claude-code") and plain[0].endswith(
        "why does the nightly backup fail?")
    assert "desk" in plain[1] and "local" in plain[0]


def test_filters(home, tmp_path):
    vault = _vault(tmp_path)

    def ids(*args):
        r, out = run_json(["sessions", "--dir", vault, *args], home)
        assert r.returncode == 0, r.stdout
        return [s["id"] for s in out["sessions"]]

    assert ids("--project", "infra") == ["aaaa1111", "cccc3333"]
    assert ids("--project", "/home/user") == ["aaaa1111", "bbbb2222", "cccc3333"]  # a folder and below
    assert ids("--project", "/home/user/dot") == []  # a path is a folder, not a prefix
    assert ids("--harness", "codex") == ["bbbb2222"]
    assert ids("--peer", "desk") == ["dddd4444"]
    assert ids("--no-peers") == ["aaaa1111", "bbbb2222", "cccc3333"]
    assert ids("--since", "2026-10-20") == ["aaaa1111", "dddd4444", "bbbb2222"]
    assert ids("--until", "2026-10-20") == ["bbbb2222", "cccc3333"]  # the whole day
    assert ids("--since", "7d") == ["aaaa1111"]  # the frozen clock: 2026-11-01 12:00 → from 10-25 12:00
    assert ids("--since", "1w") == ids("--since", "7d") and ids("--since", "8d") == ["aaaa1111", "dddd4444"]
    assert ids("--since", "1m", "--until", "2026-10-26T00:00:00+00:00") == ["dddd4444", "bbbb2222"]
    r, out = run_json(["sessions", "--dir", vault, "-n", "2"], home)
    assert [s["id"] for s in out["sessions"]] == ["aaaa1111", "dddd4444"] and out["more"] is True


@pytest.mark.parametrize("args,kind,code", [
    (["--since", "last tuesday"], "bad_date", 2),
    (["--since", "2026-10-30", "--until", "2026-10-01"], "bad_date", 2),
    (["--peer", "desk", "--no-peers"], "bad_usage", 2),
    (["--peer", "nobody"], "peer_not_found", 1),
])
def test_bad_arguments_are_clear_errors(home, tmp_path, args, kind, code):
    vault = _vault(tmp_path)
    r = run(["sessions", "--dir", vault, *args, "--json"], home)
    assert r.returncode == code and json.loads(r.stdout)["error"]["kind"] == kind


def test_no_vault_is_an_error(home, tmp_path):
    r = run(["sessions", "--dir", tmp_path / "nope", "--json"], home)
    assert r.returncode == 1 and json.loads(r.stdout)["error"]["kind"] == "vault_not_found"


def test_first_page_opens_only_the_files_it_shows(home, tmp_path, monkeypatch):
    """Names sort by start time: a page of 5 opens 6 files (one to know there are more) of
    300, and a --since stops at the first older name without opening it."""
    from chrollo import catalog

    vault = tmp_path / "big"
    for i in range(300):
        write_session(vault, f"s{i:07d}-x", f"2025-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}T10:{i % 60:02d}:00",
                      [("user", "10:00:00", f"question {i}")])
    opened = []
    real = catalog._vault.open_regular
    monkeypatch.setattr(catalog._vault, "open_regular", lambda p: opened.append(p) or real(p))
    got = catalog.sessions(str(vault), limit=5)
    assert len(got.rows) == 5 and got.more and got.files == 300 and len(opened) == 6
    assert [r.started for r in got.rows] == sorted((r.started for r in got.rows), reverse=True)
    opened.clear()
    got = catalog.sessions(str(vault), catalog.filters(since="2025-11-20"), limit=0)
    assert len(opened) == len(got.rows) > 0 and all(r.started >= "2025-11-20" for r in got.rows)


def test_a_hostile_title_is_shown_inert(home, tmp_path):
    vault = tmp_path / "v"
    write_session(vault, "ffff6666-x", "2026-10-01T10:00:00", [("user", "10:00:00", "hi \x1b]0;pwned\x07 there")])
    out = run(["sessions", "--dir", vault], home).stdout
    assert "\x1b" not in out and "\x07" not in out and "␛" in out

