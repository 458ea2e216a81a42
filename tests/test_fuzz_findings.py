"""What the fuzzer (tests/test_fuzz.py) found, each pinned by the input that showed it."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT, cli_env


def _chrollo(home, *args, stdin: bytes = b""):
    argv = [sys.executable, "-m", "chrollo", *[os.fsencode(a) for a in args]]
    return subprocess.run(argv, input=stdin, capture_output=True, env=cli_env(home), cwd=home.parent, timeout=60)


def test_mcp_server_survives_a_lone_surrogate_in_a_request(tmp_path):
    """`"\\udc80"` is valid JSON; the reply that quotes it could not be encoded as UTF-8 and the
    server died (exit 1, traceback) — every later request of the session lost."""
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope\udc80", "arguments": {}}},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "read_memory_file", "arguments": {"path": "x\udc80.md"}}},
             {"jsonrpc": "2.0", "id": 3, "method": "ping"}]
    p = _chrollo(tmp_path / "home", "mcp", stdin=b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    replies = [json.loads(x) for x in p.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3] and "nope" in replies[0]["error"]["message"]


def test_install_config_path_with_undecodable_bytes(tmp_path):
    """A --config path from argv with bytes that are not UTF-8 (a lone surrogate in Python)
    raised UnicodeEncodeError naming the state record."""
    home = tmp_path / "home"
    cfg = os.fsdecode(os.fsencode(str(tmp_path)) + b"/conf\xff.json")
    p = _chrollo(home, "install", "claude-code", "--config", cfg, "--json")
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    assert os.path.exists(os.fsencode(cfg))
    p = _chrollo(home, "uninstall", "claude-code", "--config", cfg, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["changes"][0]["action"] == "removed", p.stdout


def test_install_config_that_is_a_fifo_is_refused_not_waited_on(tmp_path):
    """`install … --config FIFO` opened the FIFO for reading and blocked for ever."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for cmd in ("install", "uninstall"):
        p = _chrollo(tmp_path / "home", cmd, "claude-code", "--config", str(fifo), "--json")
        assert p.returncode == 1 and json.loads(p.stdout)["error"]["kind"] == "bad_config", p.stdout


def test_paths_with_undecodable_bytes_are_kept_as_given(tmp_path):
    """`exclude add` and `install --vault` with a path holding bytes that are not UTF-8 raised
    UnicodeEncodeError writing chrollo's settings; they are kept, byte for byte."""
    home = tmp_path / "home"
    odd = os.fsdecode(os.fsencode(str(tmp_path)) + b"/client\xff")
    p = _chrollo(home, "exclude", "add", odd, "--json")
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    p = _chrollo(home, "exclude", "list", "--json")
    assert json.loads(p.stdout)["exclude"] == [odd]
    p = _chrollo(home, "install", "pi", "--vault", odd, "--json")
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
    assert os.path.isdir(os.fsencode(odd))


def test_forget_with_an_empty_date_is_a_usage_error(tmp_path):
    """`forget --since ''` raised AttributeError ('NoneType' object has no attribute 'date')."""
    (tmp_path / "home" / "memories").mkdir(parents=True)
    for opt in ("--since", "--until"):
        p = _chrollo(tmp_path / "home", "forget", "aaaaaaaa", opt, "", "--json")
        assert p.returncode == 2 and json.loads(p.stdout)["error"]["kind"] == "bad_date", p.stdout + p.stderr


def test_a_clock_at_the_ends_of_the_calendar_is_a_usage_error(tmp_path):
    """CHROLLO_NOW=0001-01-01 (naive: local time) or 9999-12-31T23:59:59+14:00 overflowed in the
    clock's astimezone(): a traceback from search and demo, -32603 from read_memory."""
    home = tmp_path / "home"
    (home / "memories").mkdir(parents=True)
    env = {k: v for k, v in cli_env(home).items()}
    for now in ("0001-01-01", "0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59+14:00", "9999-12-31"):
        env["CHROLLO_NOW"] = now
        p = subprocess.run([sys.executable, "-m", "chrollo", "search", "x", "--json"], capture_output=True,
                           env=env, cwd=tmp_path, timeout=60)
        assert p.returncode == 2 and json.loads(p.stdout)["error"]["kind"] == "bad_clock", (now, p.stdout, p.stderr)


def test_import_with_an_empty_since_is_a_usage_error(tmp_path):
    """`import … --since ''` raised AttributeError ('NoneType' object has no attribute 'timestamp')."""
    src = tmp_path / "t.jsonl"
    src.write_text('{"role": "user", "content": "hi", "session_id": "s-1"}\n')
    p = _chrollo(tmp_path / "home", "import", "jsonl", "--source", str(src), "--since", "", "--json")
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["kind"] == "bad_date", p.stdout + p.stderr


def test_unwritable_config_and_vault_paths_are_clear_errors(tmp_path):
    """Long run: `install … --config /proc/x` (FileNotFoundError for its temp file) and
    `config vault <a 300-character name>` (OSError: File name too long) were tracebacks."""
    home = tmp_path / "home"
    p = _chrollo(home, "install", "claude-code", "--config", "/proc/x", "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["error"]["kind"] == "bad_config", p.stdout + p.stderr
    p = _chrollo(home, "config", "vault", str(tmp_path / ("y" * 300)), "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["error"]["kind"] == "bad_vault", p.stdout + p.stderr
    p = _chrollo(home, "config", "vault", "--json")
    assert json.loads(p.stdout)["source"] == "default"  # the failed setting was not kept


# ---- the lead's long run at the end of the #33 stop (bench/fuzz.py --scale 25 --seed 7)

def test_a_dir_naming_an_unknown_user_is_a_path_not_a_crash(tmp_path):
    """`--dir '~nosuchuser'`: Path.expanduser raised RuntimeError ("Could not determine home
    directory"); os.path.expanduser leaves it as written, and it is then simply not found."""
    for args in (["read", "x.md", "--dir", "~\udc80"], ["search", "x", "--dir", "~nosuchuserzz", "--json"]):
        p = _chrollo(tmp_path / "home", *args)
        assert p.returncode == 1 and b"Traceback" not in p.stderr, p.stderr


def test_a_folder_whose_listing_fails_midway_is_skipped(tmp_path, monkeypatch):
    """`stats --dir /`: a /proc/<pid> folder whose process ended mid-walk fails while being
    listed (EINVAL); the index's walk skipped only folders it could not open, and the OSError
    escaped. (The race cannot be made on demand: the failing listing is simulated.)"""
    from chrollo import vaultfiles

    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.md").write_text("x")
    (tmp_path / "gone").mkdir()
    real = os.scandir

    class Failing:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def __iter__(self):
            return self

        def __next__(self):
            raise OSError(22, "Invalid argument")

        def close(self):
            pass

    monkeypatch.setattr(vaultfiles.os, "scandir", lambda d: Failing() if d.endswith(b"gone") else real(d))
    assert [p for p, _e in vaultfiles.walk(str(tmp_path))] == [os.fsencode(str(tmp_path / "ok" / "a.md"))]


def test_paths_the_system_refuses_are_clear_errors(tmp_path):
    """A 300-character file name (ENAMETOOLONG) and --config naming the folder --vault makes
    (EISDIR) were tracebacks; they are `os_error` (exit 1), and MCP answers a tool error."""
    home, long = tmp_path / "home", "x" * 300
    p = _chrollo(home, "import", "claude-code", "--source", long, "--json")
    assert p.returncode == 1 and json.loads(p.stdout)["error"]["kind"] == "os_error", p.stdout
    same = str(tmp_path / "same")
    p = _chrollo(home, "install", "claude-code", "--config", same, "--vault", same, "--json")
    assert p.returncode == 1 and b"Traceback" not in p.stderr and "error" in json.loads(p.stdout), p.stdout
    req = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_memory_file", "arguments": {"path": long}}}
    p = _chrollo(home, "mcp", stdin=json.dumps(req).encode() + b"\n")
    reply = json.loads(p.stdout.splitlines()[0])
    assert "error" not in reply and reply["result"]["isError"], reply


def test_an_ordinal_date_is_a_clock_too(tmp_path):
    """CHROLLO_NOW=2026-330 (ISO 8601 ordinal: 26 November) was refused as bad_clock, so the
    recall hook logged an error; Python 3.11's fromisoformat reads every other ISO form."""
    from chrollo import clock

    env = dict(os.environ, CHROLLO_NOW="2026-330")
    got = subprocess.run([sys.executable, "-c", "from chrollo import clock; print(clock.now().date())"],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    assert got.stdout.strip() == "2026-11-26", got.stderr
    assert clock._calendar("2025-366") == "2025-366"  # no day 366 in a common year: still refused


def test_mcp_replies_never_hold_a_unicode_line_break(tmp_path):
    """An id of "\\u0085" came back raw: U+0085, U+2028 and U+2029 end a line for readers that
    split on every line break (Python's splitlines), so one reply read as two broken ones."""
    lines = [{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "read_memory", "arguments": {}}}
             for i in ("\u0085", "\u2028", "a\u2029b")]
    p = _chrollo(tmp_path / "home", "mcp", stdin=b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    assert p.returncode == 0, p.stderr
    replies = [json.loads(x) for x in p.stdout.decode("utf-8").splitlines()]
    assert [r["id"] for r in replies] == ["\u0085", "\u2028", "a\u2029b"]


def test_a_hook_with_a_bad_clock_logs_one_clear_line(tmp_path):
    """CHROLLO_NOW='2026-11' in a hook: recall's UsageError was logged with a traceback, as if
    chrollo had a bug; a setting the user got wrong is one line saying what is wrong."""
    home = tmp_path / "home"
    body = json.dumps({"session_id": "5f1c2a9e-0000-4000-8000-00000000aaaa", "cwd": str(tmp_path),
                       "hook_event_name": "UserPromptSubmit", "prompt": "what did we decide about the cache?"})
    p = subprocess.run([sys.executable, "-m", "chrollo", "hook", "UserPromptSubmit", "--harness", "claude-code"],
                       input=body.encode(), capture_output=True, env=cli_env(home, CHROLLO_NOW="2026-11"),
                       cwd=tmp_path, timeout=60)
    assert p.returncode == 0 and p.stdout == b"", p
    logged = (home / "logs" / "hooks.log").read_text("utf-8")
    assert "CHROLLO_NOW is not an ISO date/time" in logged and "Traceback" not in logged, logged
