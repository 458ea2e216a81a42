"""One adapter per harness; each turns payloads and transcript files into the same units.

Every adapter module has ``NAME``, ``read_transcript(path, offset, agent_id) -> Transcript``,
``session_of(path) -> {"session_id", …}`` (which session a transcript file holds; import
uses it) and ``expected_events() -> {normalised event: action}`` where the action is ``recall``
(a prompt is about to run: inject memory, catch up), ``capture`` (a turn finished),
``subagent`` (a subagent finished) or ``catchup`` (write whatever the transcript holds).
"""
from __future__ import annotations

import importlib

HARNESSES = ("claude-code", "codex", "gemini", "pi")
ALIASES = {"claude": "claude-code", "claudecode": "claude-code", "claude_code": "claude-code",
           "codex-cli": "codex", "gemini-cli": "gemini"}
_MODULES = {"claude-code": "claude_code", "codex": "codex", "gemini": "gemini", "pi": "pi", "jsonl": "jsonl"}


def canonical(name: str) -> str | None:
    """The harness's canonical name, or None if chrollo has no adapter for it."""
    n = (name or "").strip().lower()
    n = ALIASES.get(n, n)
    return n if n in HARNESSES else None


_PLAIN_ID = None


def plain_id(value) -> bool:
    """A session or agent id chrollo accepts: 1-200 of letters, digits and ``._@:+-``, starting
    with a letter or digit, no ``..`` — nothing that could name a path or break a header."""
    global _PLAIN_ID
    if _PLAIN_ID is None:
        import re

        _PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@:+-]{0,199}")
    return isinstance(value, str) and bool(_PLAIN_ID.fullmatch(value)) and ".." not in value


def adapter(name: str):
    return importlib.import_module(f".{_MODULES[name]}", __name__)


def normalise_event(event: str) -> str:
    """``UserPromptSubmit``, ``user-prompt-submit`` and ``user_prompt_submit`` are one event."""
    return "".join(ch for ch in str(event).lower() if ch.isalnum())


def home_dir(name: str) -> str:
    """A harness's own data folder, honouring its environment variable:
    ``$CLAUDE_CONFIG_DIR`` or ~/.claude, ``$CODEX_HOME`` or ~/.codex, ``$GEMINI_CLI_HOME/.gemini``
    or ~/.gemini (Gemini CLI's variable names a home, not the folder), ``$PI_CODING_AGENT_DIR``
    or ~/.pi/agent."""
    import os

    if name == "gemini":
        base = os.environ.get("GEMINI_CLI_HOME", "").strip()
        return os.path.join(os.path.expanduser(base) if base else os.path.expanduser("~"), ".gemini")
    env, default = {"claude-code": ("CLAUDE_CONFIG_DIR", ".claude"), "codex": ("CODEX_HOME", ".codex"),
                    "pi": ("PI_CODING_AGENT_DIR", os.path.join(".pi", "agent"))}[name]
    value = os.environ.get(env)
    return os.path.expanduser(value) if value else os.path.join(os.path.expanduser("~"), default)
