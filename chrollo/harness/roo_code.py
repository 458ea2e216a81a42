"""Roo Code (VS Code extension ``rooveterinaryinc.roo-cline``, a fork of Cline): its tasks'
``ui_messages.json`` (import only), read as Cline's (:mod:`chrollo.harness.cline`)."""
from __future__ import annotations

from .cline import home_dir, read_transcript, session_of, transcripts  # noqa: F401  (its reader)

NAME = "roo-code"
EXTENSION = "rooveterinaryinc.roo-cline"
TRANSCRIPTS = transcripts(EXTENSION)
IMPORT_HELP = f"~/.config/*/User/globalStorage/{EXTENSION}/tasks"
