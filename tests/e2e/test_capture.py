"""Capture, end to end: the real harness answers through the fake model; chrollo's hooks write
the turn to the vault exactly once, verbatim."""
from __future__ import annotations

import re

import pytest

from .conftest import HARNESSES

pytestmark = pytest.mark.e2e


def only_file(world) -> str:
    files = world.vault_files()
    assert len(files) == 1, list(files)
    return next(iter(files.values()))


def turns(text: str) -> list:
    """[(role, body)] of a session file."""
    parts = re.split(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \[(User|Agent)\]\n", text, flags=re.M)
    return [(parts[i], parts[i + 1].rstrip("\n")) for i in range(1, len(parts), 2)]


@pytest.mark.parametrize("harness", HARNESSES)
def test_plain_turn(make, world, harness):
    drv = make(harness)
    r = drv.run("say: the staging proxy listens on port 8443")
    assert r.ok, r.proc.stderr
    assert "the staging proxy listens on port 8443" in r.proc.stdout
    text = only_file(world)
    assert f'harness: "{harness}"' in text
    assert turns(text) == [("User", "say: the staging proxy listens on port 8443"),
                           ("Agent", "> the staging proxy listens on port 8443")]
    assert any("say: the staging proxy" in q["prompt"] for q in world.server.model_requests())
    assert world.proxy.attempts == []
