"""Kilo Code CLI (``@kilocode/cli``, OpenCode underneath): its SQLite database
``~/.local/share/kilo/kilo.db`` (``$XDG_DATA_HOME/kilo``), read as OpenCode's
(:mod:`chrollo.harness.opencode`: the same tables), import only. (Kilo Code's VS Code
extension is :mod:`chrollo.harness.kilo_code`.)"""
from __future__ import annotations

import os

from .opencode import _xdg, read_transcript, session_of  # noqa: F401  (its reader)

NAME = "kilo-cli"
TRANSCRIPTS = ("", ["kilo*.db"])
IMPORT_HELP = "~/.local/share/kilo   ($XDG_DATA_HOME/kilo; kilo*.db)"


def home_dir() -> str:
    """Kilo Code CLI's data folder (its database lives there)."""
    return _xdg("XDG_DATA_HOME", os.path.join(".local", "share"), "kilo")
