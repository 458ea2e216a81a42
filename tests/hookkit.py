"""Helpers for hook tests: fixture payloads made runnable, the real `chrollo hook` process."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SHARED, cli_env

# The project's own fixture set, recorded from the real harnesses by the end-to-end suite
# (tests/e2e/record.py → tests/fixtures/harness/): every hook test runs on it.
# ../shared/fixtures (real-shaped payloads and sanitised transcripts of many versions, same
# layout) only adds cases when it is beside the checkout: see :func:`sets`.
OWN_FIXTURES = FIXTURES = ROOT / "tests" / "fixtures" / "harness"
SHARED_FIXTURES = SHARED / "fixtures"
FIXTURE_SETS = [OWN_FIXTURES] + ([SHARED_FIXTURES] if SHARED_FIXTURES.is_dir() else [])


def sets(own, shared=None) -> list:
    """pytest parameters: ``(OWN_FIXTURES, *own)``, plus ``(SHARED_FIXTURES, *shared)`` when
    ../shared/fixtures is beside the checkout (an extra case, never the only one)."""
    out = [pytest.param(OWN_FIXTURES, *own, id="own")]
    if shared is not None and SHARED_FIXTURES.is_dir():
        out.append(pytest.param(SHARED_FIXTURES, *shared, id="shared"))
    return out


def payload(harness: str, name: str, tmp: Path, src: Path = OWN_FIXTURES, **changes) -> dict:
    """A fixture payload of set ``src`` with its transcript copied under ``tmp``, paths made absolute."""
    d = json.loads((src / "hooks" / harness / f"{name}.json").read_text("utf-8"))
    return localise(d, tmp, src, **changes)


def localise(d: dict, tmp: Path, src: Path = OWN_FIXTURES, **changes) -> dict:
    for k in ("transcript_path", "agent_transcript_path"):
        v = d.get(k)
        if isinstance(v, str) and v.startswith("transcripts/"):
            dst = tmp / v
            if not dst.exists() and (src / v).is_file():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src / v, dst)
            d[k] = str(dst)
    if isinstance(d.get("cwd"), str) and d["cwd"].startswith("/home/user"):
        cwd = tmp / "work" / d["cwd"].strip("/").replace("/", "_")
        cwd.mkdir(parents=True, exist_ok=True)
        d["cwd"] = str(cwd)
    d.update(changes)
    return d


def hook(home: Path, harness: str, event: str | None, body, *args, timeout=60, prefix=(), **env):
    """Run `chrollo hook` in a subprocess; ``body`` is a dict (sent as JSON) or raw bytes."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    cmd = [*prefix, sys.executable, "-m", "chrollo", "hook", *([event] if event else []), "--harness", harness, *args]
    return subprocess.run(cmd, input=data, capture_output=True, env=cli_env(home, **env),
                          cwd=str(home.parent), timeout=timeout)


def ok(p) -> None:
    """The hook contract: exit 0, no traceback."""
    assert p.returncode == 0, p.stderr
    assert b"Traceback" not in p.stderr, p.stderr.decode(errors="replace")


def settled(home: Path, timeout: float = 15.0) -> None:
    """Wait until no capture pass is left waiting for a transcript (a Stop hook's ``deferred``
    turn, written by the pass it left behind: chrollo.capture.settle)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        records = [json.loads(p.read_text("utf-8")) for p in (home / "state" / "capture").glob("*.json")]
        # (an "intent" is an append under way: its state is saved just before the bytes go out)
        if not any({"deferred", "intent"} & set(st) for r in records for st in r.get("vaults", {}).values()):
            return
        time.sleep(0.05)
    raise AssertionError("a deferred capture never settled")


def vault_files(home: Path) -> list:
    v = home / "memories"
    return sorted(v.glob("*.md")) if v.is_dir() else []


def snapshot(home: Path) -> dict:
    return {p.name: p.read_bytes() for p in vault_files(home)}


__all__ = ["FIXTURES", "OWN_FIXTURES", "SHARED_FIXTURES", "FIXTURE_SETS", "ROOT", "sets", "payload", "localise", "hook", "ok",
           "settled", "vault_files", "snapshot"]
