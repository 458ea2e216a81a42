"""The harness registry: one adapter module per harness, and everything about it lives there.

A module of this package is a harness's adapter if it defines ``EVENTS``; its file name is
its ``NAME`` with ``-`` as ``_`` (``claude-code`` → ``claude_code.py``). ``hook``,
``install``, ``doctor``, ``importer`` and the CLI ask this registry and name no harness
(``tests/test_harness_profiles.py``). An adapter holds (docs/design.md §6):

* ``NAME``, ``ALIASES``; ``home_dir()`` (its data folder, honouring its variable);
* ``EVENTS``: ``[(event, timeout)]`` install registers (``None``: the harness's own
  extension fires them), ``HOOKS``: ``"json"`` (a ``hooks`` object in ``hooks_config()``)
  or ``"extension"`` (a file chrollo writes whole: ``extension_text``, and
  ``extension_command(text)`` the command an installed one runs — common's; ``EXTENSION_NOUN``
  what the harness calls it); ``MCP``: ``"json"``,
  ``"toml"`` or None (no MCP client) and ``mcp_config()`` (JSON: servers under ``MCP_KEY``,
  default ``mcpServers``, each ``mcp_entry(command)`` where the harness shapes them otherwise);
  optionally ``OWN_KEYS``: top-level keys the harness adds to that config itself (uninstall
  still gives the user's bytes back);
* ``TRANSCRIPTS``: (the folder under ``home_dir()``, glob patterns) import and doctor read;
* ``read_transcript(path, offset, agent_id) -> Transcript``, ``session_of(path)`` (a file of
  many sessions lists them: ``sessions``, ``cwds``; ``MANY_SESSIONS``: a hook's capture reads
  its own session of it, named by ``agent_id``);
* ``expected_events() -> {normalised event: action}`` where the action is ``recall`` (a
  prompt is about to run: inject memory, catch up), ``capture`` (a turn finished),
  ``subagent`` (a subagent finished) or ``catchup`` (write whatever the transcript holds);
* ``event_of(payload, event) -> HookEvent``, ``reply(text)`` (recall text in the harness's
  channel), ``recall_text(out)`` (its inverse), ``sample_payload(event, …)`` (doctor);
* ``HELP``/``IMPORT_HELP``: its line in ``chrollo install --help``/``chrollo import --help``.

**Import-only adapters** (Cursor, Aider, Cline, …): no ``EVENTS`` but a ``home_dir()`` — chrollo
reads the transcripts the tool keeps (``chrollo import NAME``, and ``import all``) and installs
nothing in it. They hold ``NAME``, ``home_dir()``, ``TRANSCRIPTS`` (or ``find(root)`` where a glob
cannot say where the files are), ``read_transcript``, ``session_of`` and ``IMPORT_HELP``; the
session's frontmatter names the harness by the adapter's ``NAME``. ``session_of`` may list
``sessions`` (one file holding many: a database, a history file) with their ``cwds``.
``jsonl`` (generic JSONL import) has neither ``EVENTS`` nor a home: ``--source`` only.
"""
from __future__ import annotations

import importlib

from .common import normalise_event, plain_id  # noqa: F401  (re-exported)

_found: tuple | None = None


def adapter(name: str):
    """The adapter module of ``name`` (a canonical name, or ``jsonl``)."""
    return importlib.import_module(f".{name.replace('-', '_')}", __name__)


def _scan() -> tuple:
    """(hook harnesses, import-only adapters), each in file-name order."""
    global _found
    if _found is None:
        import pkgutil

        hooks, only = [], []
        for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if not m.name.startswith("_") and m.name != "common":
                mod = adapter(m.name)
                if hasattr(mod, "EVENTS"):
                    hooks.append(mod.NAME)
                elif hasattr(mod, "home_dir") and hasattr(mod, "read_transcript"):
                    only.append(mod.NAME)
        _found = (tuple(hooks), tuple(only))
    return _found


def names() -> tuple:
    """Every harness chrollo has hooks for (an adapter with ``EVENTS``), in file-name order."""
    return _scan()[0]


def import_only() -> tuple:
    """The tools chrollo imports the transcripts of but installs nothing in."""
    return _scan()[1]


def importers() -> tuple:
    """Every source ``chrollo import all`` reads from its default place: hook harnesses first."""
    return names() + import_only()


def profiles() -> list:
    return [adapter(n) for n in names()]


def canonical(name: str) -> str | None:
    """The harness's canonical name (its own or an alias), or None if chrollo has no adapter
    for it. The usual case — the canonical name itself — imports that one adapter only."""
    n = (name or "").strip().lower()
    if n and all(c.isalnum() or c == "-" for c in n) and not n.startswith("-"):
        try:
            mod = adapter(n)
        except ImportError:
            mod = None
        if mod is not None and getattr(mod, "NAME", None) == n and hasattr(mod, "EVENTS"):
            return n
    for mod in profiles():
        if n in mod.ALIASES:
            return mod.NAME
    return None


def home_dir(name: str) -> str:
    """A harness's own data folder, honouring its environment variable."""
    return adapter(name).home_dir()


def __getattr__(attr: str):
    if attr == "HARNESSES":  # (lazily: the hook imports one adapter, not all)
        return names()
    raise AttributeError(attr)
