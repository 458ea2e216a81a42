"""GitHub Copilot CLI (``copilot -p``) against the fake OpenAI chat-completions server.

Config: BYOK in the environment (``COPILOT_PROVIDER_BASE_URL`` + ``COPILOT_PROVIDER_API_KEY``,
``COPILOT_MODEL``) and ``COPILOT_OFFLINE=true``: no GitHub login, no telemetry, no auto-update,
no GitHub MCP server. Tools approved (``--allow-all-tools``). A new session gets its id from the
driver (``--session-id``), a resumed one ``--resume``; ``--output-format json`` prints events.
Sessions: ``~/.copilot/session-state/<session id>/events.jsonl``.
"""
from __future__ import annotations

import uuid

from ..kit.world import ROOT
from .base import Driver, Result, json_lines

MODEL = "fake-model"


class Copilot(Driver):
    name = "copilot"
    has_package = True

    def env(self) -> dict:
        return {"COPILOT_PROVIDER_BASE_URL": f"{self.w.server.url}/v1", "COPILOT_PROVIDER_API_KEY": "sk-e2e-fake",
                "COPILOT_MODEL": MODEL, "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false"}

    def config_files(self) -> list:
        return [self.w.home / ".copilot" / "hooks" / "chrollo.json", self.w.home / ".copilot" / "mcp-config.json"]

    def package_commands(self) -> tuple:
        """The plugin is ``hooks/copilot`` (``.plugin/plugin.json``), catalogued by the
        checkout's ``.github/plugin/marketplace.json`` (a local marketplace: loaded live from
        the checkout, never copied). Copilot CLI 1.0.102 calls a direct path install deprecated."""
        return ([["copilot", "plugin", "marketplace", "add", str(ROOT)], ["copilot", "plugin", "install", "chrollo@chrollo"]],
                [["copilot", "plugin", "uninstall", "chrollo@chrollo"], ["copilot", "plugin", "marketplace", "remove", "chrollo"]])

    def run(self, prompt: str, *, resume: str | None = None, cont: bool = False, timeout: float = 180,
            args: tuple = (), **env) -> Result:
        sid = resume or str(uuid.uuid4())
        cmd = ["copilot", "-p", prompt, "--allow-all-tools", "--output-format", "json", *args]
        cmd += ["--resume", resume] if resume else ["--continue"] if cont else ["--session-id", sid]
        p = self._exec(cmd, timeout, **env)
        self._settled()
        text, out_sid = "", None
        for ev in json_lines(p.stdout):
            if ev.get("type") == "assistant.message" and isinstance((ev.get("data") or {}).get("content"), str) \
                    and ev["data"]["content"]:
                text = ev["data"]["content"]
            if ev.get("type") == "result":
                out_sid = ev.get("sessionId")
        return Result(p, out_sid or (None if cont else sid), text)

    def _settled(self, limit: float = 20.0) -> None:
        """Copilot writes the turn to events.jsonl as it exits, after its hooks: the capture is
        the detached pass the agentStop hook left (``chrollo.hook.settle_main``, ≤ 5 s of
        waiting). A user sees the turn moments later; a scenario waits for that pass to end."""
        import os
        import time

        home = str(self.w.home).encode()
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            pending = False
            for pid in os.listdir("/proc"):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        line = fh.read()
                except OSError:
                    continue
                if b"settle_main" in line and home in line:
                    pending = True
                    break
            if not pending:
                return
            time.sleep(0.1)

    def transcripts(self) -> list:
        return sorted((self.w.home / ".copilot" / "session-state").glob("*/events.jsonl"))
