"""One driver per harness, all on the same kit (``tests/e2e/kit``)."""
from .claude import Claude

DRIVERS = {"claude-code": Claude}
