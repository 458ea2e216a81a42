"""The end-to-end suite's fixtures: the harness binaries (installed once, cached outside the
repository), and per test a private world (HOME, fake model server, refusing proxy) with the
harness's driver. A failing test's report carries the world's request log and vault."""
from __future__ import annotations

import shutil

import pytest

from .drivers import DRIVERS
from .kit import npm
from .kit.world import World

HARNESSES = list(DRIVERS)


@pytest.fixture(scope="session")
def harness_bin():
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node/npm are not installed: the end-to-end suite drives the real npm harnesses")
    return npm.ensure_installed() / "node_modules" / ".bin"


@pytest.fixture
def world(tmp_path, harness_bin, request):
    w = World(tmp_path, harness_bin)
    request.node._e2e_world = w
    yield w
    w.close()


@pytest.fixture
def make(world):
    """``make("claude-code")`` → that harness's driver in this test's world."""
    def _make(name: str, install: bool = True, mcp: bool = True):
        drv = DRIVERS[name](world)
        if install:
            drv.install(mcp=mcp)
        return drv
    return _make


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    w = getattr(item, "_e2e_world", None)
    if w is not None and rep.when == "call" and (rep.failed or hasattr(rep, "wasxfail")):
        try:
            rep.sections.append(("e2e world", w.dump()))
        except Exception as e:  # a report must never fail
            rep.sections.append(("e2e world", f"(dump failed: {e})"))


def pytest_collection_modifyitems(config, items):
    """test_packages.py runs the scenarios again on each harness's own package: a harness
    chrollo ships none for (a driver's ``has_package = False``; today every harness has one)
    has no such run — deselected, not skipped."""
    keep, drop = [], []
    for item in items:
        spec = getattr(item, "callspec", None)
        harness = spec.params.get("harness") if spec else None
        packaged = harness not in DRIVERS or DRIVERS[harness].has_package
        (keep if packaged or not item.module.__name__.endswith("test_packages") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
