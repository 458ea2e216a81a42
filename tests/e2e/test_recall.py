"""Recall, end to end: what chrollo remembers reaches the model — injected before a prompt of
a new session, and through the read_memory tool the model calls itself."""
from __future__ import annotations

import json

import pytest

from .conftest import HARNESSES

pytestmark = pytest.mark.e2e

CODEWORD = "zebra-umbrella-42"


def agent_requests(world, since: int = 0) -> list:
    return [q for q in world.requests_since(since) if q.get("wire") and not q.get("aux")]


@pytest.mark.parametrize("harness", HARNESSES)
def test_new_session_request_carries_the_recall_block(make, world, harness):
    drv = make(harness)
    assert drv.run("say: the staging reverse proxy listens on port 8443 behind nginx").ok
    mark = world.server.mark()
    r = drv.run("which port does the staging reverse proxy listen on?")
    assert r.ok, r.proc.stderr
    first = json.dumps(agent_requests(world, mark)[0]["body"])
    assert "[chrollo-recall]" in first, "no recall block in the new session's first model request"
    assert "listens on port 8443 behind nginx" in first


def _read_memory_results(world) -> list:
    return [res[1] for q in agent_requests(world) for res in q["results"] if res[0].endswith("read_memory")]


@pytest.mark.parametrize("harness", HARNESSES)
def test_model_calls_read_memory_and_the_hit_reaches_its_next_request(make, world, harness):
    drv = make(harness)
    assert drv.run(f"say: the deploy codeword is {CODEWORD}").ok
    r = drv.run("recall: deploy codeword\nsay: found it in memory", **drv.mcp_wait)
    assert r.ok, r.proc.stderr
    calls = [c for q in agent_requests(world) for c in q["reply"]["calls"]]
    assert any(name.endswith("read_memory") and args == {"query": "deploy codeword"} for name, args in calls), calls
    results = _read_memory_results(world)
    assert results and CODEWORD in results[0], results
    if harness == "claude-code":   # listed by name, loaded through tool search first
        # (the plugin's server is mcp__plugin_chrollo_chrollo, `chrollo install`'s mcp__chrollo)
        tool = next(name for name, _ in calls if name.endswith("__read_memory"))
        assert tool in ("mcp__chrollo__read_memory", "mcp__plugin_chrollo_chrollo__read_memory")
        assert calls[0] == ["ToolSearch", {"query": f"select:{tool}", "max_results": 5}]


@pytest.mark.parametrize("harness", HARNESSES)
def test_read_memory_result_is_compact_text(make, world, harness):
    drv = make(harness)
    assert drv.run(f"say: the deploy codeword is {CODEWORD}").ok
    assert drv.run("recall: deploy codeword\nsay: found it in memory", **drv.mcp_wait).ok
    results = _read_memory_results(world)
    assert results and CODEWORD in results[0]
    assert '"hits"' not in results[0] and '"context"' not in results[0], results[0][:500]


FIRST_REQUEST = {"claude-code": lambda q: any(n.endswith("__read_memory") for n in q["deferred"] + q["tools"]),
                 "codex": lambda q: any(n.endswith("__read_memory") for n in q["tools"]),
                 "opencode": lambda q: "chrollo_read_memory" in q["tools"]}


@pytest.mark.parametrize("harness", list(FIRST_REQUEST))
def test_chrollo_tools_are_in_the_first_model_request_10_of_10(make, world, harness):
    """Claude Code 2.1.330 lists MCP tools by name among its deferred tools (a server still
    connecting is not listed); Codex and OpenCode send their schemas. Ten fresh sessions, no
    env tricks."""
    drv = make(harness)
    missing = []
    for i in range(10):
        mark = world.server.mark()
        r = drv.run(f"say: run number {i} of the tool listing check")
        assert r.ok, r.proc.stderr
        if not FIRST_REQUEST[harness](agent_requests(world, mark)[0]):
            missing.append(i)
    assert not missing, f"chrollo's tools missing from the first request of runs {missing}"
