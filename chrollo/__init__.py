"""chrollo: verbatim, grep-first memory for coding agents.

Public API (the CLI only wraps these)::

    from chrollo import search, read, stats, append_turns, read_session
    result = search("flaky test retry", limit=5)
    for hit in result.hits:
        print(hit.path, hit.line, hit.date)

Names are loaded on first use, so ``import chrollo`` (and the CLI's start-up) stays cheap.
"""
__version__ = "0.1.0"

_EXPORTS = {
    "search": "retrieval", "Hit": "retrieval", "SearchResult": "retrieval",
    "read": "excerpt", "Excerpt": "excerpt",
    "stats": "vaultstats", "Stats": "vaultstats",
    "append_turns": "capture", "read_session": "session", "SessionMeta": "session",
    "SessionWriter": "session", "Turn": "session", "ToolCall": "session",
    "ChrolloError": "errors", "UsageError": "errors",
    "home": "vault", "memories_dir": "vault",
}
__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name):
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'chrollo' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
