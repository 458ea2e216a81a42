"""Bad input gets a clear error or works, in bounded time and memory (issue 15): a 100 KB
query, out-of-range dates, a FIFO named *.md in the vault, a 1 GiB Gemini JSON chat, a
10 GB sparse transcript."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, cli_env, run, run_json, write_session
from hookkit import hook, ok

from chrollo import rg
from chrollo.capture import Capture
from chrollo.harness import claude_code


def words(n: int) -> list:
    import random
    import string

    rnd = random.Random(7)
    return ["".join(rnd.choice(string.ascii_lowercase) for _ in range(rnd.randint(5, 9))) for _ in range(n)]


@pytest.fixture
def vault(home):
    v = home / "memories"
    write_session(v, "aaaa0000-x", "2026-10-01T10:00:00", [
        ("user", "10:00:00", "the webhook relay drops events under load"),
        ("agent", "10:00:05", ["Raised the relay queue size."])])
    return v


def test_a_huge_pattern_goes_to_rg_through_a_pattern_file(vault):
    many = words(20_000) + ["webhook"]  # a regex of ~150 KB: over Linux's 128 KiB per argument
    found = list(rg.scan(many, [str(vault)]))
    assert len(found) == 1 and b"webhook" in found[0][1].lower()


def test_a_100kb_query_works(home, vault):
    query = "webhook relay " + " ".join(words(15_000))
    assert len(query) > 100_000
    p, out = run_json(["search", query, "--dir", vault], home)
    assert p.returncode == 0, p.stderr
    assert out["hits"] and "webhook" in out["hits"][0]["terms"]
    assert len(out["terms"]) == 100 and "only the first 100" in out["warnings"][0]
    assert "only the first 100" in p.stderr


def test_a_100kb_query_through_mcp_is_not_a_crash(home, vault):
    pytest.importorskip("mcp")
    import asyncio

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def go():
        params = StdioServerParameters(command=sys.executable, args=["-m", "chrollo", "mcp", "--dir", str(vault)],
                                       env=cli_env(home), cwd=str(ROOT))
        async with Client(params) as client:
            return [await client.call_tool("read_memory", {"query": "webhook relay " + " ".join(words(15_000))}),
                    await client.call_tool("read_memory", {"query": "webhook relay"})]
    huge, after = asyncio.run(go())
    # a tool error the model can act on (#19), and the server still answers
    assert huge.is_error and "use a few distinctive words" in huge.content[0].text
    assert not after.is_error and "relay queue size" in after.content[0].text


@pytest.mark.parametrize("date", ["0001-01-01", "1969-12-31", "2026-02-30", "99999-01-01", "last tuesday", "99999d"])
def test_out_of_range_dates_are_usage_errors(home, vault, date):
    for args in (["search", "webhook", "--dir", vault], ["import", "jsonl", "--source", vault, "--dry-run"]):
        p = run([*args, "--since", date, "--json"], home)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert json.loads(p.stdout)["error"]["kind"] == "bad_date"
        assert "Traceback" not in p.stderr
    p = run(["search", "webhook", "--dir", vault, "--since", date], home)
    assert p.returncode == 2 and "--since" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("args", [
    ["sessions", "--until", "9999-12-31T23:59:59-14:00"], ["search", "webhook", "--until", "9999-12-31T23:59:59-14:00"],
    ["search", "webhook", "--since", "9999-12-31T23:59:59-14:00"], ["stats", "--per", "day", "--until", "9999-12-31"],
    ["stats", "--until", "9999-12-31T23:59:59-14:00"], ["stats", "--per", "week", "--until", "9999-12-31"],
    ["stats", "--since", "9999-12-31", "--until", "9999-12-31T23:59:59-14:00"],
    ["stats", "--since", "2026-01-01", "--until", "9999-12-31", "--per", "day"],
    ["forget", "--until", "9999-12-31T23:59:59-14:00", "--dry-run"]])
def test_dates_up_to_9999_work_or_are_usage_errors(home, vault, args):
    """The last day there is, in any offset: the command works (an --until past the last
    representable instant is that instant) or refuses it as a usage error (a series of more
    days than any vault holds) — never an OverflowError."""
    p = run([*args, "--dir", vault, "--json"], home)
    assert "Traceback" not in p.stderr and "Overflow" not in p.stdout, (args, p.stdout, p.stderr)
    if p.returncode:
        assert p.returncode == 2 and json.loads(p.stdout)["error"]["kind"] in ("bad_date", "too_many_bars"), (args, p.stdout)
    else:
        out = json.loads(p.stdout)
        assert "error" not in out
        if args[0] in ("sessions", "search") and "--until" in args:
            assert out["count" if args[0] == "sessions" else "total_matches"]  # (everything is before it)


def _cli(home, *args, timeout=30):
    try:
        return subprocess.run([sys.executable, "-m", "chrollo", *map(str, args)], capture_output=True,
                              text=True, env=cli_env(home), cwd=str(home.parent), timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"chrollo {' '.join(map(str, args))} hung")


def test_a_fifo_named_md_is_skipped_never_opened(home, vault):
    fifo = vault / "2026-10-02_100000_fifo0000.md"
    os.mkfifo(fifo)
    p = _cli(home, "stats", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    # (a FIFO is no file of the vault's: the one walk, like rg's, lists regular files only)
    assert out["sessions"] == 1 and not any(fifo.name in u for u in out["unreadable"]), out
    p = _cli(home, "stats")
    assert p.returncode == 0 and "sessions  1" in p.stdout
    assert "Traceback" not in p.stderr and fifo.name not in p.stderr
    p = _cli(home, "search", "webhook", "relay", "--json")
    hits = json.loads(p.stdout)["hits"]
    assert p.returncode == 0 and hits and all("aaaa0000" in h["path"] for h in hits)
    p = _cli(home, "read", fifo.name, "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["kind"] == "not_a_file"
    # a hook whose session's file name is taken by a FIFO: captured beside it, no hang
    ok(hook(home, "claude-code", "Stop", {
        "session_id": "fifo0000-x", "transcript_path": None, "cwd": "/nonexistent",
        "hook_event_name": "Stop", "last_assistant_message": "An answer worth keeping."}, timeout=30))
    assert any("An answer worth keeping." in f.read_text() for f in vault.glob("*fifo0000*.md") if f.is_file())


def test_a_1gib_gemini_json_chat_is_refused_with_bounded_memory(home, tmp_path):
    chat = tmp_path / "chats" / "session-2026-10-01T10-00-big.json"
    chat.parent.mkdir()
    with open(chat, "wb") as fh:  # sparse: costs no disk
        fh.write(b'{"sessionId": "gem00000-x", "messages": [')
        fh.truncate(1 << 30)
    payload = {"session_id": "gem00000-x", "transcript_path": str(chat), "cwd": "/nonexistent",
               "hook_event_name": "AfterAgent", "prompt": "summarise the relay incident please",
               "prompt_response": "The relay dropped events; the queue is bigger now."}
    probe = ("import resource, sys\nfrom chrollo.hook import main\nmain(['AfterAgent', '--harness', 'gemini'])\n"
             "sys.stderr.write('maxrss=%d' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    p = subprocess.run([sys.executable, "-c", probe], input=json.dumps(payload).encode(), capture_output=True,
                       env=cli_env(home), cwd=str(home.parent), timeout=120)
    assert p.returncode == 0 and p.stdout == b"", p.stderr
    maxrss_mb = int(p.stderr.decode().rsplit("maxrss=", 1)[1]) / 1024
    assert maxrss_mb < 300, f"peak memory {maxrss_mb:.0f} MiB for a 1 GiB chat"
    assert "MiB JSON chat is over the 64 MiB" in (home / "logs" / "hooks.log").read_text()
    files = list((home / "memories").glob("*.md"))
    assert len(files) == 1 and "the queue is bigger now" in files[0].read_text()  # the payload still counts


def _bytes_read() -> int:
    with open("/proc/self/io") as fh:
        return int(next(ln for ln in fh if ln.startswith("rchar:")).split()[1])


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs /proc/self/io to count bytes read")
def test_a_10gb_sparse_transcript_is_not_reread_on_every_capture(home, tmp_path):
    path = tmp_path / "big.jsonl"
    rec = lambda **kw: (json.dumps(kw) + "\n").encode()  # noqa: E731
    with open(path, "wb") as fh:
        fh.write(rec(type="user", uuid="u1", sessionId="big00000-x", timestamp="2026-10-01T10:00:00Z",
                     message={"role": "user", "content": "why does the relay drop events"}))
        fh.write(rec(type="assistant", uuid="a1", sessionId="big00000-x", timestamp="2026-10-01T10:00:05Z",
                     message={"role": "assistant", "content": [{"type": "text", "text": "The queue is full."}]}))
        fh.truncate(10 << 30)  # a 10 GB hole: one endless "line" with no newline
    reads = []
    for _ in range(2):
        with Capture("big00000-x", "claude-code", "/nonexistent") as cap:
            before = _bytes_read()
            units = cap.read_transcript(claude_code, str(path))
            reads.append(_bytes_read() - before)
            cap.run(units)
    assert max(reads) < 256 << 20, [r >> 20 for r in reads]
    text = next((home / "memories").glob("*.md")).read_text()
    assert text.count("The queue is full.") == 1
    # data after the hole is still read, once
    with open(path, "ab") as fh:
        fh.write(b"\n" + rec(type="assistant", uuid="a2", sessionId="big00000-x", timestamp="2026-10-01T10:00:09Z",
                             message={"role": "assistant", "content": [{"type": "text", "text": "Doubled it."}]}))
    for _ in range(2):
        with Capture("big00000-x", "claude-code", "/nonexistent") as cap:
            before = _bytes_read()
            units = cap.read_transcript(claude_code, str(path))
            assert _bytes_read() - before < 256 << 20
            cap.run(units)
    text = next((home / "memories").glob("*.md")).read_text()
    assert text.count("Doubled it.") == 1 and text.count("The queue is full.") == 1


FIFO_PROBE = r"""
import os, sys
from chrollo import harness
names = ("settings.json", "config.json", "opencode.json", "opencode.jsonc", "mcp.json",
         os.path.join("plugins", "installed_plugins.json"))
planted = 0
for name in harness.names():
    mod = harness.adapter(name)
    for folder in {f() for f in (getattr(mod, "home_dir", None), getattr(mod, "config_dir", None)) if f}:
        for n in names:
            p = os.path.join(folder, n)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            if not os.path.lexists(p):
                os.mkfifo(p)
                planted += 1
found = {name: harness.adapter(name).package() for name in harness.names() if hasattr(harness.adapter(name), "package")}
print(planted, sorted(found), all(v is None for v in found.values()))
"""


def test_a_fifo_for_a_harness_s_settings_never_hangs_the_package_finders(home, tmp_path):
    """Every harness's ``package()`` (doctor, install and uninstall ask it) reads the harness's
    own settings; a FIFO named like one is no settings file — read as none, never waited on."""
    fake = tmp_path / "fakehome"
    fake.mkdir()
    env = {k: v for k, v in cli_env(home).items() if not k.endswith(("_HOME", "_DIR", "_CONFIG_DIR"))}
    env.update(HOME=str(fake), XDG_CONFIG_HOME=str(fake / ".config"), XDG_DATA_HOME=str(fake / ".local/share"),
               CHROLLO_HOME=str(home))
    p = subprocess.run([sys.executable, "-c", FIFO_PROBE], capture_output=True, text=True, env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    planted, *_rest = p.stdout.split(" ", 1)
    assert int(planted) >= 10 and p.stdout.rstrip().endswith("True"), p.stdout


def test_a_fifo_named_like_a_harness_database_is_refused_not_waited_on(tmp_path):
    """The SQLite readers (Crush, Goose, Cursor) open through one door; SQLite itself opens
    blocking, so the door refuses what is not a regular file."""
    fifo = tmp_path / "crush.db"
    os.mkfifo(fifo)
    probe = ("from chrollo.harness.common import sqlite_readonly\n"
             "try:\n    sqlite_readonly(%r, {'sessions'}, 'missing')\n"
             "except ValueError as e:\n    print(e)\n") % str(fifo)
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.stdout.strip() == "not a regular file", p.stderr


def test_a_state_cache_of_tens_of_mb_is_read_whole(tmp_path):
    """read_json refuses FIFOs and devices, not size: stats' and the mesh's caches hold a row
    per session (tens of MB at 250,000 sessions) and must not silently start over."""
    from chrollo.homedir import read_json

    big = tmp_path / "cache.json"
    big.write_text(json.dumps({"rows": ["x" * 100] * 200_000, "end": 1}))
    assert big.stat().st_size > 16 << 20
    assert read_json(str(big))["end"] == 1
