"""`chrollo mcp`: the stdlib server, driven by the real MCP SDK client and by raw JSON-RPC lines."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from conftest import ROOT, ToolCall, cli_env, run, write_session

mcp = pytest.importorskip("mcp", reason="the test extra is not installed (pip install '.[test]' brings it)")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def _vault(tmp_path):
    vault = tmp_path / "v"
    write_session(vault, "mcp00000-x", "2026-10-01T10:00:00", [
        ("user", "10:00:00", "the nightly export to s3 times out"),
        ("agent", "10:00:05", [ToolCall("Bash", "aws s3 cp export.csv s3://bucket/"),
                               "Multipart upload fixes the export timeout.",
                               "Chunk size is 64 MB."])])
    write_session(vault, "mcp00001-x", "2026-10-05T10:00:00", [
        ("user", "10:00:00", "export timeout again on the staging bucket")], harness="codex")
    return vault


def _call(home, vault, calls):
    """The SDK's own client over stdio: list the tools, then make ``calls``."""
    async def go():
        params = StdioServerParameters(command=sys.executable, args=["-m", "chrollo", "mcp", "--dir", str(vault)],
                                       env=cli_env(home), cwd=str(ROOT))
        out = []
        async with Client(params) as client:
            out.append(await client.list_tools())
            for name, args in calls:
                out.append(await client.call_tool(name, args))
        return out
    return asyncio.run(go())


def _raw(home, vault, lines: list, extra_args=()) -> tuple[list, str]:
    """Send raw lines (objects are JSON-encoded) to `chrollo mcp`; every reply, and stderr."""
    data = "".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines)
    p = subprocess.run([sys.executable, *extra_args, "-m", "chrollo", "mcp", "--dir", str(vault)],
                       input=data.encode(), capture_output=True, env=cli_env(home), cwd=str(ROOT), timeout=60)
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.decode().splitlines()], p.stderr.decode()


# ----------------------------------------------------------------------------- the SDK's client

def test_sdk_client_lists_tools_with_guidance(home, tmp_path):
    tools = _call(home, _vault(tmp_path), [])[0].tools
    by_name = {t.name: t for t in tools}
    assert list(by_name) == ["read_memory", "read_memory_file"]
    desc = by_name["read_memory"].description
    for teaches in ("past sessions", "file:line", "read_memory_file", "instead of reading whole files",
                    "search again with other words", "exact identifiers"):
        assert teaches in desc
    assert set(by_name["read_memory"].input_schema["properties"]) == {"query", "limit", "project", "since", "until"}
    assert by_name["read_memory"].input_schema["required"] == ["query"]
    assert set(by_name["read_memory_file"].input_schema["properties"]) == {"path", "line", "before", "after"}
    assert by_name["read_memory"].annotations.read_only_hint is True


def test_sdk_read_memory_is_compact_text_like_search_compact(home, tmp_path):
    vault = _vault(tmp_path)
    _, r = _call(home, vault, [("read_memory", {"query": "export timeout", "limit": 5})])
    assert not r.is_error and r.structured_content is None and len(r.content) == 1
    text = r.content[0].text
    assert text == run(["search", "export", "timeout", "--dir", vault, "--limit", "5", "--compact"], home).stdout
    hits = json.loads(run(["search", "export timeout", "--dir", vault, "--limit", "5", "--json"], home).stdout)["hits"]
    first = hits[0]
    rel = first["path"][len(str(vault.resolve())) + 1:]
    assert text.startswith(f"--- {rel}:{first['line']} ---\n{first['date']} · claude-code\n")
    assert "→" in text and "score" not in text and str(vault) not in text
    assert f"{first['line']}  " in text  # numbered lines


def test_sdk_read_memory_file_and_tool_errors(home, tmp_path):
    vault = _vault(tmp_path)
    (tmp_path / "secret.md").write_text("top secret\n")
    name = next(vault.glob("2026-10-01*.md")).name
    _, ok, escape, missing, bad, huge, empty = _call(home, vault, [
        ("read_memory_file", {"path": name, "line": 16, "before": 1, "after": 1}),
        ("read_memory_file", {"path": "../secret.md", "line": 1}),
        ("read_memory_file", {"path": "nope.md", "line": 1}),
        ("read_memory", {"query": "export", "limit": 500}),
        ("read_memory", {"query": "export " * 400}),
        ("read_memory", {"query": "   "}),
    ])
    assert not ok.is_error and ok.structured_content is None
    assert ok.content[0].text.splitlines()[2:] == [
        "  15  > <tool>$ aws s3 cp export.csv s3://bucket/</tool>",
        "→ 16  > Multipart upload fixes the export timeout.", "  17  > Chunk size is 64 MB."]
    assert ok.content[0].text.startswith(f"--- {name}:16 ---\n")
    assert escape.is_error and "outside the memory folders" in escape.content[0].text
    assert "top secret" not in escape.content[0].text
    assert missing.is_error and "no such memory file" in missing.content[0].text
    assert bad.is_error and "limit must be an integer from 1 to 50" in bad.content[0].text
    assert huge.is_error and "at most 1000 characters" in huge.content[0].text
    assert empty.is_error and "non-empty" in empty.content[0].text


def test_sdk_missing_vault_is_a_tool_error_not_a_crash(home, tmp_path):
    _, r, again = _call(home, tmp_path / "none", [("read_memory", {"query": "x y"}),
                                                  ("read_memory", {"query": "x y"})])
    assert r.is_error and "not found" in r.content[0].text
    assert again.is_error  # the server is still up


# ----------------------------------------------------------------------------- the wire, line by line

def test_version_negotiation(home, tmp_path):
    replies, _ = _raw(home, tmp_path, [
        INIT, {**INIT, "id": 2, "params": {**INIT["params"], "protocolVersion": "2024-11-05"}},
        {**INIT, "id": 3, "params": {**INIT["params"], "protocolVersion": "1999-01-01"}}])
    assert [r["result"]["protocolVersion"] for r in replies] == ["2025-06-18", "2024-11-05", "2025-11-25"]
    res = replies[0]["result"]
    assert res["capabilities"] == {"tools": {"listChanged": False}} and res["serverInfo"]["name"] == "chrollo"
    assert "read_memory" in res["instructions"]


def test_json_rpc_errors_and_junk_never_stop_the_server(home, tmp_path):
    replies, err = _raw(home, _vault(tmp_path), [
        INIT,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        "this is not json",
        "",
        "[1, 2",
        '"a string"',
        "[]",
        {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "rm_rf", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": "not an object"},
        {"id": 6, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "x"}},
        {"jsonrpc": "2.0", "id": 8, "result": {}},  # a stray response: ignored
        {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
         "params": {"name": "read_memory", "arguments": {"query": "export", "limit": "3"}}},
        {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "read_memory", "arguments": [1]}},
        [{"jsonrpc": "2.0", "id": 11, "method": "ping"}, {"jsonrpc": "2.0", "method": "notifications/x"}],
        "x" * (1 << 20) + "y" * 10,
        {"jsonrpc": "2.0", "id": 12, "method": "ping"},
    ])
    by_id = {r["id"]: r for r in replies if isinstance(r, dict) and r.get("id") is not None}
    nulls = [r["error"]["code"] for r in replies if isinstance(r, dict) and r.get("id") is None]
    assert nulls == [-32700, -32700, -32600, -32600, -32600]  # junk, [1, 2, "a string", [], too long
    assert by_id[2]["error"]["code"] == -32601
    assert by_id[3]["error"]["code"] == -32602 and "protocolVersion" in by_id[3]["error"]["message"]
    assert by_id[4]["error"]["code"] == -32602 and "rm_rf" in by_id[4]["error"]["message"]
    assert by_id[5]["error"]["code"] == -32600
    assert by_id[6]["error"]["code"] == -32600
    assert 7 not in by_id and 8 not in by_id  # notifications and responses get no reply
    assert by_id[9]["result"]["isError"] is False and "export" in by_id[9]["result"]["content"][0]["text"]
    assert by_id[10]["result"]["isError"] is True
    assert [r for r in replies if isinstance(r, list)] == [[{"jsonrpc": "2.0", "id": 11, "result": {}}]]
    assert by_id[12]["result"] == {}
    assert "Traceback" not in err


def test_initialize_loads_neither_click_rich_nor_the_sdk(home, tmp_path):
    replies, err = _raw(home, tmp_path, [INIT, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}],
                        extra_args=["-X", "importtime"])
    assert [t["name"] for t in replies[1]["result"]["tools"]] == ["read_memory", "read_memory_file"]
    loaded = {ln.split("|")[-1].strip() for ln in err.splitlines() if ln.startswith("import time:")}
    assert "chrollo.mcp_server" in loaded
    heavy = {m for m in loaded if m.split(".")[0] in ("click", "rich", "mcp", "mcp_types", "pydantic", "anyio")}
    assert not heavy and "chrollo.retrieval" not in loaded and "chrollo.cli" not in loaded


def test_mcp_help_still_goes_through_click(home):
    p = run(["mcp", "--help"], home)
    assert p.returncode == 0 and "read_memory" in p.stdout


def test_compact_text_is_at_most_0_6_of_the_json(home, tmp_path):
    """What the model reads per query: the compact text against the --json object it replaces."""
    from chrollo.demo import copy_sample

    vault = copy_sample(tmp_path / "demo")
    for q in ("flaky test race", "redis rate limit", "rollback staging deploy", "memory leak worker"):
        js = run(["search", q, "--dir", vault, "--json"], home).stdout
        text = run(["search", q, "--dir", vault, "--compact"], home).stdout
        assert json.loads(js)["hits"] and text.startswith("--- ")
        assert len(text) <= 0.6 * len(js), (q, len(text), len(js))


def test_read_memory_file_replies_are_capped_with_a_visible_marker(home, tmp_path):
    """A 10 MB line (a pasted blob) is not handed to the model whole: each line and the whole
    reply are capped, and a marker says what was cut and how to see less at a time."""
    vault = _vault(tmp_path)
    big = vault / "big.md"
    big.write_text("# big\n\nneedle " + "z" * 10_000_000 + " tail\n" + "\n".join("w" * 900 for _ in range(400)) + "\n")
    calls = [{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "read_memory_file", "arguments": {"path": "big.md", "line": 3, "before": 2,
                                                                   "after": 5}}},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "read_memory_file", "arguments": {"path": "big.md", "line": 4, "after": 2000}}}]
    replies, err = _raw(home, vault, [INIT, *calls])
    by_id = {r["id"]: r for r in replies}
    one = by_id[2]["result"]["content"][0]["text"]
    assert by_id[2]["result"]["isError"] is False
    assert len(one) < 20_000 and "needle" in one and "tail" not in one
    assert "characters of this line cut" in one
    many = by_id[3]["result"]["content"][0]["text"]
    assert len(many) <= 100_000 and "reply cut" in many and "before/after" in many
    assert "Traceback" not in err


def test_a_request_over_1_mib_is_answered_under_its_own_id(home, tmp_path):
    """#44: the error for an over-long request had no id, so the client waited forever for the
    answer to its request. The id is read from the request's first bytes, or its last (an
    id after the params); a nested "id" or one inside a string is not taken for it."""
    big = "q" * (1 << 20)
    replies, _ = _raw(home, _vault(tmp_path), [
        INIT,
        {"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "read_memory", "arguments": {"query": big}}},
        '{"jsonrpc": "2.0", "method": "tools/call", "params": {"id": 99, "arguments": {"query": "%s"}}, "id": "tail-42"}' % big,
        '{"jsonrpc": "2.0", "method": "tools/call", "params": {"note": "\\"id\\": 98", "query": "%s"' % big,
        {"jsonrpc": "2.0", "id": 43, "method": "ping"},
    ])
    errors = [(r["id"], r["error"]["code"]) for r in replies if "error" in r]
    assert errors == [(41, -32600), ("tail-42", -32600), (None, -32600)], errors
    assert replies[-1] == {"jsonrpc": "2.0", "id": 43, "result": {}}
