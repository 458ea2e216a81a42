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
    # connections the harness itself makes once its plugin system is on (its own catalogue,
    # not chrollo's doing): the refusing proxy sees them, the scenarios ignore them
    own_traffic: tuple = ()
    package_answers: str | None = None   # what the user types at the install command's prompts
    has_package = True   # chrollo ships a package in the harness's own format (hooks/<harness>)

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

    # -- the native package (issue 31): installed with the harness's own command ---------------
    def install_package(self) -> None:
        """Install chrollo's package for this harness from the local checkout, as a user types it."""
        for cmd in self.package_commands()[0]:
            self._cli(cmd, input=self.package_answers)

    def uninstall_package(self) -> None:
        for cmd in self.package_commands()[1]:
            self._cli(cmd)

    def package_commands(self) -> tuple:
        """([install commands], [uninstall commands]) with the harness's own CLI."""
        raise NotImplementedError

    def leaks(self) -> list:
        """What reached the refusing proxy, less the harness's own catalogue traffic."""
        return [a for a in self.w.proxy.attempts if a.split(" ", 1)[-1] not in self.own_traffic]

    def _cli(self, cmd: list, input: str | None = None) -> subprocess.CompletedProcess:
        p = self.w.run(cmd, timeout=180, input=input, **self.env())
        if p.returncode != 0:
            raise AssertionError(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p

    # -- running -------------------------------------------------------------------------------
    def run(self, prompt: str, *, resume: str | None = None, timeout: float = 180, **env) -> Result:
        raise NotImplementedError

    def transcripts(self) -> list:
        """The harness's own session files, as ``chrollo import`` would find them."""
        raise NotImplementedError

    # -- helpers -------------------------------------------------------------------------------
    def _exec(self, cmd: list, timeout: float, **env) -> subprocess.CompletedProcess:
        return self.w.run(cmd, timeout=timeout, **{**self.env(), **env})


def json_lines(text: str):
    """The JSON values of a harness's JSON-lines output, its other lines (banners, logs) skipped."""
    for line in text.splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
