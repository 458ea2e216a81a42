"""chrollo: verbatim, grep-first memory for coding agents.

Public API (the CLI only wraps these)::

    from chrollo import search, read, stats, append_turns, read_session
    result = search("flaky test retry", limit=5)
    for hit in result.hits:
        print(hit.path, hit.line, hit.date)
"""
from .errors import ChrolloError, UsageError
from .excerpt import Excerpt, read
from .search import Hit, SearchResult, search
from .session import SessionMeta, SessionWriter, ToolCall, Turn, append_turns, read_session
from .stats import Stats, stats
from .vault import home, memories_dir

__version__ = "0.1.0"
__all__ = ["search", "read", "stats", "append_turns", "read_session", "SessionMeta", "SessionWriter",
           "Turn", "ToolCall", "Hit", "SearchResult", "Excerpt", "Stats", "ChrolloError",
           "UsageError", "home", "memories_dir", "__version__"]
