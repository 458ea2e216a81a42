"""`chrollo mcp` driven by the real MCP SDK client over stdio."""
from __future__ import annotations

import asyncio
import json
import sys

import pytest

from conftest import ROOT, ToolCall, cli_env, run, write_session

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install '.[test]' brings it)")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402


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


def test_tools_listed_with_guidance(home, tmp_path):
    tools = _call(home, _vault(tmp_path), [])[0].tools
    by_name = {t.name: t for t in tools}
    assert set(by_name) == {"read_memory", "read_memory_file"}
    assert "distinctive" in by_name["read_memory"].description
    assert set(by_name["read_memory"].input_schema["properties"]) == {"query", "limit"}
    assert set(by_name["read_memory_file"].input_schema["properties"]) == {"path", "line", "before", "after"}


def test_read_memory_matches_the_cli(home, tmp_path):
    vault = _vault(tmp_path)
    _, r = _call(home, vault, [("read_memory", {"query": "export timeout", "limit": 5})])
    assert not r.is_error
    p = run(["search", "export timeout", "--dir", vault, "--limit", "5", "--json"], home)
    assert r.structured_content == json.loads(p.stdout)
    text = r.content[0].text
    first = r.structured_content["hits"][0]
    assert f"--- {first['path']}:{first['line']} ---" in text and "→" in text


def test_read_memory_file_and_errors(home, tmp_path):
    vault = _vault(tmp_path)
    (tmp_path / "secret.md").write_text("top secret\n")
    name = next(vault.glob("2026-10-01*.md")).name
    _, ok, escape, missing, bad = _call(home, vault, [
        ("read_memory_file", {"path": name, "line": 16, "before": 1, "after": 1}),
        ("read_memory_file", {"path": "../secret.md", "line": 1}),
        ("read_memory_file", {"path": "nope.md", "line": 1}),
        ("read_memory", {"query": "export", "limit": 500}),
    ])
    assert not ok.is_error
    assert [x["line"] for x in ok.structured_content["lines"]] == [15, 16, 17]
    assert "→ 16  > Multipart upload fixes the export timeout." in ok.content[0].text
    assert escape.is_error and "outside the memory folders" in escape.content[0].text
    assert "top secret" not in escape.content[0].text
    assert missing.is_error and "no such memory file" in missing.content[0].text
    assert bad.is_error and "limit" in bad.content[0].text


def test_missing_vault_is_a_tool_error_not_a_crash(home, tmp_path):
    _, r, again = _call(home, tmp_path / "none", [("read_memory", {"query": "x y"}),
                                                  ("read_memory", {"query": "x y"})])
    assert r.is_error and "not found" in r.content[0].text
    assert again.is_error  # the server is still up


def test_without_the_extra_exit_1_with_the_pip_command(home):
    code = "import sys; sys.modules['mcp'] = None; from chrollo.cli import main; main(['mcp'])"
    import subprocess
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(home))
    assert p.returncode == 1 and p.stdout == ""
    assert "hint: pip install 'chrollo[mcp]'" in p.stderr
