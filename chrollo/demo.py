"""``chrollo demo``: a guided tour over the bundled sample memory (no setup needed)."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from . import obsidian
from . import vault as _vault
from .errors import ChrolloError
from .excerpt import read
from .output import emit, read_lines, search_lines
from .retrieval import search

DEMO_QUERIES = [
    "flaky test race on CI",
    "rollback staging deploy helm",
    "what happens when redis is down",
    "memory leak in the worker",
]


def sample_vault() -> Path:
    """The sample memory shipped inside the package."""
    return Path(__file__).parent / "data" / "demo"


def copy_sample(dest: Path) -> Path:
    """Copy the sample memory to ``dest`` with owner-only permissions. Nothing in ``dest`` is
    followed: each file is written beside its name and renamed over it (a symlink or a hard
    link there is replaced, never written through or chmod'ed), and a subfolder that is a
    symlink is refused (OSError). The user's ``dest`` itself may be a link they chose."""
    src = sample_vault()
    _vault.ensure_dir(dest)
    top = os.open(dest, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for f in sorted(src.rglob("*.md")):
            rel = f.relative_to(src)
            opened = [top]
            try:
                for part in rel.parts[:-1]:
                    try:
                        os.mkdir(part, _vault.DIR_MODE, dir_fd=opened[-1])
                    except FileExistsError:
                        pass
                    opened.append(os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                          dir_fd=opened[-1]))
                _replace_in(opened[-1], rel.parts[-1], f.read_bytes())
            finally:
                for fd in opened[1:]:
                    os.close(fd)
    finally:
        os.close(top)
    return dest


def _replace_in(folder: int, name: str, data: bytes) -> None:
    """Write ``data`` as ``name`` in the open folder ``folder``: a new owner-only file renamed
    over whatever the name held."""
    tmp = f".{name}.chrollo-{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, _vault.FILE_MODE,
                 dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder)
        except OSError:
            pass
        raise


def older_files(dest: Path) -> list:
    """The sample's files written before format 2 (kept as they were), relative to ``dest``."""
    from .session import file_format

    return [p.relative_to(dest) for p in sorted(dest.rglob("*.md")) if file_format(p) < 2]


KEEP_HINT = "Give --keep a folder you can write to (it is created if missing), e.g. --keep ~/chrollo-sample."


def keep_folder(keep: str) -> Path:
    """``--keep``'s folder, created; a path where no folder can be is a usage error (2), one
    that cannot be created or written a runtime error (1)."""
    dest = Path(os.path.expanduser(keep)).absolute()
    up = dest
    while not up.exists() and up.parent != up:
        up = up.parent
    if not up.is_dir():
        raise ChrolloError("not_a_directory", f"--keep {keep}: {up} is a file, not a folder", KEEP_HINT,
                           exit_code=2)
    try:
        return _vault.ensure_dir(dest.resolve())
    except OSError as e:
        raise ChrolloError("cannot_write", f"--keep {keep}: cannot create the folder ({e.strerror})",
                           KEEP_HINT) from None


def run_demo(keep: str | None = None) -> None:
    tmp = None
    if keep:
        dest = keep_folder(keep)
    else:
        tmp = tempfile.mkdtemp(prefix="chrollo-demo-")
        dest = Path(tmp)
    try:
        try:
            copy_sample(dest)
        except OSError as e:
            raise ChrolloError("cannot_write", f"cannot copy the sample memory to {dest}: {e.strerror}",
                               KEEP_HINT) from None
        say = click.echo
        n = len(list(sample_vault().rglob("*.md")))  # (the sample's: --keep's folder may hold notes)
        say(f"chrollo demo: a sample memory of {n} coding-agent sessions (Claude Code, Codex, "
            f"Gemini CLI, pi;\none of them a subagent's, one received from a mesh peer, one written "
            f"before format 2) copied to {dest}\n")
        first = None
        for q in DEMO_QUERIES:
            res = search(q, dir=dest, limit=2, context=2)
            say(f"$ chrollo search {q} --limit 2 --context 2")
            say(f"  terms: {', '.join(res.terms)}   ({res.total_matches} occurrences)\n")
            emit(search_lines(res))
            first = first or (res.hits[0] if res.hits else None)
        if first:
            rel = Path(first.path).relative_to(dest)
            say(f"$ chrollo read {rel}:{first.line} --turn")
            emit(read_lines(read(first.path, first.line, turn=True, roots=[dest])))
            say("")
        say("What next:\n"
            "  chrollo search QUERY --dir PATH   search any folder of session files\n"
            "  chrollo search QUERY --json       the same hits as one JSON object, for agents\n"
            "  chrollo stats                     what your vault holds\n"
            f"  Your own memory lives in {_vault.memories_dir()}\n"
            "  (`chrollo config vault PATH` moves it; `chrollo init` in a project gives it its own).\n"
            "  To capture a harness's sessions: chrollo install claude-code|codex|gemini|pi\n"
            "  (see 'Hooking up a harness' in the README).")
        if not keep:
            say("  To browse the sample in Obsidian: `chrollo demo --keep DIR`, then open DIR as a vault.")
            return
        say(f"\nThe sample memory stays in {dest}: try `chrollo search QUERY --dir {dest}`.")
        base = dest / obsidian.BASE_NAME
        if obsidian.ensure_base(str(dest)):  # (as for a real vault: never over the user's own)
            view = f"{obsidian.BASE_NAME} lists every session (views: all, by project, by harness)"
        elif base.exists():
            view = f"the {obsidian.BASE_NAME} already there is left as it is"
        else:
            view = f"{obsidian.BASE_NAME} was deleted there before, so it stays deleted"
        say(f"Open {dest} in Obsidian (Open folder as vault) to browse it as notes:\n"
            "  - each session has a title, tags, a start date-time and links to its project, its\n"
            "    previous session, its parent session (the subagent) and its day: the graph view\n"
            "    shows how they connect;\n"
            "  - its turns are headings, listed in the Outline pane;\n"
            f"  - {view}.")
        older = ", ".join(map(str, older_files(dest)))
        if older:
            say(f"  {older} was written before format 2 (no title, tags or links):\n"
                "  older files are kept as they were, and searched and read like the others.")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
