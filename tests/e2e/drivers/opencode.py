"""OpenCode (``opencode run``) against the fake OpenAI chat-completions server.

Config: a ``fake`` provider in ``~/.config/opencode/opencode.json`` (``@ai-sdk/openai-compatible``,
bundled in the binary; ``baseURL`` at the server) and ``model: fake/fake-model``; auto-update
and sharing off, the models.dev catalogue not fetched. chrollo's capture and recall live in the
plugin ``chrollo install opencode`` writes (``~/.config/opencode/plugin/chrollo.js``),
``read_memory`` in its MCP server (opencode.json's ``mcp``). Sessions: rows of
``~/.local/share/opencode/opencode.db``; ``--session <id>`` resumes one.

At every start OpenCode npm-installs ``@opencode-ai/plugin`` into its config folder (in the
background; it waits for it before loading plugins) unless that folder holds ``node_modules/``
and a ``package-lock.json`` naming it: here the refusing proxy answers that request 403 at
once (its own traffic, not chrollo's); offline without a proxy it waits out npm's retries.
npm may skip the ``opencode-ai`` package's postinstall (it links the platform binary): then
the driver runs the platform package's binary itself.
"""
from __future__ import annotations

import json

from .base import Driver, Result, write_json

MODEL = "fake-model"


class OpenCode(Driver):
    name = "opencode"
    has_package = False
    own_traffic = ("registry.npmjs.org:443",)   # its own npm install of @opencode-ai/plugin

    def configure(self) -> None:
        write_json(self.config_dir() / "opencode.json", {
            "$schema": "https://opencode.ai/config.json",
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake (chrollo e2e)",
                                  "options": {"baseURL": f"{self.w.server.url}/v1", "apiKey": "sk-e2e-fake"},
                                  "models": {MODEL: {"name": "Fake model"}}}},
            "model": f"fake/{MODEL}", "autoupdate": False, "share": "disabled"})

    def config_dir(self):
        return self.w.home / ".config" / "opencode"

    def env(self) -> dict:
        return {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_SHARE": "1"}

    def config_files(self) -> list:
        return [self.config_dir() / "opencode.json", self.config_dir() / "plugin" / "chrollo.js"]

    def binary(self) -> str:
        """``opencode``, or the platform package's binary where npm skipped the postinstall."""
        wrapper = self.w.bin_dir / "opencode"
        if wrapper.is_file() and wrapper.stat().st_size > 1 << 20:
            return "opencode"
        return str(self.w.bin_dir.parent / "opencode-linux-x64" / "bin" / "opencode")

    def package_commands(self) -> tuple:
        import pytest

        pytest.skip("OpenCode's plugin packages come from npm (`opencode plugin <module>`); "
                    "chrollo's plugin is written by `chrollo install opencode`")

    def run(self, prompt: str, *, resume: str | None = None, cont: bool = False, timeout: float = 180,
            args: tuple = (), **env) -> Result:
        cmd = [self.binary(), "run", "--format", "json", "-m", f"fake/{MODEL}", *args]
        if resume:
            cmd += ["--session", resume]
        elif cont:
            cmd += ["--continue"]
        p = self._exec(cmd + [prompt], timeout, **env)
        sid, text = None, ""
        for line in p.stdout.splitlines():
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            sid = sid or ev.get("sessionID")
            part = ev.get("part") or {}
            if ev.get("type") == "text" and isinstance(part.get("text"), str):
                text = part["text"]
        return Result(p, sid, text)

    def transcripts(self) -> list:
        return sorted((self.w.home / ".local" / "share" / "opencode").glob("opencode*.db"))
