"""Where memory lives (DESIGN §3): home, vault resolution, listing, confinement.

* ``CHROLLO_HOME`` (default ``~/.chrollo``) holds ``memories/``, ``state/``, ``logs/``.
* ``CHROLLO_MEMORIES_DIR`` overrides the vault folder.
* Otherwise the nearest ``.chrollo/`` folder walking up from the cwd (stopping at the
  git root) makes ``<root>/.chrollo/memories`` the project vault; else the global vault.
* Files from peers live in ``<vault>/peers/<peer>/``.

Everything chrollo creates is owner-only: folders 0700, files 0600.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import ChrolloError

DIR_MODE = 0o700
FILE_MODE = 0o600
PEERS = "peers"
SESSION_NAME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})_(\d{6})_([^/\\]+?)\.md$")


def home() -> Path:
    """chrollo's home folder (not created)."""
    env = os.environ.get("CHROLLO_HOME", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".chrollo"


def state_dir() -> Path:
    return home() / "state"


def logs_dir() -> Path:
    return home() / "logs"


def _git_root(start: Path) -> Path | None:
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return None


def project_vault(cwd: str | os.PathLike | None = None) -> Path | None:
    """``<dir>/.chrollo/memories`` for the nearest ``.chrollo/`` up to the git root."""
    start = Path(cwd or os.getcwd()).resolve()
    stop = _git_root(start)
    for d in (start, *start.parents):
        if (d / ".chrollo").is_dir() and d != Path.home():
            return d / ".chrollo" / "memories"
        if stop is not None and d == stop:
            break
    return None


def memories_dir(cwd: str | os.PathLike | None = None) -> Path:
    """The vault to read and write for ``cwd`` (not created)."""
    env = os.environ.get("CHROLLO_MEMORIES_DIR", "").strip()
    if env:
        return Path(env).expanduser().resolve()
    return project_vault(cwd) or home() / "memories"


def ensure_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents owner-only; tighten ``path`` if it exists."""
    missing = []
    p = path
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(DIR_MODE)
    except OSError:
        pass
    return path


def peer_of(path: Path, vault: Path) -> str | None:
    """The peer a file came from (``<vault>/peers/<name>/...``), or None if local."""
    try:
        rel = path.relative_to(vault).parts
    except ValueError:
        return None
    return rel[1] if len(rel) > 2 and rel[0] == PEERS else None


def iter_session_files(vault: Path, peers: bool = True):
    """Every ``*.md`` session file under the vault, sorted, symlinks skipped."""
    out = []
    for root, dirs, files in os.walk(vault):
        rootp = Path(root)
        dirs[:] = sorted(d for d in dirs if not (rootp / d).is_symlink()
                         and not d.startswith(".")
                         and (peers or not (rootp == vault and d == PEERS)))
        for f in sorted(files):
            p = rootp / f
            if f.endswith(".md") and not p.is_symlink():
                out.append(p)
    return out


def require_dir(path: Path, what: str = "vault") -> Path:
    """Raise a clear error unless ``path`` is an existing folder."""
    if not path.exists():
        raise ChrolloError(
            "vault_not_found", f"{what} not found: {path}",
            "Run `chrollo demo` to try chrollo on a sample memory, `chrollo install <harness>` "
            "to start capturing, or point --dir / CHROLLO_MEMORIES_DIR at a memories folder.")
    if not path.is_dir():
        raise ChrolloError("not_a_directory", f"{what} is not a folder: {path}")
    return path


def confine(path: str | os.PathLike, roots: list[Path]) -> Path:
    """Resolve ``path`` (absolute, or relative to a root) and require it inside a root.

    Symlinks are resolved before the check, so a link pointing out of a vault is refused.
    """
    p = Path(path).expanduser()
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
