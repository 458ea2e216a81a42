"""Runs of the real harnesses recorded by the end-to-end suite (tests/e2e/record.py), one per
harness and pinned version, replayed without node: every hook call as the harness made it,
against the transcripts as they grew. Live capture must hold exactly the scripted history, and
`chrollo import` over the same transcripts must write the same bytes, once."""
from __future__ import annotations

import pytest
from hookkit import vault_files
from recorded import E2E, assert_import_equals_live, replay

from chrollo.session import read_session

CHUNKED = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
# tests/e2e/record.py's script: the first session (a plain turn, then a tool turn and a chunked
# reply resumed into it), a second session (answered by the model's default), pi: a cut stream.
FIRST = [("user", "say: the staging reverse proxy listens on port 8443", 0),
         ("agent", "the staging reverse proxy listens on port 8443", 0),
         ("user", "run: printf 'disk %s\\n' free-31G\nsay: the disk has room", 0),
         ("agent", "the disk has room", 1),
         ("user", f"say: {CHUNKED}\nchunks: 4", 0),
         ("agent", CHUNKED, 0)]
SECOND = [("user", "which port does the staging reverse proxy listen on?", 0),
          ("agent", "pong from the fake model", 0)]
CUT = [("user", f"say: {CHUNKED}\nchunks: 3\ncut once", 0), ("agent", CHUNKED, 0)]


def history(path) -> list:
    return [(t.role, t.text, len(t.tools)) for t in read_session(path).turns]


def test_there_is_a_recording_per_harness():
    assert {n.rsplit("-", 1)[0] for n in E2E} == {"claude-code", "codex", "gemini", "pi", "qwen-code"}


@pytest.mark.parametrize("name", E2E)
def test_replayed_live_capture_holds_the_scripted_history(name, home, tmp_path):
    replay(f"e2e/{name}", tmp_path, home)
    got = sorted((history(p) for p in vault_files(home)), key=len, reverse=True)
    want = [FIRST, SECOND] + ([CUT] if name.startswith("pi-") else [])
    assert got == sorted(want, key=len, reverse=True)   # one marker for the shell call, no output
    assert "free-31G" not in "".join(p.read_text() for p in vault_files(home)).replace("printf 'disk %s\\n' free-31G", "")


@pytest.mark.parametrize("name", E2E)
def test_import_over_the_recorded_transcripts_equals_live_capture(name, home, tmp_path):
    replay(f"e2e/{name}", tmp_path, home)
    assert_import_equals_live(name, tmp_path, home)
