"""chrollo as each harness's own package (issue 31): the Claude Code plugin, the Codex plugin,
the Gemini CLI extension and the pi package, installed from this checkout with the harness's
own command — no ``chrollo install`` — pass the same scenarios as ``chrollo install``."""
from __future__ import annotations

import pytest

from .drivers import DRIVERS

# the scenarios, collected here again with this module's `make` (the package, not `chrollo install`)
from .test_capture import test_plain_turn  # noqa: F401
from .test_recall import (test_model_calls_read_memory_and_the_hit_reaches_its_next_request,  # noqa: F401
                          test_new_session_request_carries_the_recall_block)

pytestmark = pytest.mark.e2e


@pytest.fixture
def make(world):
    def _make(name: str, install: bool = True, mcp: bool = True):
        drv = DRIVERS[name](world)
        if install:
            drv.install_package()
        return drv
    return _make
