"""Gemini CLI (``gemini -p``) against the fake Gemini ``streamGenerateContent`` server.

Config: ``GOOGLE_GEMINI_BASE_URL`` + ``GEMINI_API_KEY`` in the environment, API-key auth,
auto-update, usage statistics and telemetry off in ``~/.gemini/settings.json``; the project
folder trusted for the run (``--skip-trust``); tools approved (``--yolo``). A new session
gets its id from the driver (``--session-id``), so resuming needs no parsing.
Sessions: ``~/.gemini/tmp/<project hash or name>/chats/session-*.json(l)``.

Session cleanup (``general.sessionRetention``) is off: Gemini CLI 0.61 deletes chats it should
keep. ``gemini -p --resume ID`` first starts a chat file named for the current minute and the
id's first 8 characters, then goes on in the old one; resumed in a later minute than it began,
the session leaves a metadata-only ``session-<minute>-<id8>.jsonl`` beside its chat. The next
start's cleanup takes that file for a broken session and deletes every file of that id — the
real chat too — so whether ``chrollo import`` could see a resumed session depended on the clock
(tests/e2e/test_import.py). Live capture keeps such a session whole either way.
"""
from __future__ import annotations

import json
import uuid

from ..kit.world import ROOT
from .base import Driver, Result, write_json

MODEL = "gemini-2.5-flash"


class Gemini(Driver):
    name = "gemini"

    def configure(self) -> None:
        write_json(self.w.home / ".gemini" / "settings.json", {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False,
                        "sessionRetention": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "model": {"name": MODEL},
        })

    def env(self) -> dict:
        return {"GEMINI_API_KEY": "e2e-fake-key", "GOOGLE_GEMINI_BASE_URL": self.w.server.url,
                "GEMINI_CLI_NO_RELAUNCH": "true"}

    def config_files(self) -> list:
        return [self.w.home / ".gemini" / "settings.json"]

    def package_commands(self) -> tuple:
        """The extension is ``hooks/gemini`` (``gemini-extension.json``), copied on install;
        the user answers "y" when asked to trust the folder it comes from."""
        self.package_answers = "y\n"
        self.own_traffic = ("play.googleapis.com:443",)   # its usage log of the extension install
        return ([["gemini", "extensions", "install", ROOT / "hooks" / "gemini", "--consent"]],
                [["gemini", "extensions", "uninstall", "chrollo"]])

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
