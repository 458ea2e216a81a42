"""Import, end to end: ``chrollo import <harness>`` over what the real harness wrote gives the
same bytes as live capture, and a second import adds nothing."""
from __future__ import annotations

import json

import pytest

from .conftest import HARNESSES

pytestmark = pytest.mark.e2e


def session_runs(drv) -> None:
    """A little history: a plain turn, a tool turn resumed into it, a second session."""
    first = drv.run("say: the nightly backup runs at 02:00 from the cron host")
    assert first.ok and first.session_id, first.proc.stderr
    tool = drv.run("run: printf 'disk %s\\n' free-31G\nsay: the disk has room", resume=first.session_id)
    assert tool.ok, tool.proc.stderr
    assert drv.run(f"say: {'chunked words of a streamed reply ' * 3}\nchunks: 3").ok


@pytest.mark.parametrize("harness", HARNESSES)
def test_import_is_byte_identical_to_live_capture_and_idempotent(make, world, harness):
    drv = make(harness)
    session_runs(drv)
    live = world.vault_files()
    assert len(live) == 2, list(live)
    other = world.tmp / "import-home"
    p = world.chrollo("import", harness, "--json", CHROLLO_HOME=other)
    first = json.loads(p.stdout)
    imported = world.vault_files(other / "memories")
    assert imported == live
    p = world.chrollo("import", harness, "--json", CHROLLO_HOME=other)
    again = json.loads(p.stdout)
    assert world.vault_files(other / "memories") == live
    assert again["turns"] == 0 and first["turns"] > 0, (first, again)
