"""``chrollo demo``: a guided tour over the bundled sample memory (no setup needed)."""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import click

from . import vault as _vault
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
    """Copy the sample memory to ``dest`` with owner-only permissions."""
    src = sample_vault()
    for f in sorted(src.rglob("*.md")):
        target = dest / f.relative_to(src)
        _vault.ensure_dir(target.parent)
        shutil.copyfile(f, target)
        target.chmod(_vault.FILE_MODE)
    return dest


def run_demo(keep: str | None = None) -> None:
    tmp = None
    if keep:
        dest = _vault.ensure_dir(Path(keep).expanduser().resolve())
    else:
        tmp = tempfile.mkdtemp(prefix="chrollo-demo-")
        dest = Path(tmp)
    try:
        copy_sample(dest)
        say = click.echo
        n = len(list(dest.rglob("*.md")))
        say(f"chrollo demo: a sample memory of {n} coding-agent sessions (Claude Code, Codex, "
            f"Gemini CLI, pi,\none of them received from a mesh peer) copied to {dest}\n")
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
            "  (set CHROLLO_MEMORIES_DIR, or create .chrollo/ in a project, to move it).\n"
            "  To capture a harness's sessions, see 'Hooking up a harness' in the README.")
        if keep:
            say(f"\nThe sample memory stays in {dest}: try `chrollo search QUERY --dir {dest}`.")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
