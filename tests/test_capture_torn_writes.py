"""Torn writes (issue 18, item 11): a full disk or a kill during capture never leaves a torn
turn, a duplicate or a hidden temp file in the vault; the next write repairs what a crash left.

Real `chrollo hook` processes: a file size limit (RLIMIT_FSIZE) stands in for a full disk; with
SIGXFSZ at its default action the kernel kills the process in the middle of the write, the
way kill -9 would; and a loop of real kill -9s at random moments."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

from conftest import cli_env
from hookkit import hook, ok, vault_files

from chrollo.session import read_session

SID = "019f0000-torn-4000-8000-000000000001"
ALPHA = "alpha " * 9000          # ~54 KB answers: a write the size limit can cut in the middle
BRAVO = "bravo " * 9000


def _limited(limit: int, die: bool) -> list:
    """A prefix that runs `python -m chrollo …` with RLIMIT_FSIZE=limit; ``die``: SIGXFSZ kills
    it at the write that crosses the limit (else the write fails with EFBIG, like ENOSPC)."""
    code = ("import resource, runpy, signal, sys; "
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
            + ("signal.signal(signal.SIGXFSZ, signal.SIG_DFL); " if die else "")
            + "sys.argv = ['chrollo'] + sys.argv[1:]; runpy.run_module('chrollo', run_name='__main__')")
    return [sys.executable, "-c", code]


def _turn(home, cwd, prompt: str, answer: str):
    _prompt(home, cwd, prompt)
    return _stop(home, cwd, answer)


def _stop(home, cwd, answer: str, prefix=()):
    body = {"session_id": SID, "transcript_path": None, "cwd": str(cwd), "hook_event_name": "Stop",
            "last_assistant_message": answer}
    if prefix:  # `python -m chrollo` replaced by the limited runner (same arguments after it)
        cmd = [*prefix, "hook", "Stop", "--harness", "codex"]
        return subprocess.run(cmd, input=json.dumps(body).encode(), capture_output=True,
                              env=cli_env(home), cwd=str(home.parent), timeout=60)
    p = hook(home, "codex", "Stop", body)
    ok(p)
    return p


def _hidden(home) -> list:
    v = home / "memories"
    return sorted(p.name for p in v.iterdir() if p.name.startswith(".")) if v.is_dir() else []


def _agent_texts(home) -> list:
    (f,) = vault_files(home)
    return [t.text for t in read_session(f).turns if t.role == "agent"]


def _prompt(home, cwd, prompt: str) -> None:
    ok(hook(home, "codex", "UserPromptSubmit", {"session_id": SID, "transcript_path": None, "cwd": str(cwd),
                                                 "hook_event_name": "UserPromptSubmit", "prompt": prompt}))


def _second_turn_started(home, cwd):
    """One turn written, the second prompt sent: (the file, its bytes)."""
    _turn(home, cwd, "first prompt here", ALPHA)
    (f,) = vault_files(home)
    before = f.read_bytes()
    _prompt(home, cwd, "second prompt")
    return f, before


def test_full_disk_mid_append_leaves_no_torn_turn_and_no_duplicate(home, tmp_path):
    f, before = _second_turn_started(home, tmp_path)
    p = _stop(home, tmp_path, BRAVO, prefix=_limited(len(before) + 2000, die=False))
    assert p.returncode == 0 and p.stdout == b""  # the hook contract holds on a full disk
    assert "File too large" in (home / "logs" / "hooks.log").read_text()  # the write really failed
    assert f.read_bytes() == before  # the torn part was taken back out
    _stop(home, tmp_path, BRAVO)  # the harness's next Stop (disk has room again)
    _stop(home, tmp_path, BRAVO)  # and a replay of it
    assert [a.strip() for a in _agent_texts(home)] == [ALPHA.strip(), BRAVO.strip()]
    assert _hidden(home) == []


def test_killed_mid_append_is_repaired_on_the_next_write(home, tmp_path):
    f, before = _second_turn_started(home, tmp_path)
    p = _stop(home, tmp_path, BRAVO, prefix=_limited(len(before) + 2000, die=True))
    assert p.returncode == -signal.SIGXFSZ  # killed by the kernel in the middle of the write
    torn = f.read_bytes()
    assert len(before) < len(torn) < len(before) + len(BRAVO)  # a torn turn is on disk now
    _stop(home, tmp_path, BRAVO)  # the next write repairs it, then writes the turn whole
    text = f.read_text()
    assert text.startswith(before.decode()) and text.count("bravo bravo") == BRAVO.count("bravo bravo")
    assert [a.strip() for a in _agent_texts(home)] == [ALPHA.strip(), BRAVO.strip()]
    (aside,) = (home / "state" / "torn").iterdir()  # the torn bytes are set aside, not lost
    assert aside.read_bytes() == torn[len(before):]
    _stop(home, tmp_path, BRAVO)
    assert [a.strip() for a in _agent_texts(home)] == [ALPHA.strip(), BRAVO.strip()]


def test_killed_while_creating_the_file_leaves_nothing_in_the_vault(home, tmp_path):
    _prompt(home, tmp_path, "first prompt here")
    p = _stop(home, tmp_path, ALPHA, prefix=_limited(20000, die=True))
    assert p.returncode == -signal.SIGXFSZ
    assert vault_files(home) == [] and _hidden(home) == []  # no half file, no .tmp
    _stop(home, tmp_path, ALPHA)
    assert [a.strip() for a in _agent_texts(home)] == [ALPHA.strip()]


def test_an_old_writers_leftover_temp_file_is_set_aside(home, tmp_path):
    _turn(home, tmp_path, "first prompt here", "short answer")
    (f,) = vault_files(home)
    f.unlink()  # (the file is recreated on the next turn: a create runs)
    stale = home / "memories" / ".019f0000.999999999.tmp"
    stale.write_text("half a turn from a writer that died")
    _turn(home, tmp_path, "second prompt here", "another answer")
    assert _hidden(home) == []
    assert (home / "state" / "torn" / "019f0000.999999999.tmp").read_text() == "half a turn from a writer that died"


def _stop_process(home, cwd, sid: str, answer: str):
    """A Stop hook running in the background, its payload already handed over."""
    body = json.dumps({"session_id": sid, "transcript_path": None, "cwd": str(cwd),
                       "hook_event_name": "Stop", "last_assistant_message": answer}).encode()
    proc = subprocess.Popen([sys.executable, "-m", "chrollo", "hook", "Stop", "--harness", "codex"],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=cli_env(home), cwd=str(home.parent))
    proc.stdin.write(body)  # (returns once the hook has read most of it: it is running)
    proc.stdin.close()
    return proc


def test_repeated_kill_9_never_leaves_torn_or_twice_written_turns(home, tmp_path):
    rng = random.Random(18)
    answers = [f"answer number {i} " + ("x" * 7 + " ") * 60000 for i in range(12)]  # ~480 KB each
    # How long a Stop that appends to an existing session runs after its payload is handed
    # over, on this machine now (an idle CI box is several times faster than a loaded one, and
    # an append faster than a file's creation): kills are drawn inside that span.
    cal = tmp_path / "calibration"
    spans = []
    for j in range(4):
        _prompt(cal, tmp_path, f"calibration prompt {j}")
        t0 = time.monotonic()
        _stop_process(cal, tmp_path, SID, answers[j]).wait()
        spans.append(time.monotonic() - t0)
    span = sorted(spans[1:])[1]  # (the first run created the file)
    killed = 0
    for i, answer in enumerate(answers):
        _prompt(home, tmp_path, f"prompt number {i}")
        proc = _stop_process(home, tmp_path, SID, answer)
        time.sleep(rng.uniform(0.0, span))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            killed += 1
        proc.wait()
        assert _hidden(home) == []
    assert killed >= 3  # (enough of the runs really were killed)
    _prompt(home, tmp_path, "the last prompt")
    _stop(home, tmp_path, "the last answer")
    texts = [a.strip() for a in _agent_texts(home)]
    whole = {a.strip() for a in answers} | {"the last answer"}
    assert all(t in whole for t in texts), "a torn answer is in the file"
    assert len(texts) == len(set(texts)), "an answer is in the file twice"
    assert texts[-1] == "the last answer"
    (f,) = vault_files(home)
    users = [t.text for t in read_session(f).turns if t.role == "user"]
    assert len(users) == len(set(users)) and users[-1] == "the last prompt"
