"""Claude Code 2.1.330 defers MCP tools: its first request lists read_memory by name, and the
model loads it with ToolSearch. A keyword search with the words an agent looks for memory with
must return read_memory first — checked against the real harness's own ToolSearch
(tests/test_mcp_search.py replays its scorer without the harness)."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

QUERIES = ["memory", "past sessions", "previous conversation", "what did we do"]


def _tool_search_results(world, since: int) -> list:
    """The tool names each ToolSearch result loaded (its ``tool_reference`` blocks), in order."""
    out = []
    for q in world.requests_since(since):
        msgs = (q.get("body") or {}).get("messages") or []
        content = msgs[-1].get("content") if msgs else None
        for blk in content if isinstance(content, list) else []:
            if isinstance(blk, dict) and blk.get("type") == "tool_result" and isinstance(blk.get("content"), list):
                out.append([x.get("tool_name") for x in blk["content"] if isinstance(x, dict)])
    return out


def test_claude_code_tool_search_finds_read_memory_first(make, world):
    drv = make("claude-code")
    for query in QUERIES:
        world.server.model.tool_search_query = query
        mark = world.server.mark()
        r = drv.run("recall: deploy codeword\nsay: done")
        assert r.ok, r.proc.stderr
        found = _tool_search_results(world, mark)
        # `chrollo install`'s server is mcp__chrollo, the plugin's mcp__plugin_chrollo_chrollo
        assert found and found[0][:1] in (["mcp__chrollo__read_memory"], ["mcp__plugin_chrollo_chrollo__read_memory"]), \
            (query, found)
