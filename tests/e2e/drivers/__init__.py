"""One driver per harness, all on the same kit (``tests/e2e/kit``)."""
from .claude import Claude
from .codex import Codex
from .gemini import Gemini
from .opencode import OpenCode
from .pi import Pi

DRIVERS = {"claude-code": Claude, "codex": Codex, "gemini": Gemini, "pi": Pi, "opencode": OpenCode}
