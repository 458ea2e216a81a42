"""Qwen Code's own behaviour that chrollo's adapter answers (docs/harnesses/qwen-code.md)."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e


def _offered(world) -> list:
    return [n for q in world.server.model_requests() for n in q["tools"] if n.endswith("read_memory")]


def test_qwen_code_offers_read_memory_only_with_always_load_tools(make, world):
    """0.24.4 lists MCP tools in the request only for a server with ``"alwaysLoadTools": true``
    (else behind its own tool_search): `chrollo install` writes it, and it is what makes the tool."""
    drv = make("qwen-code")
    assert drv.run("say: with the server entry as chrollo install writes it").ok
    assert _offered(world) == ["mcp__chrollo__read_memory"]
    settings = drv.settings()
    data = json.loads(settings.read_text("utf-8"))
    del data["mcpServers"]["chrollo"]["alwaysLoadTools"]
    settings.write_text(json.dumps(data, indent=2), "utf-8")
    mark = world.server.mark()
    assert drv.run("say: without alwaysLoadTools").ok
    assert [n for q in world.server.model_requests()[-1:] for n in q["tools"] if n.endswith("read_memory")] == []
    assert world.server.mark() > mark


def test_the_empty_prompt_after_a_tool_result_injects_nothing_again(make, world):
    """UserPromptSubmit fires again after each tool result with an empty prompt; chrollo answers
    nothing, so the request after the tool result carries no second recall block."""
    drv = make("qwen-code")
    assert drv.run("say: the staging reverse proxy listens on port 8443 behind nginx").ok
    mark = world.server.mark()
    assert drv.run("run: printf 'ok\\n'\nsay: which port does the staging reverse proxy listen on?").ok
    reqs = [q for q in world.requests_since(mark) if q.get("wire") and not q.get("aux")]
    assert len(reqs) == 2 and reqs[1]["results"], [q["reply"] for q in reqs]
    assert json.dumps(reqs[0]["body"]).count("[chrollo-recall]") == 1
    assert json.dumps(reqs[1]["body"]).count("[chrollo-recall]") == 1    # the first block, not a second
    assert "skipped: the prompt is the harness's own" in world.hook_log()
