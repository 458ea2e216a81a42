"""One driver per harness, all on the same kit (``tests/e2e/kit``)."""
from .claude import Claude
from .codex import Codex
from .copilot import Copilot
from .gemini import Gemini
from .opencode import OpenCode
from .pi import Pi
from .qwen import Qwen

DRIVERS = {"claude-code": Claude, "codex": Codex, "gemini": Gemini, "pi": Pi, "qwen-code": Qwen, "copilot": Copilot,
           "opencode": OpenCode}
