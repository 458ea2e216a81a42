"""Project vaults are opted in (docs/design.md §3): a ``.chrollo/`` folder is used only once trusted.

A cloned repository can ship a ``.chrollo/`` folder. If chrollo used it as is, the repo's
planted "memories" would be injected into the agent's prompt and the user's conversation
would be written into the repo's work tree, one ``git add`` away from being pushed. So, the
way direnv's ``allow`` and mise's ``trust`` work, a project vault counts only after
``chrollo init`` ran in that project: it records the project's real path in
``$CHROLLO_HOME/trusted-projects.json`` — outside any repository, where a repository cannot
write. (Trust is by path, as with mise: ``chrollo init --untrust`` before reusing the path for
something else; ``chrollo init --list`` shows what is trusted.)

Even when trusted, a project vault is refused — the global vault is used instead — if
``.chrollo`` or ``.chrollo/memories`` is a symlink (chrollo never follows a link out of a
vault) or is not owned by the user. An ignored project vault is logged once (hooks.log) and
named by ``chrollo doctor`` with the command that trusts it.

Stdlib only and cheap: :func:`status` runs on every hook call that finds a ``.chrollo``.
"""
from __future__ import annotations

import json
import os
import stat

from . import homedir as _homedir
from .errors import ChrolloError
from .layout import ignored_project_marker, trusted_projects_file

TRUSTED, UNTRUSTED, UNSAFE = "trusted", "untrusted", "unsafe"


def _file() -> str:
    return trusted_projects_file()


def _records() -> dict:
    projects = _homedir.read_json(_file()).get("projects")
    return projects if isinstance(projects, dict) else {}


def _save(records: dict) -> None:
    _homedir.write_private(_file(), json.dumps({"projects": records}, indent=1, sort_keys=True) + "\n")


def unsafe_reason(root: str) -> str | None:
    """Why ``<root>/.chrollo`` cannot be a vault whatever the trust (None when it can)."""
    uid = os.getuid()
    for rel in (".chrollo", os.path.join(".chrollo", "memories")):
        p = os.path.join(root, rel)
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return None if rel != ".chrollo" else f"{p} does not exist"
        except OSError as e:
            return f"{p}: {e.strerror}"
        if stat.S_ISLNK(st.st_mode):
            return f"{p} is a symlink (to {os.readlink(p)}): chrollo never follows a link out of a vault"
        if not stat.S_ISDIR(st.st_mode):
            return f"{p} is not a folder"
        if st.st_uid != uid:
            return f"{p} belongs to another user (uid {st.st_uid})"
    return None


def status(root: str) -> tuple[str, str]:
    """(state, why) of the project vault ``<root>/.chrollo/memories``; ``root`` is a real path."""
    why = unsafe_reason(root)
    if why:
        return UNSAFE, why
    if not isinstance(_records().get(root), dict):
        return UNTRUSTED, f"{root}/.chrollo is not trusted"
    return TRUSTED, ""


def note_ignored(root: str, why: str) -> None:
    """Log an ignored project vault — once per project (a marker in state/), not per prompt."""
    marker = ignored_project_marker(root)
    if os.path.exists(marker):
        return
    _homedir.append_log("hooks", f"- - ignoring the project vault {root}/.chrollo/memories ({why}); "
                               f"the global vault is used. Trust it with: cd {root} && chrollo init")
    try:
        _homedir.write_private(marker, why + "\n")
    except OSError:
        pass


def _forget_note(root: str) -> None:
    try:
        os.unlink(ignored_project_marker(root))
    except OSError:
        pass


def _here() -> str:
    here = _homedir.working_folder()
    if here is None:
        raise ChrolloError("not_a_directory", "the working folder no longer exists (it was deleted)",
                           "cd into the project's folder, or name it: chrollo init PATH.", exit_code=2)
    return here


def init_root(path: str | None = None) -> str:
    """The project ``chrollo init`` acts on from ``path``: the folder of the nearest
    ``.chrollo`` up to the git root, else the git root, else ``path`` itself (real paths)."""
    start = os.path.realpath(path) if path else _here()
    if not os.path.isdir(start):
        raise ChrolloError("not_a_directory", f"not a folder: {start}", exit_code=2)
    return _homedir.find_project(start) or _homedir.git_root(start) or start


def trust(path: str | None = None) -> dict:
    """Make the project at ``path`` use its own vault: create ``.chrollo/memories`` (owner-only,
    with a ``.gitignore`` that keeps it out of git) if missing, and record the trust."""
    root = init_root(path)
    if root == os.path.realpath(os.path.expanduser("~")):
        raise ChrolloError("not_a_project", "your home folder is not a project: outside projects "
                           "the global vault ($CHROLLO_HOME/memories) is used",
                           "Run `chrollo init` inside a project folder.", exit_code=2)
    dot = os.path.join(root, ".chrollo")
    created = not os.path.lexists(dot)
    why = unsafe_reason(root) if not created else None
    if why:
        raise ChrolloError("unsafe_project_vault", f"refusing to trust {dot}: {why}",
                           "Replace it with a real folder you own, then run `chrollo init` again.")
    if created:
        os.mkdir(dot, _homedir.DIR_MODE)
        # The user's conversations are private: never one `git add .` away from a push.
        fd = os.open(os.path.join(dot, ".gitignore"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, _homedir.FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:  # (owner-only, like all chrollo writes)
            fh.write("# chrollo: keep these conversations out of git (delete to share them)\n*\n")
    vault = os.path.join(dot, "memories")
    if not os.path.lexists(vault):
        os.mkdir(vault, _homedir.DIR_MODE)
    existing = 0 if created else sum(1 for _ in _homedir.iter_session_files(vault))
    records = _records()
    records[root] = {"vault": vault}
    _save(records)
    _forget_note(root)
    return {"project": root, "vault": vault, "created": created, "existing_files": existing}


def untrust(path: str | None = None) -> dict:
    """Stop using the project vault at ``path`` (its files stay where they are)."""
    start = os.path.realpath(path) if path else _here()
    records = _records()
    root = start if start in records else init_root(start)
    was = records.pop(root, None) is not None
    if was:
        _save(records)
    _forget_note(root)
    return {"project": root, "was_trusted": was}


def trusted() -> list:
    """Every trusted project with its state now (trusted, unsafe, or missing)."""
    out = []
    for root, rec in sorted(_records().items()):
        vault = os.path.join(root, ".chrollo", "memories")
        if not os.path.lexists(os.path.join(root, ".chrollo")):
            state, why = "missing", f"{root}/.chrollo no longer exists"
        else:
            state, why = status(root)
        out.append({"project": root, "vault": vault, "status": state, "detail": why})
    return out
