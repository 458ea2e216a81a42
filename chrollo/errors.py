"""The one exception type the library raises for expected failures.

Every ChrolloError maps onto the CLI's error envelope
``{"error": {"kind", "message", "hint"}}`` and an exit code (1 runtime, 2 usage).
"""
from __future__ import annotations


class ChrolloError(Exception):
    """An expected failure with a stable machine-readable ``kind``."""

    exit_code = 1

    def __init__(self, kind: str, message: str, hint: str = "", exit_code: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def as_dict(self) -> dict:
        return {"error": {"kind": self.kind, "message": self.message, "hint": self.hint}}


class UsageError(ChrolloError):
    """Bad arguments: exit code 2."""

    exit_code = 2

    def __init__(self, message: str, hint: str = "", kind: str = "usage"):
        super().__init__(kind, message, hint)
