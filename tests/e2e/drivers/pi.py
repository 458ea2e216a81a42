"""pi (``pi -p``) against the fake OpenAI chat-completions server.

Config: a ``fake`` provider in ``~/.pi/agent/models.json`` (``api: openai-completions``,
``baseUrl`` at the server), selected with ``--provider fake --model fake-model``; start-up
network operations off (``PI_OFFLINE=1``). chrollo's capture, recall and ``read_memory``
all live in the extension ``chrollo install pi`` writes. Sessions:
``~/.pi/agent/sessions/<cwd slug>/<timestamp>_<session id>.jsonl``; ``--session <id>``
resumes one.
"""
from __future__ import annotations

from ..kit.world import ROOT
from .base import Driver, Result, json_lines, write_json

MODEL = "fake-model"


class Pi(Driver):
    name = "pi"
    has_mcp = False

    def configure(self) -> None:
        write_json(self.w.home / ".pi" / "agent" / "models.json", {"providers": {"fake": {
            "baseUrl": f"{self.w.server.url}/v1", "api": "openai-completions", "apiKey": "sk-e2e-fake",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": MODEL, "name": "Fake model (chrollo e2e)", "reasoning": False,
                        "contextWindow": 200000, "maxTokens": 8192}]}}})

    def env(self) -> dict:
        return {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1"}

    def config_files(self) -> list:
        return [self.w.home / ".pi" / "agent" / "extensions" / "chrollo.ts"]

    def package_commands(self) -> tuple:
        """The repository is a pi package (package.json's "pi" key names the extension)."""
        return [["pi", "install", ROOT]], [["pi", "remove", ROOT]]

    def run(self, prompt: str, *, resume: str | None = None, cont: bool = False, timeout: float = 180,
            args: tuple = (), **env) -> Result:
        cmd = ["pi", "-p", "--provider", "fake", "--model", MODEL, "--mode", "json", *args]
        if resume:
            cmd += ["--session", resume]
        elif cont:
            cmd += ["--continue"]
        p = self._exec(cmd + [prompt], timeout, **env)
        sid, text = None, ""
        for ev in json_lines(p.stdout):
            if ev.get("type") == "session":
                sid = ev.get("id")
            msg = ev.get("message") or {}
            if ev.get("type") == "message_end" and msg.get("role") == "assistant":
                text = "".join(c.get("text", "") for c in msg.get("content") or [] if c.get("type") == "text")
        return Result(p, sid, text)

    def transcripts(self) -> list:
        return sorted((self.w.home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))
