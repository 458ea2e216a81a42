"""What every harness driver offers the scenarios (one subclass per harness)."""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..kit.world import World


@dataclass
class Result:
    proc: subprocess.CompletedProcess
    session_id: str | None
    text: str            # the final answer as the harness printed it

    @property
    def ok(self) -> bool:
        return self.proc.returncode == 0


class Driver:
    name = ""            # chrollo's harness name
    has_mcp = True       # chrollo's read_memory arrives over MCP (pi: its extension)
    # run() arguments that make the harness wait for MCP servers before its first request
    # (what the issue says users never set: only for scenarios about the tool's *result*)
    mcp_wait: dict = {}

    def __init__(self, world: World):
        self.w = world
        self.configure()

    # -- setup ---------------------------------------------------------------------------------
    def configure(self) -> None:
        """Point the harness at the fake server, telemetry and update checks off."""

    def env(self) -> dict:
        return {}

    def install(self, mcp: bool = True) -> None:
        """``chrollo install <harness>`` (and its MCP tool) against the private HOME."""
        self.w.chrollo("install", self.name)
        if mcp and self.has_mcp:
            self.w.chrollo("install", self.name, "--mcp")

    def uninstall(self, mcp: bool = True) -> None:
        if mcp and self.has_mcp:
            self.w.chrollo("uninstall", self.name, "--mcp")
        self.w.chrollo("uninstall", self.name)

    def config_files(self) -> list:
        """Every file ``chrollo install`` may edit."""
        raise NotImplementedError

    # -- running -------------------------------------------------------------------------------
    def run(self, prompt: str, *, resume: str | None = None, timeout: float = 180, **env) -> Result:
        raise NotImplementedError

    def transcripts(self) -> list:
        """The harness's own session files, as ``chrollo import`` would find them."""
        raise NotImplementedError

    # -- helpers -------------------------------------------------------------------------------
    def _exec(self, cmd: list, timeout: float, **env) -> subprocess.CompletedProcess:
        return self.w.run(cmd, timeout=timeout, **{**self.env(), **env})


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
