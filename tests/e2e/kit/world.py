"""One harness run's private world: a HOME of its own, a project folder, the fake model server,
the refusing proxy, chrollo's CLI and vault, and the environment the harness runs in.

Nothing of the machine's own HOME, keys or config reaches the harness: its environment is
built from scratch (PATH, locale, the private HOME and XDG folders, the fake endpoints,
telemetry and update checks off, every proxy variable pointing at :class:`RefusingProxy`).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .server import FakeModelServer, RefusingProxy

ROOT = Path(__file__).resolve().parents[3]


class World:
    def __init__(self, tmp: Path, bin_dir: Path):
        self.tmp = Path(tmp)
        self.home = self.tmp / "home"
        self.project = self.tmp / "project"
        self.chrollo_home = self.home / ".chrollo"
        self.vault = self.chrollo_home / "memories"
        for d in (self.home, self.project):
            d.mkdir(parents=True, exist_ok=True)
        self.bin_dir = Path(bin_dir)
        self.server = FakeModelServer(self.tmp / "requests.jsonl").__enter__()
        self.proxy = RefusingProxy()
        self.extra_env: dict = {}

    def close(self) -> None:
        self.server.__exit__(None, None, None)
        self.proxy.close()

    # ------------------------------------------------------------------ environment
    def env(self, **extra) -> dict:
        path = [str(self.bin_dir), str(Path(sys.executable).parent), os.path.dirname(shutil.which("node") or "/usr/bin/node"),
                "/usr/local/bin", "/usr/bin", "/bin"]
        env = {
            "HOME": str(self.home), "USER": "e2e", "LOGNAME": "e2e", "SHELL": "/bin/bash",
            "PATH": os.pathsep.join(dict.fromkeys(path)), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "TERM": "dumb", "NO_COLOR": "1", "TZ": os.environ.get("TZ", "UTC"),
            "TMPDIR": str(self.tmp / "tmp"),
            "XDG_CONFIG_HOME": str(self.home / ".config"), "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"), "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "CHROLLO_HOME": str(self.chrollo_home), "PYTHONPATH": str(ROOT),
            "DO_NOT_TRACK": "1", "DISABLE_TELEMETRY": "1",
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        }
        for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            env[k] = self.proxy.url
        (self.tmp / "tmp").mkdir(exist_ok=True)
        env.update(self.extra_env)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def run(self, cmd: list, *, timeout: float = 180, cwd=None, input=None, **env) -> subprocess.CompletedProcess:
        return subprocess.run([str(c) for c in cmd], cwd=str(cwd or self.project), env=self.env(**env),
                              capture_output=True, text=True, timeout=timeout,
                              input=input, stdin=None if input is not None else subprocess.DEVNULL)

    def chrollo(self, *args, check: bool = True, **env) -> subprocess.CompletedProcess:
        p = self.run([sys.executable, "-m", "chrollo", *args], timeout=120, **env)
        if check and p.returncode != 0:
            raise AssertionError(f"chrollo {' '.join(map(str, args))} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
        return p

    # ------------------------------------------------------------------ what the run left
    def vault_files(self, vault: Path | None = None) -> dict:
        v = Path(vault or self.vault)
        return {p.name: p.read_text("utf-8") for p in sorted(v.glob("*.md"))} if v.is_dir() else {}

    def vault_text(self) -> str:
        return "\n".join(self.vault_files().values())

    def hook_log(self) -> str:
        log = self.chrollo_home / "logs" / "hooks.log"
        return log.read_text("utf-8", "replace") if log.exists() else ""

    def requests_since(self, mark: int) -> list:
        return self.server.requests[mark:]

    def dump(self) -> str:
        """What to print when a scenario fails: the request log's summary and the vault."""
        lines = [f"{r['n']} {r['method']} {r['path']} {r.get('wire')} aux={r.get('aux')} "
                 f"tools={len(r.get('tools') or [])} results={len(r.get('results') or [])} "
                 f"roles={_roles(r.get('body'))} reply={json.dumps(r.get('reply'))[:300]}"
                 + "".join(f"\n  result {json.dumps(list(res))[:200]}" for res in r.get("results") or [])
                 for r in self.server.requests]
        return "\n".join(lines + ["--- proxy: " + ", ".join(self.proxy.attempts), "--- hooks.log:", self.hook_log()[-3000:],
                                  "--- vault:"] + [f"## {k}\n{v}" for k, v in self.vault_files().items()])


def _roles(body) -> str:
    """The roles of a chat request's messages, in order (``user,assistant,tool,…``): where a
    scenario misreads a request, the shape it had."""
    msgs = body.get("messages") if isinstance(body, dict) else None
    return ",".join(str(m.get("role")) for m in msgs if isinstance(m, dict)) if isinstance(msgs, list) else "-"
