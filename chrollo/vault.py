"""Where memory lives (docs/design.md §3): which vault is used, peers, confinement, safe reads.

* ``CHROLLO_HOME`` (default ``~/.chrollo``) holds ``memories/``, ``state/``, ``logs/`` (its
  primitives are in :mod:`chrollo.homedir`, re-exported here).
* ``CHROLLO_MEMORIES_DIR`` overrides the vault folder.
* Otherwise the nearest ``.chrollo/`` folder walking up from the cwd (stopping at the
  git root) makes ``<root>/.chrollo/memories`` the project vault — only if the user trusted
  it (``chrollo init``, see :mod:`chrollo.project_trust`); else the global vault:
  ``$CHROLLO_HOME/memories``, or the folder ``chrollo config vault PATH`` set (e.g. inside
  an Obsidian vault; state/, logs and keys stay in ``$CHROLLO_HOME``).
* Files from peers live in ``<vault>/peers/<peer>/``.

Everything chrollo creates is owner-only: folders 0700, files 0600.
"""
from __future__ import annotations

import os
import re
import stat

from .errors import ChrolloError
from .layout import config_file, default_vault
# (re-exported: callers ask the vault module; they live in homedir so that trust can use them too)
from .homedir import (DIR_MODE, FILE_MODE, LOG_MAX, PEERS, append_log, ensure_dir, find_project,  # noqa: F401
                   git_root, home, home_path, iter_session_files, make_private_dirs,
                   nearest_holding, open_lock, read_json, state_key, walk_up, working_folder, write_private)

TYPE_CHECKING = False  # (not typing.TYPE_CHECKING: importing typing costs the hot path too)
if TYPE_CHECKING:
    from pathlib import Path

# A peer's local name (its folder under peers/): 1-32 of a-z, 0-9, '-'; use with fullmatch.
PEER_NAME_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
# Peers are searchable by default (the agent asks, and every hit names its peer); they are not
# injected into prompts unasked until the user says so: ambient recall puts another machine's
# text into the agent's context with no request, the one place a crafted file can steer it.
PEER_DEFAULTS = {"searchable": True, "recall": False, "quota_mb": 512}

# Use with fullmatch (``\Z``, not ``$``: "$" would also accept a trailing newline).
SESSION_NAME_RE = re.compile(r"(\d{4}-\d{2}-\d{2})_(\d{6})_([^/\\\x00-\x1f\x7f]+?)\.md\Z")

# The resolution functions work on plain strings (``*_path``): search, on every recall,
# imports this module, and pathlib would cost it a few milliseconds. The Path-returning
# forms are for everything else.


def project_vault_path(cwd: str | os.PathLike | None = None) -> str | None:
    """``<dir>/.chrollo/memories`` for the nearest ``.chrollo/`` up to the git root — if the
    user trusted it and it is safe to use (:mod:`chrollo.project_trust`); None otherwise."""
    where = os.path.realpath(os.fspath(cwd)) if cwd else working_folder()
    root = find_project(where) if where else None
    if root is None:
        return None
    from . import project_trust as trust

    state, why = trust.status(root)
    if state != trust.TRUSTED:
        trust.note_ignored(root, why)
        return None
    return os.path.join(root, ".chrollo", "memories")


def project_vault(cwd: str | os.PathLike | None = None) -> "Path | None":
    from pathlib import Path

    p = project_vault_path(cwd)
    return Path(p) if p else None


def memories_path(cwd: str | os.PathLike | None = None) -> str:
    """The vault to read and write for ``cwd`` (not created), as a string."""
    return vault_source(cwd)[0]


def vault_source(cwd: str | os.PathLike | None = None) -> tuple[str, str]:
    """(the vault for ``cwd``, what chose it: "CHROLLO_MEMORIES_DIR", "project", "config"
    (``chrollo config vault``) or "default")."""
    env = os.environ.get("CHROLLO_MEMORIES_DIR", "").strip()
    if env:
        return os.path.realpath(os.path.expanduser(env)), "CHROLLO_MEMORIES_DIR"
    project = project_vault_path(cwd)
    if project:
        return project, "project"
    return global_vault_path()


def search_vaults(cwd: str | os.PathLike | None = None) -> list:
    """[(name, folder)] of every vault a search from ``cwd`` can reach, existing ones only:
    the vault in use ("project", or the one CHROLLO_MEMORIES_DIR names) and the global one
    ("global"), once each (``search --all-vaults``)."""
    where, source = vault_source(cwd)
    out = [("project" if source == "project" else "global" if source in ("config", "default") else "memories-dir",
            where)]
    glob = global_vault_path()[0]
    if os.path.realpath(glob) != os.path.realpath(where):
        out.append(("global", glob))
    return [(n, f) for n, f in out if os.path.isdir(f)]


def global_vault_path() -> tuple[str, str]:
    """(the global vault, "config" if ``chrollo config vault`` set it, else "default")."""
    configured = read_json(config_path()).get("vault")
    if isinstance(configured, str) and os.path.isabs(configured):
        return configured, "config"
    return default_vault(), "default"


def config_path() -> str:
    """chrollo's settings (``chrollo config``): ``$CHROLLO_HOME/config.json``."""
    return config_file()


def set_global_vault(path: str | None) -> str:
    """Make ``path`` the global vault (None: back to ``$CHROLLO_HOME/memories``); returns it.

    The folder is created owner-only. It may be anywhere (e.g. inside an Obsidian vault)
    except inside chrollo's home, whose state/, logs and keys never sit among memories.
    """
    import json

    settings = read_json(config_path())
    if path is None:
        settings.pop("vault", None)
        write_private(config_path(), json.dumps(settings, indent=1) + "\n")
        return default_vault()
    real = os.path.realpath(os.path.expanduser(path))
    home = os.path.realpath(home_path())
    inside = real == home or real.startswith(home + os.sep) or home.startswith(real + os.sep)
    if inside and real != os.path.join(home, "memories"):
        raise ChrolloError("bad_vault", f"the vault cannot be chrollo's home or hold it: {real}",
                           f"Pick a folder outside {home} (chrollo keeps its state and keys there).",
                           exit_code=2)
    if os.path.exists(real) and not os.path.isdir(real):
        raise ChrolloError("not_a_directory", f"not a folder: {real}", exit_code=2)
    make_private_dirs(real)
    settings["vault"] = real
    write_private(config_path(), json.dumps(settings, indent=1) + "\n")
    return real


def memories_dir(cwd: str | os.PathLike | None = None) -> "Path":
    """The vault to read and write for ``cwd`` (not created)."""
    from pathlib import Path

    return Path(memories_path(cwd))


def peer_switches() -> dict:
    """{peer name: its settings (``searchable``, ``recall``, ``quota_mb``)} from the mesh's
    config — cheap, for the search and recall hot path, which never import the mesh; an
    unreadable or missing config gives {} (callers apply PEER_DEFAULTS to unknown peers)."""
    import json

    from .layout import mesh_config_file

    def valid(name) -> bool:
        return isinstance(name, str) and bool(PEER_NAME_RE.fullmatch(name)) and name != PEERS

    try:
        with open(mesh_config_file(), encoding="utf-8") as fh:
            data = json.load(fh)
        former = data.get("former") if isinstance(data.get("former"), dict) else {}
        out = {k: dict(PEER_DEFAULTS, **v) for k, v in former.items() if valid(k) and isinstance(v, dict)}
        out.update({p["name"]: dict(PEER_DEFAULTS, **p) for p in data.get("peers", [])
                    if isinstance(p, dict) and valid(p.get("name"))})
        return out
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return {}


def hidden_peer(path, vault) -> str | None:
    """The peer whose files are switched off for search (``--no-searchable``) if ``path`` is
    one of them (``<vault>/peers/<name>/…``), else None."""
    rel = os.path.relpath(os.path.realpath(path), os.path.realpath(vault)).split(os.sep)
    if len(rel) < 3 or rel[0] != PEERS:
        return None
    s = peer_switches().get(rel[1])
    return rel[1] if s is not None and not s["searchable"] else None


def peer_of(path: str | os.PathLike, vault: str | os.PathLike) -> str | None:
    """The peer a file came from (``<vault>/peers/<name>/...``), or None if local."""
    prefix = os.path.join(os.fspath(vault), PEERS, "")
    path = os.fspath(path)
    if not path.startswith(prefix):
        return None
    parts = path[len(prefix):].split(os.sep)
    return parts[0] if len(parts) > 1 and parts[0] else None


def open_regular(path):
    """A memory file opened for reading (binary) — only if it is a regular file and not a
    symlink. It is opened non-blocking, so a FIFO or a device named ``*.md`` is refused
    (OSError "not a regular file") instead of hanging the reader."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            import errno

            raise OSError(errno.EINVAL, "not a regular file (skipped)", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def pid_alive(pid: int) -> bool:
    """Is process ``pid`` running (for a temporary file named by its writer's pid: a live
    writer's is left alone, a dead one's is swept)? A process of another user counts as alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _project_of_vault(path) -> str | None:
    """The project whose ``.chrollo/memories`` ``path`` is, or None."""
    p = os.path.normpath(os.fspath(path))
    tail = os.sep + os.path.join(".chrollo", "memories")
    return p[:-len(tail)] or os.sep if p.endswith(tail) else None


def require_dir(path, what: str = "vault"):
    """Raise a clear error unless ``path`` is an existing folder; returns it."""
    if not os.path.exists(path):
        project = _project_of_vault(path)
        if project:  # (a trusted project's vault, deleted since: init makes it again)
            raise ChrolloError("vault_not_found", f"{what} not found: {path} (this project's vault)",
                               f"Run `chrollo init {project}` to create it again, or `chrollo init --untrust "
                               f"{project}` to use the global vault here.")
        raise ChrolloError(
            "vault_not_found", f"{what} not found: {path}",
            "Run `chrollo demo` to try chrollo on a sample memory, `chrollo install <harness>` "
            "to start capturing, or point --dir / CHROLLO_MEMORIES_DIR at a memories folder.")
    if not os.path.isdir(path):
        raise ChrolloError("not_a_directory", f"{what} is not a folder: {path}")
    return path


def confine(path: str | os.PathLike, roots: list) -> "Path":
    """Resolve ``path`` (absolute, or relative to a root) and require it inside a root.

    Symlinks are resolved before the check, so a link pointing out of a vault is refused.
    """
    from pathlib import Path

    roots = [Path(r) for r in roots]
    p = Path(os.path.expanduser(path))
    candidates = [p] if p.is_absolute() else [Path.cwd() / p] + [r / p for r in roots]
    real_roots = [r.resolve() for r in roots]
    for c in candidates:
        if not c.exists():
            continue
        real = c.resolve()
        for r in real_roots:
            if real == r or r in real.parents:
                return real
        raise ChrolloError("outside_vault", f"refusing to read outside the memory folders: {path}",
                           "chrollo read only opens files inside a vault (symlinks are resolved first).",
                           exit_code=1)
    raise ChrolloError("file_not_found", f"no such memory file: {path}",
                       "Pass a path printed by `chrollo search` (absolute, or relative to the vault).")
