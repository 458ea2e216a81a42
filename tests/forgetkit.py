"""A chrollo home where a forget has everything to reach (#42): one session to forget, told
apart by its own words, and every trace the rest of chrollo keeps of it — recall receipts and
the recall record of another session that was shown it, its capture state with a prompt in
flight, a torn turn set aside, a mesh publication to a folder, the search index, the listing
caches. Real `chrollo` processes throughout (hooks, mesh sync, index, forget)."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from conftest import run
from hookkit import hook, ok

SID_A = "aaaa1111-2222-4333-8444-555566667777"   # the session forgotten
SID_B = "bbbb1111-2222-4333-8444-555566667777"   # another one, that was shown it
SID_C = "cccc1111-2222-4333-8444-555566667777"   # a later one in the same folder (links it as previous)
TOKEN = "sk_live_51H8xQpL2eZvKYlo2C9a8bT7"
TOKEN_TAIL = TOKEN[8:]  # (its distinctive part: what no other text holds)


class Codex:
    """A session run through codex's hooks without a transcript: the payloads carry the prompt and
    the answer (what the torn-write tests use: the Stop hook itself appends the turn)."""

    def __init__(self, cwd: Path, sid: str):
        self.sid, self.cwd = sid, cwd

    def prompt(self, home: Path, prompt: str, **env) -> bytes:
        p = hook(home, "codex", "UserPromptSubmit", {"session_id": self.sid, "transcript_path": None,
                                                     "cwd": str(self.cwd), "hook_event_name": "UserPromptSubmit",
                                                     "prompt": prompt}, **env)
        ok(p)
        return p.stdout

    def stop(self, home: Path, answer: str, prefix=(), **env):
        body = {"session_id": self.sid, "transcript_path": None, "cwd": str(self.cwd), "hook_event_name": "Stop",
                "last_assistant_message": answer}
        if prefix:  # `python -m chrollo` replaced by the limited runner (same arguments after it)
            import subprocess

            from conftest import cli_env

            return subprocess.run([*prefix, "hook", "Stop", "--harness", "codex"], input=json.dumps(body).encode(),
                                  capture_output=True, env=cli_env(home, **env), cwd=str(home.parent), timeout=60)
        p = hook(home, "codex", "Stop", body, **env)
        ok(p)
        return p

    def live(self, home: Path, prompt: str, answer: str, **env) -> bytes:
        out = self.prompt(home, prompt, **env)
        self.stop(home, answer, **env)
        return out


def _limited(limit: int) -> list:
    """`python -m chrollo` killed by the kernel (SIGXFSZ) at the write crossing ``limit`` bytes."""
    code = ("import resource, runpy, signal, sys; "
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
            "signal.signal(signal.SIGXFSZ, signal.SIG_DFL); "
            "sys.argv = ['chrollo'] + sys.argv[1:]; runpy.run_module('chrollo', run_name='__main__')")
    return [sys.executable, "-c", code]


class World:
    """``words``: what only the forgotten session says (its first prompt, so its title and its
    file name's slug hold them); ``extras``: which traces to make (all by default)."""

    def __init__(self, root: Path, words: list, extras=("receipts", "pending", "torn", "mesh", "index", "listing",
                                                       "later"),
                 redact_capture: bool = False):
        self.root, self.words, self.extras = root, list(words), set(extras)
        self.home = root / "home"
        self.proj = root / "proj"
        (self.proj / ".git").mkdir(parents=True, exist_ok=True)
        self.other = root / "other"
        self.other.mkdir(exist_ok=True)
        self.shared = root / "shared"
        if redact_capture:
            assert run(["config", "redact-capture", "on"], self.home).returncode == 0
        self.a = Codex(self.proj, SID_A)
        self.b = Codex(self.other, SID_B)
        said = " ".join(self.words)
        self.first = f"{said} {TOKEN}"
        self.a.live(self.home, self.first, f"the staging proxy listens on port 8443, {said}")
        self.a.live(self.home, "and what is the staging proxy timeout", "the staging proxy timeout is 30 seconds")
        if "torn" in self.extras:  # a turn cut by a kill mid-append, set aside by the next pass
            answer = f"{said} key {TOKEN}\n" + "staging " * 9000
            self.a.prompt(self.home, f"explain the staging proxy config {said}")
            size = self.file_a().stat().st_size
            p = self.a.stop(self.home, answer, prefix=_limited(size + 2000))
            assert p.returncode != 0, p.stderr
            self.a.stop(self.home, answer)  # (the next pass sets the torn bytes aside)
            torn = list((self.home / "state" / "torn").iterdir())
            assert torn and any(self.words[0].encode() in t.read_bytes() for t in torn), torn
        if "later" in self.extras:  # a later session in A's folder: its frontmatter links A's file
            Codex(self.proj, SID_C).live(self.home, "rotate the staging proxy certificates", "rotated them",
                                         CHROLLO_NOW="2026-11-01T13:00:00")
        if "receipts" in self.extras:  # B is shown A's lines: a receipt and B's recall record cite A's file
            out = self.b.live(self.home, "which port does the staging proxy listen on", "port 8443")
            assert b"8443" in out, out
        if "pending" in self.extras:  # A's next prompt, in flight (the capture state holds it)
            self.a.prompt(self.home, f"{said} pending question about {TOKEN}")
        if "mesh" in self.extras:
            assert run(["mesh", "init", "--name", "n1"], self.home).returncode == 0
            self.shared.mkdir(exist_ok=True)
            self.publish()
        if "index" in self.extras:
            assert run(["index"], self.home).returncode == 0
        if "listing" in self.extras:
            assert run(["sessions"], self.home).returncode == 0
            assert run(["stats"], self.home).returncode == 0

    def publish(self):
        p = run(["mesh", "sync", "--folder", str(self.shared), "--json"], self.home)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    def file_a(self) -> Path:
        (f,) = [p for p in (self.home / "memories").glob("*.md") if "aaaa1111" in p.name]
        return f

    def after(self) -> None:
        """What comes after a forget: the next publication, an index update, a search."""
        if "mesh" in self.extras:
            self.publish()
        if "index" in self.extras:
            assert run(["index"], self.home).returncode == 0
        run(["search", "staging proxy"], self.home)


def traces(home: Path, needles) -> list:
    """Every file under ``home`` (any bytes; names of files and folders too) that holds one of
    ``needles`` (case-insensitive, as text or as its UTF-8 bytes): (where, what)."""
    found = []
    needles = [n.lower() for n in needles if n]
    for d, dirs, files in os.walk(home):
        for name in dirs + files:
            p = os.path.join(d, name)
            low = name.lower()
            found += [(p, f"name holds {n!r}") for n in needles if n in low]
        for name in files:
            p = os.path.join(d, name)
            if os.path.islink(p):
                continue
            try:
                data = Path(p).read_bytes().lower()
            except OSError:
                continue
            found += [(p, f"holds {n!r}") for n in needles if n.encode() in data]
    return found
