"""``stats``: what a vault holds — sessions, turns, bytes, date range, per harness, per peer —
and what happened over time: turns per day or week (by project or harness), and what recall did.

Activity counts each turn on the day of its own header. Every file is read once, then its
counts are kept (beside the vault's cached listing) until its size or mtime changes: at 1 GB,
reading costs ~14 CPU seconds (as rg -c's walk, bound by the disk), stat'ing ~2.5.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import vault as _vault
from .catalog import project_of
from .fileformat import header_dates, parse_frontmatter

CACHE_VERSION = 1
DEFAULT_WEEKS = 12
MAX_BARS = 5000  # bars of activity one run gives (1970..9999 per day was 2.9 million: 272 MB)


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
    recall: dict | None = field(default_factory=dict)  # None: not the vault's (stats --dir)
    # the search index (docs/index.md): {"files", "indexed", "index_bytes", "usable"}
    index: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def stats(dir: str | None = None, since=None, until=None, per: str | None = None,
          by: str | None = None) -> Stats:
    """Count what the vault (or ``dir``) holds — reads each file new or changed since the
    last run (:func:`_counted`) — and its activity
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
    bars = _bars(lo.date(), hi.date(), per)
    if bars > MAX_BARS:
        raise UsageError(f"{lo.date()} .. {hi.date()} is {bars:,} bars per {per}: at most {MAX_BARS:,}",
                         "Use --per week, or narrow --since / --until." if per == "day"
                         else "Narrow --since / --until.", kind="too_many_bars")
    first_day, last_day = lo.date().isoformat(), hi.date().isoformat()
    days: dict = {}  # day -> Counter(by key)
    root = Path(os.path.expanduser(dir)).resolve() if dir else _vault.memories_dir()
    _vault.require_dir(root, "memory folder" if dir else "vault")
    out = Stats(vault=str(root))
    base = str(root)
    per_h: dict = {}
    per_p: dict = {}
    labels: dict = {}  # repository -> its sessions' project names
    for relp, size, date, harness, project, repository, turns, packed in _counted(root, out):
        out.sessions += 1
        out.turns += turns
        out.bytes += size
        if date:
            out.first = min(out.first or date, date)
            out.last = max(out.last or date, date)
        peer = (_vault.peer_of(os.path.join(base, relp), base) if "/" in relp else None) or "local"
        for table, key in ((per_h, harness), (per_p, peer)):
            c = table.get(key)
            if c is None:
                c = table[key] = [0, 0, 0]
            c[0] += 1
            c[1] += turns
            c[2] += size
        in_window = _days(packed, first_day, last_day)
        if in_window:
            key = "" if by is None else harness if by == "harness" else _project_label(project, repository, labels)
            for day, n in in_window:
                days.setdefault(day, Counter())[key] += n
    _merge_labels(days, labels)
    out.activity = _series(days, lo.date(), hi.date(), per, by)
    # (the recall log is of every vault: another folder's stats leave it out, not claim it)
    out.recall = _recall(lo.date(), hi.date(), per) if not dir or root == _vault.memories_dir().resolve() else None
    out.harnesses = {k: dict(zip(("sessions", "turns", "bytes"), v)) for k, v in sorted(per_h.items())}
    out.peers = {k: dict(zip(("sessions", "turns", "bytes"), v)) for k, v in sorted(per_p.items())}
    from .freshness import check
    from .harness import HARNESSES

    out.hooks = {h: check(h) for h in HARNESSES}
    from .index.store import status

    s = status(str(root))
    out.index = {k: s[k] for k in ("files", "indexed", "index_bytes", "usable")}
    return out


def _counted(root: Path, out: Stats) -> list:
    """What each session file of ``root`` holds: [(relative path, size, date, harness, project,
    repository, turns, days)], ``days`` packed as "YYYY-MM-DD=turns,…" in date order
    (:func:`_days`). Every file is stat'ed; only those new or changed since the last run (size
    or mtime) are read — the others' counts come from the cache (state/listing/<key>.stats.json,
    a file's facts in one tab-separated string: 245,000 of them load in a fraction of a second), which
    a file changed in the last second does not enter (it could change again unseen within its
    mtime's tick). Files that cannot be read go to ``out.unreadable``."""
    import errno
    import json
    import stat
    import time

    from . import homedir as _home
    from . import layout as _layout
    from .listing import session_files

    base = str(root)
    path = _layout.stats_cache(base)
    cache = _home.read_json(path)
    rows = cache.get("files") if cache.get("folder") == base and cache.get("version") == CACHE_VERSION else None
    rows = rows if isinstance(rows, dict) else {}
    trusted_before = time.time_ns() - 10**9
    counted, keep, changed = [], {}, False
    for key in session_files(base, True):  # (names as strings: no Path per file at 250,000)
        name, _, rel = key.partition("\0")
        relp = rel or name
        p = f"{base}/{relp}"
        packed = rows.get(relp)
        try:
            st = os.lstat(p)
            row = packed.split("\t") if isinstance(packed, str) and stat.S_ISREG(st.st_mode) else None
            if not (row and len(row) == 8 and row[0] == str(st.st_size) and row[1] == str(st.st_mtime_ns)
                    and row[6].isdigit()):  # (else: not what this code wrote, read the file again)
                with _vault.open_regular(p) as fh:  # (a FIFO named *.md must not hang stats)
                    st = os.fstat(fh.fileno())
                    data = fh.read()
                row = [str(len(data)), str(st.st_mtime_ns), *_facts(data, name)]
                packed = "\t".join(row)
                changed = True
        except OSError as e:
            if e.errno != errno.ELOOP:  # (a symlink is not a session of this vault: skipped)
                out.unreadable.append(f"{p}: {e.strerror}")
            continue
        counted.append((relp, int(row[0]), row[2], row[3], row[4], row[5], int(row[6]), row[7]))
        if st.st_mtime_ns < trusted_before:
            keep[relp] = packed
    if changed or len(keep) != len(rows):
        try:
            _home.write_private(path, json.dumps({"folder": base, "version": CACHE_VERSION, "files": keep},
                                                 separators=(",", ":")))
        except OSError:
            pass  # (state/ not writable: the next run reads every file again)
    return counted


def _facts(data: bytes, name: str) -> list:
    """[date, harness, project, repository ("" if none), turns, days] of one session file's
    bytes, as strings (a tab, the cache's separator, made a space); a header
    without a date counts on the session's."""
    meta = parse_frontmatter(_head(data))[0]
    named = _vault.SESSION_NAME_RE.fullmatch(name)
    date = str(meta.get("date") or "") or (named.group(1) if named else "")
    repository = meta.get("repository")
    per_day: Counter = Counter(header_dates(data))
    if b"" in per_day:
        per_day[date[:10].encode()] += per_day.pop(b"")
    days = ",".join(f"{d.decode('ascii', 'replace')}={n}" for d, n in sorted(per_day.items()))
    facts = [date, str(meta.get("harness") or "unknown"), project_of(meta) or "unknown",
             repository if isinstance(repository, str) else "", str(sum(per_day.values())), days]
    return [x.replace("\t", " ") for x in facts]


def _days(days: str, first: str, last: str) -> list:
    """The (day, turns) of packed ``days`` between ``first`` and ``last`` (ISO dates)."""
    if not days or days[:10] > last or days[days.rfind(",") + 1:][:10] < first:
        return []
    got = []
    for item in days.split(","):
        day, _, n = item.rpartition("=")
        if first <= day <= last and n.isdigit():
            got.append((day, int(n)))
    return got


def _head(data: bytes) -> list:
    """The lines of a file's frontmatter (and a little after it), from its first 8 KB."""
    end = data.find(b"\n---", 3, 8192) if data.startswith(b"---") else -1
    return data[:end + 5 if end > 0 else 8192].decode("utf-8", "replace").split("\n")


def _project_label(name: str, repository: str, labels: dict) -> str:
    """A session's project in ``--by project``: its project's name (chrollo.catalog.project_of),
    except that the sessions of one repository (on any machine, whatever their folders are
    called) are one project, named by the first of their names (:func:`_merge_labels`)."""
    if repository:
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


def _bars(lo, hi, per: str) -> int:
    """How many days (or weeks) of [lo, hi] the activity series has."""
    return (hi - _bucket(lo, per)).days // (7 if per == "week" else 1) + 1


def _buckets(lo, hi, per: str) -> list:
    import datetime as dt

    # (counted, not stepped past ``hi``: the step after 9999-12-27 is beyond the calendar)
    first, step = _bucket(lo, per), dt.timedelta(days=7 if per == "week" else 1)
    return [first + i * step for i in range(_bars(lo, hi, per))]


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
    for day, c in list(got.items()):
        try:
            rows[_bucket(dt.date.fromisoformat(day), per).isoformat()].update(c)
        except ValueError:  # (a receipt's time that is no date: "2026-02-30")
            del got[day]
    prompts = sum(c["prompts"] for c in got.values())
    injections = sum(c["injections"] for c in got.values())
    return {"log": log_path(), "enabled": settings()["enabled"], "prompts": prompts, "injections": injections,
            "share": round(injections / prompts, 3) if prompts else None,
            "chars": sum(c["chars"] for c in got.values()),
            "series": [{"start": k, "prompts": c["prompts"], "injections": c["injections"]} for k, c in rows.items()]}
