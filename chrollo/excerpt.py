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
from .errors import ChrolloError, UsageError
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
    m = re.fullmatch(r"(.+\.md):([^/]*)", target, re.S)
    if m and not os.path.exists(target):  # FILE.md:abc, FILE.md:-1 — the line is wrong, not the file
        line = m.group(2).strip()
        said = line if re.fullmatch(r"-\d+", line) else repr(m.group(2))
        raise UsageError(f"not a line number: {said} (lines start at 1)",
                         "Give PATH:LINE as `chrollo search` prints it, e.g. FILE.md:42.", kind="bad_line")
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
    if line and line > n:  # (it was the last line, silently: a line that is not there is an error)
        raise UsageError(f"{path.name} has {n} line{'s' * (n != 1)}; no line {line}",
                         "Give a line `chrollo search` printed, or read the whole session.", kind="bad_line")
    anchor = line or None
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


class Conversation:
    """A session's turns, for reading (``chrollo read SESSION``): ``turns`` are the chosen
    ones (all, ``--turn N`` or ``--last N``), each with its file lines [line, last_line]."""

    def __init__(self, path: str, meta: dict, peer, lines: list, turns: list, total_turns: int,
                 raw: bytes, title: str | None):
        from .catalog import project_of

        self.path, self.peer, self.lines, self.turns = path, peer, lines, turns
        self.total_turns, self.raw, self.title = total_turns, raw, title
        s = (lambda v: None if v is None else str(v))
        self.session_id, self.harness = s(meta.get("session_id")), s(meta.get("harness"))
        self.project = project_of(meta) or None
        self.started = s(meta.get("started") or meta.get("date"))

    def to_json(self) -> dict:
        parsed = parse_lines(self.lines, Path(self.path)).turns
        turns = [{"n": t["n"], "role": t["role"], "timestamp": t["timestamp"], "line": t["line"],
                  "last_line": t["last_line"], "text": parsed[t["n"] - 1].text, "tools": parsed[t["n"] - 1].tools}
                 for t in self.turns]
        return {"path": self.path, "session_id": self.session_id, "title": self.title,
                "project": self.project, "harness": self.harness, "peer": self.peer,
                "started": self.started, "total_turns": self.total_turns, "turns": turns}

    def raw_bytes(self) -> bytes:
        """The file's bytes — only the chosen turns' lines when some were left out."""
        if len(self.turns) == self.total_turns:
            return self.raw
        parts = self.raw.split(b"\n")
        return b"".join(b"\n".join(parts[t["line"] - 1:t["last_line"]]) + b"\n" for t in self.turns)


def conversation(target: str, *, turn: int | None = None, last: int | None = None,
                 roots: list | None = None) -> Conversation:
    """The session ``target`` names (a file, an id or an id prefix: :func:`chrollo.catalog.find`),
    whole, or only turn ``turn`` (1-based) or the ``last`` N."""
    from .catalog import find

    if turn is not None and last is not None:
        raise UsageError("--turn and --last cannot be used together", kind="bad_usage")
    if last is not None and last < 1:
        raise UsageError(f"--last takes a number of turns from 1 on, got {last}", kind="bad_window")
    roots = [Path(r) for r in (roots or [_vault.memories_dir()])]
    path = Path(find(str(target), roots))
    try:
        with _vault.open_regular(path) as fh:
            raw = fh.read()
    except OSError as e:
        raise UsageError(f"not a memory file: {target} ({e.strerror})", kind="not_a_file") from None
    lines = raw.decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    meta, turns = _turns(lines, path)
    total = len(turns)
    title = meta.get("title")
    if not (isinstance(title, str) and title.strip()):
        first = next((t for t in turns if t["role"] == "user"), None)
        body = [x.strip() for x in lines[first["line"]:first["last_line"]]] if first else []
        title = next((x[:80] for x in ([first.get("inline") or ""] if first else []) + body if x), None)
    if turn is not None:
        if not 1 <= turn <= total:
            raise ChrolloError("bad_turn", f"{path.name} has {total} turn{'s' * (total != 1)}; no turn {turn}",
                               "Turns count from 1 (--last 1 is the last).")
        turns = [turns[turn - 1]]
    elif last is not None:
        turns = turns[-last:]
    root = next((r.resolve() for r in roots if r.resolve() in path.parents), roots[0].resolve())
    return Conversation(str(path), meta, _vault.peer_of(path, root), lines, turns, total, raw, title)


def _turns(lines: list, path) -> tuple[dict, list]:
    """(frontmatter, the turns as spans: n, role, timestamp, line, last_line, and ``inline``
    for a legacy header holding the user's text) — headers only, so megabytes read fast;
    :meth:`Conversation.to_json` adds each turn's text and tool calls."""
    from .fileformat import HEADER_RE, file_date, parse_frontmatter

    meta, start = parse_frontmatter(lines)
    default_date = str(meta.get("date") or file_date(path.name) or "1970-01-01")
    heads = [(i, m) for i in range(start, len(lines)) if lines[i][:1] in "[#" and (m := HEADER_RE.match(lines[i]))]
    turns = []
    for k, (i, m) in enumerate(heads):
        j = (heads[k + 1][0] if k + 1 < len(heads) else len(lines)) - 1
        while j > i and not lines[j].strip():
            j -= 1
        t = {"n": k + 1, "role": "user" if m.group(3) == "User" else "agent",
             "timestamp": f"{m.group(1) or default_date} {m.group(2)}", "line": i + 1, "last_line": j + 1}
        if m.group(4):
            t["inline"] = m.group(4)
        turns.append(t)
    return meta, turns
