"""chrollo as each harness's own package — the Claude Code plugin, the Codex plugin, the Gemini
CLI extension, the pi package, the OpenCode plugin… (``hooks/README.md``): which one is
installed, what its hooks and MCP server run, and whether the ``chrollo`` they look for is
there. The harness facts (where each keeps its packages, how their files name their folder)
live in each adapter's ``package()``.

The packages run ``chrollo`` through ``bin/chrollo-hook`` (pi, OpenCode: their extension's
code), which looks for it as :func:`findable_cli` does and sets ``CHROLLO_VIA=package`` (not
pi's; see :func:`stands_down`).
"""
from __future__ import annotations

import os

# chrollo is not on PyPI: the CLI comes from its repository (README, Install); the packages' shim
# and pi's extension say this word for word (tests/test_packages.py)
HOW_TO_INSTALL = "uv tool install . | pipx install . | pip install . in a clone of chrollo's repository, or uv tool install git+<its URL>"
VIA_ENV = "CHROLLO_VIA"


def find(harness: str) -> dict | None:
    """chrollo's package as installed in ``harness`` (see ``harness.common.package_record``), or None."""
    from .harness import adapter

    try:
        return adapter(harness).package()
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def findable_cli() -> str | None:
    """The chrollo the packages' shim runs: ``$CHROLLO_BIN``, else ``chrollo`` on PATH, else
    ``~/.local/bin/chrollo`` (where uv tool and pipx install it); None if there is none. (As
    the shim: PATH's absolute entries only, see executables.which.)"""
    from .executables import which

    local = os.path.expanduser(os.path.join("~", ".local", "bin", "chrollo"))
    for c in (os.environ.get("CHROLLO_BIN"), which("chrollo"), local if os.path.isabs(local) else None):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def expand(text: str, pkg: dict) -> str:
    """A string from the package's files with its folder filled in, as the harness does."""
    for key, value in pkg["placeholders"].items():
        if key == "./":
            text = value + text[2:] if text.startswith("./") else text
        else:
            text = text.replace(key, value)
    return text


def hook_commands(pkg: dict) -> dict:
    """{event: shell command} of the package's ``hooks/hooks.json``, folder filled in."""
    from .homedir import read_json

    hooks = read_json(os.path.join(pkg["root"], "hooks", "hooks.json")).get("hooks")
    out = {}
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for g in groups if isinstance(groups, list) else []:
            for h in (g.get("hooks") if isinstance(g, dict) else None) or []:
                if isinstance(h, dict) and isinstance(h.get("command"), str) and "chrollo-hook" in h["command"]:
                    out[event] = expand(h["command"], pkg)
    return out


def mcp_command(pkg: dict) -> list | None:
    """The command line of the package's ``chrollo`` MCP server, folder filled in (a package
    whose code adds the server, ``mcp_command``: the chrollo that code finds)."""
    from .homedir import read_json

    if pkg.get("mcp_command"):
        cmd = pkg["mcp_command"]
        return [findable_cli() or cmd[0], *cmd[1:]] if cmd[0] == "chrollo" else list(cmd)

    servers = read_json(os.path.join(pkg["root"], pkg.get("mcp_file") or ".mcp.json")).get("mcpServers")
    entry = servers.get("chrollo") if isinstance(servers, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    return [expand(entry["command"], pkg), *(expand(str(a), pkg) for a in args)]


def stands_down(harness: str) -> bool:
    """True for a hook the package ran (``CHROLLO_VIA=package``) while ``chrollo install``'s
    hooks for the same harness are in its user config too: those run, the package's do
    nothing — one capture and one recall per prompt, never two. (pi's extension does not set
    it: loaded twice, it runs once. OpenCode's package does: OpenCode loads both plugins.)"""
    if os.environ.get(VIA_ENV) != "package":
        return False
    from .harness import adapter

    try:
        mod = adapter(harness)
        with open(mod.hooks_config(), encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError, ImportError):
        return False
    # an extension harness's file (OpenCode's plugin) is code, not a hooks config: chrollo's
    # mark in it says it is chrollo's (as install.installed_events reads it), and chrollo
    # install's names chrollo by absolute path — the shipped file unchanged is the package itself
    if mod.HOOKS == "extension":
        return mod.EXTENSION_MARK in text and mod.extension_command(text) != ["chrollo"]
    # every command chrollo install writes ends so (install._is_ours): a config without it holds
    # none, and the question costs this hook no import of chrollo.install (~50 ms a prompt)
    if f"--harness {harness}" not in text:
        return False
    from .install import installed_events

    return bool(installed_events(harness, text))


def describe(pkg: dict) -> dict:
    """The package as ``chrollo doctor --json`` shows it."""
    from . import __version__

    return {"id": pkg["id"], "root": pkg["root"], "version": pkg["version"], "enabled": pkg["enabled"],
            "cli_version": __version__, "remove": pkg["remove"]}



def mcp_stands_down() -> bool:
    """True for the package's MCP server (``CHROLLO_VIA=package``, ``CHROLLO_HARNESS``) where
    ``chrollo install`` registered chrollo's server for the same harness: it lists no tools,
    so the model is offered read_memory once — unless the harness loads the package's server
    instead of the user's same-named one (an adapter's ``PACKAGE_MCP_REPLACES_USERS``)."""
    harness = os.environ.get("CHROLLO_HARNESS")
    if os.environ.get(VIA_ENV) != "package" or not harness:
        return False
    from .errors import ChrolloError
    from .harness import adapter
    from .install import mcp_config_path, registered_server

    try:
        if getattr(adapter(harness), "PACKAGE_MCP_REPLACES_USERS", False):
            return False   # (the user's server of that name is not loaded at all: this one is offered)
    except ImportError:   # (a harness name chrollo does not know)
        return False

    try:
        with open(mcp_config_path(harness), encoding="utf-8") as fh:
            return registered_server(harness, fh.read()) is not None
    except (OSError, UnicodeDecodeError, ChrolloError):
        return False
