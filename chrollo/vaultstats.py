"""``stats``: what a vault holds — sessions, turns, bytes, date range, per harness, per peer —
and what happened over time: turns per day or week (by project or harness), and what recall did.

Activity counts each turn on the day of its own header; only sessions started up to
ACTIVITY_SLACK_DAYS before the window are looked at for it (a session's name holds its
start, so the others are not even matched against).
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import vault as _vault
from .catalog import project_of
from .fileformat import HEADER_BYTES_RE, parse_frontmatter

ACTIVITY_SLACK_DAYS = 7
DEFAULT_WEEKS = 12


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
    # {"per": "day"|"week", "by": None|"project"|"harness", "since", "until",
    #  "series": [{"start": "YYYY-MM-DD", "turns": n, "by": {key: n}}]}
    activity: dict = field(default_factory=dict)
    # {"prompts", "injections", "share", "chars", "series": [{"start", "prompts", "injections"}]}
    recall: dict = field(default_factory=dict)
    # the search index (docs/index.md): {"files", "indexed", "index_bytes", "usable"}
    index: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def stats(dir: str | None = None, since=None, until=None, per: str | None = None,
          by: str | None = None) -> Stats:
    """Count what the vault (or ``dir``) holds — reads every file once — and its activity
    between ``since`` and ``until`` (dates in :mod:`chrollo.dates`' grammar; default the last
    DEFAULT_WEEKS weeks) per ``per`` ("day" or "week"; default: days for a month or less),
    split ``by`` "project" or "harness"."""
    import datetime as dt

    from .dates import now, parse
    from .errors import UsageError

    if by not in (None, "project", "harness"):
        raise UsageError(f"--by takes project or harness, got {by!r}", kind="bad_usage")
    hi = parse(until, end=True, option="--until") or now()
    lo = parse(since, option="--since") or dt.datetime.combine(
        hi.date() - dt.timedelta(weeks=DEFAULT_WEEKS) + dt.timedelta(days=1), dt.time())
    if lo > hi:
        raise UsageError(f"--since ({since}) is after --until ({until or 'now'})", kind="bad_date")
    per = per or ("day" if (hi - lo).days <= 31 else "week")
    first_day, last_day = lo.date().isoformat(), hi.date().isoformat()
    look_from = (lo.date() - dt.timedelta(days=ACTIVITY_SLACK_DAYS)).isoformat()
    days: dict = {}  # day -> Counter(by key)
    root = Path(os.path.expanduser(dir)).resolve() if dir else _vault.memories_dir()
    _vault.require_dir(root, "memory folder" if dir else "vault")
    out = Stats(vault=str(root))
    per_h: dict = {}
    per_p: dict = {}
    labels: dict = {}  # repository -> its sessions' project names
    import errno

    from .listing import session_files

    base = str(root)
    for key in session_files(base, True):  # (names as strings: no Path per file at 250,000)
        name, _, rel = key.partition("\0")
        p = os.path.join(base, rel or name)
        try:
            with _vault.open_regular(p) as fh:  # (a FIFO named *.md must not hang stats)
                data = fh.read()
        except OSError as e:
            if e.errno != errno.ELOOP:  # (a symlink is not a session of this vault: skipped)
                out.unreadable.append(f"{p}: {e.strerror}")
            continue
        end = data.find(b"\n---", 3, 8192) if data.startswith(b"---") else -1
        head = data[:end + 5 if end > 0 else 8192].decode("utf-8", "replace").split("\n")
        meta = parse_frontmatter(head)[0]
        named = _vault.SESSION_NAME_RE.fullmatch(name)
        date = str(meta.get("date") or "") or (named.group(1) if named else None)
        turns = len(HEADER_BYTES_RE.findall(data))
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
        if turns and (named is None or named.group(1) >= look_from) and (date or "9999") <= last_day:
            key = "" if by is None else str(meta.get("harness") or "unknown") if by == "harness" \
                else _project_label(meta, labels)
            fallback = (date or "")[:10].encode()
            for stamp, _time, _role in HEADER_BYTES_RE.findall(data):
                day = (stamp or fallback).decode("ascii", "replace")
                if first_day <= day <= last_day:
                    days.setdefault(day, Counter())[key] += 1
    _merge_labels(days, labels)
    out.activity = _series(days, lo.date(), hi.date(), per, by)
    out.recall = _recall(lo.date(), hi.date(), per)
    out.harnesses = {k: dict(v) for k, v in sorted(per_h.items())}
    out.peers = {k: dict(v) for k, v in sorted(per_p.items())}
    from .freshness import check
    from .harness import HARNESSES

    out.hooks = {h: check(h) for h in HARNESSES}
    from .index import status

    s = status(str(root))
    out.index = {k: s[k] for k in ("files", "indexed", "index_bytes", "usable")}
    return out


def _project_label(meta: dict, labels: dict) -> str:
    """A session's project in ``--by project``: its project's name (chrollo.catalog.project_of),
    except that the sessions of one repository (on any machine, whatever their folders are
    called) are one project, named by the first of their names (:func:`_merge_labels`)."""
    repository = meta.get("repository")
    name = project_of(meta) or "unknown"
    if isinstance(repository, str) and repository:
        labels.setdefault(repository, set()).add(name)
        return "\0" + repository
    return name


def _merge_labels(days: dict, labels: dict) -> None:
    """Each repository's counts under its name (in place), merged with its name's others."""
    for counts in days.values():
        for key in [k for k in counts if k.startswith("\0")]:
            counts[min(labels[key[1:]])] += counts.pop(key)


def _bucket(day, per: str):
    import datetime as dt

    return day - dt.timedelta(days=day.weekday()) if per == "week" else day


def _buckets(lo, hi, per: str) -> list:
    import datetime as dt

    out, d = [], _bucket(lo, per)
    while d <= hi:
        out.append(d)
        d += dt.timedelta(days=7 if per == "week" else 1)
    return out


def _series(days: dict, lo, hi, per: str, by) -> dict:
    """Every day (or week, from its Monday) of [lo, hi], with its turns (and per key)."""
    import datetime as dt

    if per not in ("day", "week"):
        from .errors import UsageError

        raise UsageError(f"--per takes day or week, got {per!r}", kind="bad_usage")
    rows = {b.isoformat(): Counter() for b in _buckets(lo, hi, per)}
    for day, c in days.items():
        rows[_bucket(dt.date.fromisoformat(day), per).isoformat()].update(c)
    series = [{"start": k, "turns": sum(c.values()),
               **({"by": dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))} if by else {})}
              for k, c in rows.items()]
    return {"per": per, "by": by, "since": lo.isoformat(), "until": hi.isoformat(),
            "turns": sum(r["turns"] for r in series), "series": series}


def _recall(lo, hi, per: str) -> dict:
    """What ambient recall did in [lo, hi], from its receipts (:mod:`chrollo.receipts`)."""
    import datetime as dt

    from .receipts import counts, log_path, settings

    got = counts(lo.isoformat(), hi.isoformat())
    rows = {b.isoformat(): Counter() for b in _buckets(lo, hi, per)}
    for day, c in got.items():
        rows[_bucket(dt.date.fromisoformat(day), per).isoformat()].update(c)
    prompts = sum(c["prompts"] for c in got.values())
    injections = sum(c["injections"] for c in got.values())
    return {"log": log_path(), "enabled": settings()["enabled"], "prompts": prompts, "injections": injections,
            "share": round(injections / prompts, 3) if prompts else None,
            "chars": sum(c["chars"] for c in got.values()),
            "series": [{"start": k, "prompts": c["prompts"], "injections": c["injections"]} for k, c in rows.items()]}
