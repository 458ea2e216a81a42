"""``stats``: what a vault holds — sessions, turns, bytes, date range, per harness, per peer."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import vault as _vault
from .fileformat import parse_frontmatter

_HEADER = re.compile(rb"^(?:## )?\[(\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}\] \[(?:User|Agent)\]", re.M)


@dataclass
class Stats:
    vault: str
    sessions: int = 0
    turns: int = 0
    bytes: int = 0
    first: str | None = None
    last: str | None = None
    harnesses: dict = field(default_factory=dict)  # harness -> {"sessions", "turns", "bytes"}
    peers: dict = field(default_factory=dict)      # peer ("local" for own) -> {...}
    unreadable: list = field(default_factory=list)
    # per harness: when its hooks last captured a turn vs its newest transcript (freshness.check)
    hooks: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def stats(dir: str | None = None) -> Stats:
    """Count what the vault (or ``dir``) holds. Reads every file once."""
    root = Path(dir).expanduser().resolve() if dir else _vault.memories_dir()
    _vault.require_dir(root, "memory folder" if dir else "vault")
    out = Stats(vault=str(root))
    per_h: dict = {}
    per_p: dict = {}
    for p in _vault.iter_session_files(root):
        try:
            with _vault.open_regular(p) as fh:  # (a FIFO named *.md must not hang stats)
                data = fh.read()
        except OSError as e:
            out.unreadable.append(f"{p}: {e.strerror}")
            continue
        head = data[:8192].decode("utf-8", "replace").split("\n")
        meta = parse_frontmatter(head)[0]
        date = str(meta.get("date") or "") or (_vault.SESSION_NAME_RE.fullmatch(p.name) or [None, None])[1]
        turns = len(_HEADER.findall(data))
        out.sessions += 1
        out.turns += turns
        out.bytes += len(data)
        if date:
            out.first = min(out.first or date, date)
            out.last = max(out.last or date, date)
        for table, key in ((per_h, str(meta.get("harness") or "unknown")),
                           (per_p, _vault.peer_of(p, root) or "local")):
            c = table.setdefault(key, Counter())
            c.update(sessions=1, turns=turns, bytes=len(data))
    out.harnesses = {k: dict(v) for k, v in sorted(per_h.items())}
    out.peers = {k: dict(v) for k, v in sorted(per_p.items())}
    from .freshness import check
    from .harness import HARNESSES

    out.hooks = {h: check(h) for h in HARNESSES}
    return out
