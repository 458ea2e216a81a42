"""Qwen Code (``qwen -p --auth-type openai``) against the fake OpenAI chat-completions server.

Config: ``OPENAI_API_KEY``/``OPENAI_BASE_URL``/``OPENAI_MODEL`` in the environment; update
checks, usage statistics, telemetry and its own background memory agents off in ``~/.qwen/settings.json`` (with the
``"$version"`` Qwen Code itself adds on its first start: the file is as a user's is). Tools
approved (``--yolo``). A new session gets its id from the driver (``--session-id``), a resumed
one ``--resume``. Sessions: ``~/.qwen/projects/<cwd with / as ->/chats/<session id>.jsonl``.
"""
from __future__ import annotations

import json
import uuid

from ..kit.world import ROOT
from .base import Driver, Result, write_json

MODEL = "fake-model"
SETTINGS = {"general": {"enableAutoUpdate": False}, "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            # its own memory agents (a model request after every turn): not what the suite tests
            "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
            # its PTY shell now and then returns a command's output as "(empty)" on this loaded
            # VM (2 of ~5 tool turns): the plain child-process shell returns it every time
            "tools": {"shell": {"enableInteractiveShell": False}},
            "$version": 4}


class Qwen(Driver):
    name = "qwen-code"

    def configure(self) -> None:
        write_json(self.settings(), SETTINGS)

    def settings(self):
        return self.w.home / ".qwen" / "settings.json"

    def env(self) -> dict:
        return {"OPENAI_API_KEY": "sk-e2e-fake", "OPENAI_BASE_URL": f"{self.w.server.url}/v1",
                "OPENAI_MODEL": MODEL, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}

    def config_files(self) -> list:
        return [self.settings()]

    def package_commands(self) -> tuple:
        """The extension is ``hooks/qwen-code`` (``qwen-extension.json``), copied on install;
        the user answers "y" to its consent prompt."""
        self.package_answers = "y\n"
        return ([["qwen", "extensions", "install", ROOT / "hooks" / "qwen-code"]],
                [["qwen", "extensions", "uninstall", "chrollo"]])

    def run(self, prompt: str, *, resume: str | None = None, cont: bool = False, timeout: float = 180,
            args: tuple = (), **env) -> Result:
        sid = resume or str(uuid.uuid4())
        cmd = ["qwen", "-p", prompt, "--auth-type", "openai", "-m", MODEL, "--yolo", "-o", "json", *args]
        cmd += ["--resume", resume] if resume else ["--continue"] if cont else ["--session-id", sid]
        p = self._exec(cmd, timeout, **env)
        try:
            out = json.loads(p.stdout[p.stdout.find("["):])
        except ValueError:
            out = []
        result = next((e for e in reversed(out) if isinstance(e, dict) and e.get("type") == "result"), {})
        return Result(p, result.get("session_id") or (None if cont else sid), result.get("result") or "")

    def transcripts(self) -> list:
        return sorted((self.w.home / ".qwen" / "projects").rglob("*.jsonl"))
