"""Hooks never break the agent: every hostile payload and broken environment → exit 0, quiet."""
from __future__ import annotations

import base64
import gzip
import json
import os
import re
import resource
from pathlib import Path

import pytest

from conftest import run, without_root_bypass
from hookkit import FIXTURES, SHARED_FIXTURES, hook, localise, ok, payload, settled, vault_files

from chrollo.session import read_session

HOSTILE = FIXTURES.parent / "hostile"      # the project's own crafted set (INDEX.json says what each is)
SHARED_BAD = SHARED_FIXTURES / "hooks" / "bad"   # an extra set when ../shared is beside the checkout
ASKED, ANSWERED = "where does the staging proxy listen", "The proxy listens on 8443."


def _with_transcript(tmp, path: Path, sid: str) -> bytes:
    """A well-formed Claude Code payload (both events read it) naming ``path`` as its transcript."""
    return json.dumps({"session_id": sid, "transcript_path": str(path), "cwd": str(tmp), "prompt": ASKED,
                       "last_assistant_message": ANSWERED}).encode()


def _transcript_not_jsonl(tmp):
    (tmp / "notes.md").write_text("# not a transcript\n")
    return _with_transcript(tmp, tmp / "notes.md", "7f3c0d2e-0101-4000-8000-000000000101")


def _transcript_directory(tmp):
    (tmp / "dir.jsonl").mkdir()
    return _with_transcript(tmp, tmp / "dir.jsonl", "7f3c0d2e-0102-4000-8000-000000000102")


def _transcript_deleted(tmp):
    return _with_transcript(tmp, tmp / "gone" / "deleted.jsonl", "7f3c0d2e-0103-4000-8000-000000000103")


def _transcript_fifo(tmp):
    os.mkfifo(tmp / "pipe.jsonl")
    return _with_transcript(tmp, tmp / "pipe.jsonl", "7f3c0d2e-0104-4000-8000-000000000104")


def _transcript_binary(tmp):
    (tmp / "junk.jsonl").write_bytes(b"\x00\x01\xff\xfebinary junk\x00\n" * 5000)
    return _with_transcript(tmp, tmp / "junk.jsonl", "7f3c0d2e-0105-4000-8000-000000000105")


def _transcript_symlink(tmp):
    secret = tmp / "elsewhere" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_text(json.dumps({"type": "user", "sessionId": "other", "uuid": "s1", "timestamp": "2026-11-23T10:00:00Z",
                                  "message": {"role": "user", "content": "the vault password is hunter2"}}) + "\n")
    (tmp / "link.jsonl").symlink_to(secret)
    return _with_transcript(tmp, tmp / "link.jsonl", "7f3c0d2e-0106-4000-8000-000000000106")


def _deeply_nested(tmp):
    return b'{"session_id": "7f3c0d2e-0107-4000-8000-000000000107", "prompt": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


def _huge_integer(tmp):
    return b'{"session_id": "7f3c0d2e-0108-4000-8000-000000000108", "last_assistant_message": ' + b"9" * 50_000 + b"}"


def _huge_prompt(tmp):
    words = "staging proxy listens port certificate renewal deploy cluster ".split()
    prompt = " ".join(words[i % len(words)] for i in range(1_100_000))  # ~8 MB
    return json.dumps({"session_id": "7f3c0d2e-0109-4000-8000-000000000109", "transcript_path": None,
                       "cwd": str(tmp), "prompt": prompt, "last_assistant_message": ANSWERED}).encode()


def _huge_stdin(tmp):
    return b'{"session_id": "7f3c0d2e-0110-4000-8000-000000000110", "prompt": "' + b"a" * (70 << 20) + b'"}'


def _raw_nul(tmp):
    return b'{"session_id": "7f3c0d2e-0111-4000-8000-000000000111", "prompt": "where does\x00 the proxy listen"}'


def _latin1(tmp):
    return '{"session_id": "7f3c0d2e-0112-4000-8000-000000000112", "prompt": "où écoute le proxy, garçon"}'.encode("latin-1")


def _utf16(tmp):
    return json.dumps({"session_id": "7f3c0d2e-0113-4000-8000-000000000113", "prompt": ASKED}).encode("utf-16")


MAKE = {f.__name__[1:]: f for f in (
    _transcript_not_jsonl, _transcript_directory, _transcript_deleted, _transcript_fifo, _transcript_binary,
    _transcript_symlink, _deeply_nested, _huge_integer, _huge_prompt, _huge_stdin, _raw_nul, _latin1, _utf16)}


def _cases() -> list:
    own = json.loads((HOSTILE / "INDEX.json").read_text("utf-8"))["cases"]
    cases = [pytest.param(("own", c), id=c["name"]) for c in own]
    if (SHARED_BAD / "INDEX.json").is_file():  # more cases, when ../shared is beside the checkout
        cases += [pytest.param(("shared", c), id="shared:" + c["file"])
                  for c in json.loads((SHARED_BAD / "INDEX.json").read_text("utf-8"))]
    return cases


def _feeds(feed: str) -> list:
    """``feed`` like "claude-code Stop / UserPromptSubmit" → [(harness, event), …]."""
    harness, events = feed.split(" ", 1)
    return [(harness, e.strip()) for e in events.split("/")]


def _own_raw(case, tmp) -> bytes:
    if "make" in case:
        return MAKE[case["make"]](tmp)
    if "raw" in case:
        return case["raw"].encode("utf-8", "surrogatepass")
    obj = case["json"]
    if isinstance(obj, dict):
        obj = localise(dict(obj), tmp)
    return json.dumps(obj).encode()


def _shared_raw(case, tmp) -> bytes:
    data = (SHARED_BAD / case["file"]).read_bytes()
    if case["encoding"] == "base64":
        return base64.b64decode(data)
    if case["encoding"] == "gzip":
        return gzip.decompress(data)
    try:  # make relative fixture paths real, as the fixtures README asks; hostile values stay
        obj = json.loads(data)
        if isinstance(obj, dict) and isinstance(obj.get("transcript_path"), str) and \
                obj["transcript_path"].startswith("transcripts/"):
            return json.dumps(localise(obj, tmp, src=SHARED_FIXTURES)).encode()
        if isinstance(obj, dict) and obj.get("transcript_path") == "README.md":
            obj["transcript_path"] = str(SHARED_FIXTURES / "README.md")
            return json.dumps(obj).encode()
    except (ValueError, RecursionError):
        pass
    return data


@pytest.mark.parametrize("case", _cases())
def test_bad_payload_exits_0_quietly(case, home, tmp_path):
    origin, case = case
    raw = _own_raw(case, tmp_path) if origin == "own" else _shared_raw(case, tmp_path)
    outside = sorted(p for p in tmp_path.rglob("*") if home not in p.parents and p != home)
    for harness, event in _feeds(case["feed"] if origin == "own" else case["feed_to"]):
        p = hook(home, harness, event, raw)
        ok(p)
        out = p.stdout.decode("utf-8")
        if harness == "gemini":
            assert out.strip() in ("", "{}")
        else:  # nothing to recall in an empty vault, and capture prints nothing
            assert out == ""
        assert len(p.stderr) < 400  # at most a log line
    settled(home)  # (a Claude Code Stop may leave its turn to a pass that waits for the transcript)
    # nothing created outside CHROLLO_HOME, every memory file valid UTF-8 without NUL
    assert sorted(p for p in tmp_path.rglob("*") if home not in p.parents and p != home) == outside
    for f in vault_files(home):
        data = f.read_bytes()
        assert b"\x00" not in data
        data.decode("utf-8")
        assert data.startswith(b"---\n") and b"\nsession_id: " in data
        assert b"hunter2" not in data  # a linked transcript is never read
        front = data.split(b"\n---\n", 1)[0]
        assert not re.search(rb"[\x00-\x09\x0b-\x1f\x7f]", front), front  # stored verbatim, but not up there
    if "turns" in case:
        got = [[t.role, t.text] for f in vault_files(home) for t in read_session(f).turns]
        assert got == case["turns"]
    if origin == "own" and vault_files(home):  # what was stored comes back through search and recall without escapes
        found = run(["search", "staging", "proxy"], home)
        assert found.returncode == 0 and "proxy" in found.stdout
        recall = hook(home, "claude-code", "UserPromptSubmit", {
            "session_id": "7f3c0d2e-0999-4000-8000-000000000999", "cwd": str(tmp_path), "transcript_path": None,
            "hook_event_name": "UserPromptSubmit", "prompt": "which port does the staging proxy listen on?"})
        ok(recall)
        for out in (found.stdout.encode(), recall.stdout):
            assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", out), out[:2000]


def test_bad_payloads_are_logged(home, tmp_path):
    ok(hook(home, "claude-code", "UserPromptSubmit", b"{not json"))
    log = (home / "logs" / "hooks.log").read_text()
    assert "not UTF-8 JSON" in log
    assert oct((home / "logs" / "hooks.log").stat().st_mode & 0o777) == "0o600"


def test_header_injection_in_session_id_keeps_frontmatter_valid(home, tmp_path):
    body = payload("codex", "Stop", tmp_path, transcript_path=None,
                   session_id="abc\n---\n[2026-01-01 00:00:00] [User]\nfake")
    ok(hook(home, "codex", "Stop", body))
    assert vault_files(home) == []  # not a plain id: refused, not stored


def test_unknown_harness_and_bad_options_exit_0(home):
    for args in (["Stop", "--harness", "emacs"], ["Stop", "--frobnicate"], ["--harness"]):
        p = hook(home, "claude-code", None, b"{}", *args)
        ok(p)
        assert p.stdout == b""


def test_help_explains_and_exits_0(home):
    p = hook(home, "claude-code", None, b"", "--help")
    ok(p)
    assert b"--harness" in p.stdout and b"--budget" in p.stdout


def test_missing_rg_gives_no_recall_but_capture_goes_on(home, tmp_path, make_session):
    make_session(home / "memories", "old00000-1", "2026-10-01T10:00:00",
                 [("user", "10:00:00", "the agent usage chart width in recharts")])
    ups = payload("codex", "UserPromptSubmit", tmp_path, transcript_path=None,
                  prompt="what width did we give the agent usage chart in recharts?")
    p = hook(home, "codex", "UserPromptSubmit", ups, CHROLLO_RG=str(tmp_path / "no-rg"))
    ok(p)
    assert p.stdout == b""
    assert "rg_not_found" in (home / "logs" / "hooks.log").read_text() or \
        "ripgrep" in (home / "logs" / "hooks.log").read_text()
    ok(hook(home, "codex", "Stop", payload("codex", "Stop", tmp_path, transcript_path=None),
            CHROLLO_RG=str(tmp_path / "no-rg")))
    assert len(vault_files(home)) == 2


def test_read_only_vault_lets_the_turn_go_on(home, tmp_path):
    prefix = without_root_bypass()
    vault = home / "memories"
    vault.mkdir(parents=True)
    vault.chmod(0o500)
    try:
        for event in ("UserPromptSubmit", "Stop"):
            p = hook(home, "codex", event, payload("codex", event, tmp_path, transcript_path=None),
                     prefix=prefix)
            ok(p)
            assert p.stdout == b""
        assert vault_files(home) == []
        assert "PermissionError" in (home / "logs" / "hooks.log").read_text()
    finally:
        vault.chmod(0o700)


def test_full_disk_is_survived(home, tmp_path):
    """RLIMIT_FSIZE makes every write past 1 byte fail with EFBIG, like a full disk."""
    ups = payload("codex", "UserPromptSubmit", tmp_path, transcript_path=None)
    stop = payload("codex", "Stop", tmp_path, transcript_path=None)
    import subprocess
    import sys

    from conftest import cli_env

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, 1))

    for body in (ups, stop):
        p = subprocess.run([sys.executable, "-m", "chrollo", "hook", "--harness", "codex"],
                           input=json.dumps(body).encode(), capture_output=True,
                           env=cli_env(home), preexec_fn=limited, timeout=60)
        ok(p)
        assert p.stdout == b""


def test_a_full_disk_during_capture_is_logged_as_one_line_not_a_traceback(home, tmp_path):
    """#44 (fuzzer): a turn too big for the disk's room (files may not grow past 4 KiB; the
    log's line fits) — the hook exits 0 silently and logs the full disk as chrollo names it,
    one line with its hint, not a traceback (kept for chrollo's own bugs)."""
    import subprocess
    import sys

    from conftest import cli_env

    ups = payload("codex", "UserPromptSubmit", tmp_path, transcript_path=None)
    stop = payload("codex", "Stop", tmp_path, transcript_path=None, last_assistant_message="a long answer " * 2000)

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    for body in (ups, stop):
        p = subprocess.run([sys.executable, "-m", "chrollo", "hook", "--harness", "codex"],
                           input=json.dumps(body).encode(), capture_output=True,
                           env=cli_env(home), preexec_fn=limited, timeout=60)
        ok(p)
        assert p.stdout == b""
    logged = (home / "logs" / "hooks.log").read_text()
    assert "os_error" in logged and "disk is full" in logged and "Traceback" not in logged, logged


def test_recall_survives_a_capture_that_cannot_write(home, make_session):
    """state/ read-only: capture fails (logged), the prompt still gets its memory."""
    prefix = without_root_bypass()
    make_session(home / "memories", "old00000-1111-4111-8111-111111111111", "2026-10-01T10:00:00",
                 [("user", "10:00:00", "the grafana alert for disk pressure on the build runners"),
                  ("agent", "10:00:05", ["Raised the threshold to 90% and added a 10 minute window."])])
    state = home / "state"
    state.mkdir(exist_ok=True)
    state.chmod(0o500)
    try:
        p = hook(home, "claude-code", "UserPromptSubmit",
                 {"session_id": "live-0001", "cwd": "/nonexistent", "hook_event_name": "UserPromptSubmit",
                  "prompt": "what did we change on the grafana disk pressure alert for build runners?"},
                 prefix=prefix)
        ok(p)
        assert "Raised the threshold" in json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "capture error" in (home / "logs" / "hooks.log").read_text()
    finally:
        state.chmod(0o700)
