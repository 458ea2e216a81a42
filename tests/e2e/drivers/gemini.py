"""Gemini CLI (``gemini -p``) against the fake Gemini ``streamGenerateContent`` server.

Config: ``GOOGLE_GEMINI_BASE_URL`` + ``GEMINI_API_KEY`` in the environment, API-key auth,
auto-update, usage statistics and telemetry off in ``~/.gemini/settings.json``; the project
folder trusted for the run (``--skip-trust``); tools approved (``--yolo``). A new session
gets its id from the driver (``--session-id``), so resuming needs no parsing.
Sessions: ``~/.gemini/tmp/<project hash or name>/chats/session-*.json(l)``.
"""
from __future__ import annotations

import json
import uuid

from .base import Driver, Result, write_json

MODEL = "gemini-2.5-flash"


class Gemini(Driver):
    name = "gemini"

    def configure(self) -> None:
        write_json(self.w.home / ".gemini" / "settings.json", {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "model": {"name": MODEL},
        })

    def env(self) -> dict:
        return {"GEMINI_API_KEY": "e2e-fake-key", "GOOGLE_GEMINI_BASE_URL": self.w.server.url,
                "GEMINI_CLI_NO_RELAUNCH": "true"}

    def config_files(self) -> list:
        return [self.w.home / ".gemini" / "settings.json"]

    def run(self, prompt: str, *, resume: str | None = None, cont: bool = False, timeout: float = 180,
            args: tuple = (), **env) -> Result:
        sid = resume or str(uuid.uuid4())
        cmd = ["gemini", "-p", prompt, "-m", MODEL, "--yolo", "--skip-trust", "-o", "json", *args]
        cmd += ["--resume", resume] if resume else ["--resume", "latest"] if cont else ["--session-id", sid]
        p = self._exec(cmd, timeout, **env)
        try:
            out = json.loads(p.stdout[p.stdout.find("{"):])
        except ValueError:
            out = {}
        return Result(p, out.get("session_id") or (None if cont else sid), out.get("response") or "")

    def transcripts(self) -> list:
        tmp = self.w.home / ".gemini" / "tmp"
        return sorted(p for p in tmp.rglob("*") if p.is_file() and p.parent.name == "chats")
