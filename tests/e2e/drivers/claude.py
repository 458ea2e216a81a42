"""Claude Code (``claude -p``) against the fake Anthropic Messages server.

Config: ``ANTHROPIC_BASE_URL`` + an API key in the environment; nonessential traffic
(telemetry, update checks, error reports) off by its own switches. ``IS_SANDBOX=1`` lets
``--dangerously-skip-permissions`` run as root (CI containers). Sessions live in
``~/.claude/projects/<cwd slug>/<session id>.jsonl``; ``--output-format json`` prints the id.
"""
from __future__ import annotations

import json

from ..kit.world import ROOT
from .base import Driver, Result

MODEL = "claude-sonnet-4-5"


class Claude(Driver):
    name = "claude-code"
    mcp_wait = {"MCP_CONNECTION_NONBLOCKING": "0", "MCP_TIMEOUT": "60000"}

    def env(self) -> dict:
        return {"ANTHROPIC_BASE_URL": self.w.server.url, "ANTHROPIC_API_KEY": "sk-ant-e2e-fake",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1", "DISABLE_TELEMETRY": "1", "IS_SANDBOX": "1"}

    def config_files(self) -> list:
        return [self.w.home / ".claude" / "settings.json", self.w.home / ".claude.json"]

    def package_commands(self) -> tuple:
        """The repository is a marketplace (``.claude-plugin/marketplace.json``) named chrollo."""
        return ([["claude", "plugin", "marketplace", "add", ROOT], ["claude", "plugin", "install", "chrollo@chrollo"]],
                [["claude", "plugin", "uninstall", "chrollo@chrollo"], ["claude", "plugin", "marketplace", "remove", "chrollo"]])

    def run(self, prompt: str, *, resume: str | None = None, cont: bool = False, timeout: float = 180,
            args: tuple = (), **env) -> Result:
        cmd = ["claude", "-p", prompt, "--model", MODEL, "--dangerously-skip-permissions",
               "--output-format", "json", *args]
        if resume:
            cmd += ["--resume", resume]
        if cont:
            cmd += ["--continue"]
        p = self._exec(cmd, timeout, **env)
        try:
            out = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            out = {}
        return Result(p, out.get("session_id"), out.get("result") or "")

    def transcripts(self) -> list:
        return sorted((self.w.home / ".claude" / "projects").rglob("*.jsonl"))
