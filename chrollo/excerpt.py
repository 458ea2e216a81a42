"""``read``: a window of lines, or the whole turn, around a line of a memory file.

Paths are confined to the vault folders: relative paths resolve against the vault, and a
path (or a symlink) that leads outside every vault is refused.
"""
from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import vault as _vault
from .errors import UsageError
from .session import parse_lines

MAX_WINDOW = 2000


@dataclass
class Excerpt:
    path: str
    line: int | None
    start: int
    end: int
    total_lines: int
    date: str | None
    session_id: str | None
    harness: str | None
    peer: str | None
    lines: list = field(default_factory=list)  # [{"line", "text", "match"}]

    def to_json(self) -> dict:
        return asdict(self)


def split_target(target: str) -> tuple[str, int | None]:
    """``PATH[:LINE]`` → (path, line). A path that exists as given wins over the split."""
    m = re.fullmatch(r"(.+?):(\d+)", target, re.S)  # (re.S: a file name may hold a newline)
    if m and not os.path.exists(target):
        return m.group(1), int(m.group(2))
    return target, None


def read(target: str | os.PathLike, line: int | None = None, *, before: int = 3, after: int = 3,
         turn: bool = False, roots: list | None = None) -> Excerpt:
    """Lines ``line-before .. line+after`` of a memory file (or the turn holding ``line``).

    Without a line, the file from the top (``after`` + 1 lines; ``turn`` → the first turn).
    ``roots`` are the folders reads are confined to (default: the current vault).
    """
    if line is None:
        target, line = split_target(str(target))
    if line is not None and line < 1:
        raise UsageError(f"line numbers start at 1, got {line}", kind="bad_line")
    if before < 0 or after < 0 or before > MAX_WINDOW or after > MAX_WINDOW:
        raise UsageError(f"--before/--after must be between 0 and {MAX_WINDOW}", kind="bad_window")
    roots = [Path(r) for r in (roots or [_vault.memories_dir()])]
    path = _vault.confine(target, roots)
    if not path.is_file():
        raise UsageError(f"not a memory file: {target}", kind="not_a_file")
    try:
        fh = _vault.open_regular(path)
    except OSError as e:
        raise UsageError(f"not a memory file: {target} ({e.strerror})", kind="not_a_file") from None
    with fh:
        lines = fh.read().decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    session = parse_lines(lines, path)
    n = len(lines)
    anchor = min(line, n) if line else None
    if turn:
        ref = anchor or session.body_start
        t = next((t for t in session.turns if t.header_line <= ref <= max(t.last_line, t.header_line)), None)
        if t is None:  # between turns or in the frontmatter: the next turn, else the last
            t = next((t for t in session.turns if t.header_line >= ref), session.turns[-1] if session.turns else None)
        start, end = (t.header_line, t.last_line) if t else (1, n)
    elif anchor:
        start, end = max(1, anchor - before), min(n, anchor + after)
    else:
        start, end = 1, min(n, after + 1)
    stamp = None
    for t in session.turns:
        if t.header_line <= (anchor or start):
            stamp = t.timestamp
    root = next((r for r in roots if r.resolve() in path.parents), roots[0])
    meta = session.meta
    return Excerpt(
        path=str(path), line=anchor, start=start, end=end, total_lines=n,
        date=stamp or (str(meta["date"]) if meta.get("date") else None),
        session_id=None if meta.get("session_id") is None else str(meta["session_id"]),
        harness=None if meta.get("harness") is None else str(meta["harness"]),
        peer=_vault.peer_of(path, root.resolve()),
        lines=[{"line": i, "text": lines[i - 1], "match": i == anchor} for i in range(start, end + 1)])
