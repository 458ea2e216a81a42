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

chrollo's own package (``hooks/opencode``, a folder holding package.json + index.js) is
installed with ``opencode plugin -g <folder>``, which adds the folder's path to the global
config's ``plugin`` list — offline, nothing is copied. OpenCode 1.18.33 has no command that
removes a plugin: uninstalling it is deleting that entry again, as a user edits the file.
``opencode plugin`` also leaves its lock on the config folder behind
(``~/.local/state/opencode/locks/<hash>.lock``, its pid gone), and the next OpenCode start waits
until the lock's heartbeat is a minute old before it breaks it: the driver removes the lock of
the exited process, which spares each package scenario that minute and changes nothing else.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from ..kit.world import ROOT
from .base import Driver, Result, json_lines, write_json

MODEL = "fake-model"


class OpenCode(Driver):
    name = "opencode"
    own_traffic = ("registry.npmjs.org:443",)   # its own npm install of @opencode-ai/plugin

    def configure(self) -> None:
        write_json(self.config_dir() / "opencode.json", {
            "$schema": "https://opencode.ai/config.json",
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake (e2e)",
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
        """Installed with OpenCode's own command; removed by editing the config (no command)."""
        return [["opencode", "plugin", "-g", str(ROOT / "hooks" / "opencode")]], []

    def install_package(self) -> None:
        super().install_package()
        self._drop_stale_locks()

    def uninstall_package(self) -> None:
        """What docs/install.md says to do: delete the package's entry from the config's
        ``plugin`` list (and the list, left empty)."""
        path = self.config_dir() / "opencode.json"
        cfg = json.loads(path.read_text("utf-8"))
        cfg["plugin"] = [p for p in cfg.get("plugin", []) if p != str(ROOT / "hooks" / "opencode")]
        if not cfg["plugin"]:
            del cfg["plugin"]
        write_json(path, cfg)

    def _wait_for_hooks(self, limit: float = 30) -> None:
        """Until no ``chrollo hook`` of this world runs. ``opencode run`` exits without waiting
        for a plugin's ``session.idle`` handler: the capture it started finishes just after
        (its process outlives OpenCode's; seen 0.3 s late under load), and a scenario reading
        the vault at once would race it."""
        import time

        mark = f"CHROLLO_HOME={self.w.chrollo_home}".encode() + b"\0"
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            busy = False
            for proc in Path("/proc").iterdir():
                try:
                    if proc.name.isdigit() and b"\0hook\0" in (proc / "cmdline").read_bytes() \
                            and mark in (proc / "environ").read_bytes() + b"\0":
                        busy = True
                        break
                except OSError:
                    continue
            if not busy:
                return
            time.sleep(0.05)

    def _drop_stale_locks(self) -> None:
        """OpenCode's locks whose process has exited (see the module's docstring)."""
        for lock in (self.w.home / ".local" / "state" / "opencode" / "locks").glob("*.lock"):
            try:
                pid = json.loads((lock / "meta.json").read_text("utf-8"))["pid"]
                os.kill(pid, 0)
            except ProcessLookupError:
                shutil.rmtree(lock, ignore_errors=True)
            except (OSError, ValueError, KeyError, TypeError):
                pass

    def run(self, prompt: str, *, resume: str | None = None, cont: bool = False, timeout: float = 180,
            args: tuple = (), **env) -> Result:
        cmd = [self.binary(), "run", "--format", "json", "-m", f"fake/{MODEL}", *args]
        if resume:
            cmd += ["--session", resume]
        elif cont:
            cmd += ["--continue"]
        p = self._exec(cmd + [prompt], timeout, **env)
        self._wait_for_hooks()
        sid, text = None, ""
        for ev in json_lines(p.stdout):
            sid = sid or ev.get("sessionID")
            part = ev.get("part") or {}
            if ev.get("type") == "text" and isinstance(part.get("text"), str):
                text = part["text"]
        return Result(p, sid, text)

    def transcripts(self) -> list:
        return sorted((self.w.home / ".local" / "share" / "opencode").glob("opencode*.db"))
