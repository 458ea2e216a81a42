"""Replay hook calls recorded from the real harnesses (tests/fixtures/recorded/<harness>-<version>/).

Each fixture holds ``hooks.jsonl`` — one line per hook call, in order: the event, the payload
(paths relative to the fixture, the working folder as ``<cwd>``) and how many lines each
transcript it names had at that moment — and ``transcripts/``, the harness's data folder after
the run (long strings of records chrollo never reads are trimmed; see README.md there).
:func:`replay` runs every call as a real ``chrollo hook`` process against transcripts grown
line by line as the harness wrote them, so live capture and ``chrollo import`` over the same
files can be compared byte for byte.
"""
from __future__ import annotations

import json
from pathlib import Path

from conftest import run_json
from hookkit import hook, ok

RECORDED = Path(__file__).resolve().parent / "fixtures" / "recorded"
# the end-to-end suite's recordings, one per harness and pinned version (tests/e2e/record.py)
E2E = sorted(p.name for p in (RECORDED / "e2e").iterdir() if (p / "hooks.jsonl").is_file())


def calls(name: str) -> list:
    return [json.loads(ln) for ln in (RECORDED / name / "hooks.jsonl").read_text("utf-8").splitlines() if ln]


def transcript_lines(name: str, rel: str, cwd: Path) -> list:
    """The recorded file ``rel`` of fixture ``name``, its working folder made ``cwd``, as lines."""
    text = (RECORDED / name / rel).read_text("utf-8").replace("<cwd>", str(cwd))
    return text.splitlines(keepends=True)


def materialise(name: str, tmp: Path, cwd: Path) -> Path:
    """The whole recorded data folder under ``tmp/transcripts`` (its state after the run)."""
    src = RECORDED / name / "transcripts"
    for f in sorted(src.rglob("*")):
        if f.is_file():
            rel = f.relative_to(RECORDED / name).as_posix()
            dst = tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text("".join(transcript_lines(name, rel, cwd)), "utf-8")
    return tmp / "transcripts"


def replay(name: str, tmp: Path, home: Path, change=None, upto: int | None = None, start: int = 0,
           **env) -> Path:
    """Run the recorded hook calls in order (``[start:upto]``); returns the working folder
    the payloads name. ``change(payload)`` may edit each payload first (e.g. drop its transcript)."""
    harness = Path(name).name.rsplit("-", 1)[0]
    cwd = tmp / "work"
    cwd.mkdir(parents=True, exist_ok=True)
    for c in calls(name)[start:upto]:
        body = dict(c["payload"])
        for key in ("transcript_path", "agent_transcript_path"):
            rel = body.get(key)
            if not isinstance(rel, str):
                continue
            dst = tmp / rel
            if key in c["lines"]:  # the file existed then, with that many lines
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_text("".join(transcript_lines(name, rel, cwd)[: c["lines"][key]]), "utf-8")
            body[key] = str(dst)
        if body.get("cwd") == "<cwd>":
            body["cwd"] = str(cwd)
        if change is not None:
            body = change(body)
        ok(hook(home, harness, c["event"], body, **env))
    return cwd


def import_into(home: Path, harness: str, source: Path, **env) -> dict:
    p, out = run_json(["import", harness, "--source", source], home, **env)
    assert p.returncode == 0, p.stderr
    return out


def vault_bytes(vault: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(vault.glob("*.md"))} if vault.is_dir() else {}


def assert_import_equals_live(name: str, tmp: Path, home: Path) -> None:
    """``chrollo import`` over the recording ``e2e/<name>``'s transcripts writes the bytes live
    capture wrote into ``home``, once (a second import adds nothing)."""
    live = vault_bytes(home / "memories")
    assert live
    harness = name.rsplit("-", 1)[0]
    src = materialise(f"e2e/{name}", tmp, tmp / "work")
    other = tmp / "imported"
    out = import_into(other, harness, src)
    assert out["failed"] == 0, out
    assert vault_bytes(other / "memories") == live
    assert import_into(other, harness, src)["turns"] == 0
