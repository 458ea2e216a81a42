"""Recall receipts: every prompt the recall hook saw and what it injected (``chrollo recall log``).

One JSON line per prompt in :func:`log_path` (owner-only): ``time``, ``harness``, ``session``
(the prompting session's id), ``prompt`` (its first words), ``excerpts`` (``path``, ``line``,
``start``, ``end``, ``chars`` of each excerpt injected; [] when nothing was) and ``chars``
(the block's characters). Prompts with nothing injected are logged too (without their
words): the share of prompts with an injection is what ``chrollo stats`` reports. A prompt's
words go through what the vault's text goes through (:func:`chrollo.privacy.writer_scrub`:
forgotten lines, and secrets with redact-capture on) before they are kept.

Bounded: past ``recall_log_max_mb`` (privacy.json, default 5 MB) the oldest lines go, and
lines older than ``recall_log_days`` (default 90) go on the next append. ``recall_log:
false`` turns it off. ``chrollo forget`` removes the receipts citing what it forgot, cites a
renamed file by its new name and scrubs the prompt words (:mod:`chrollo.traces`).

On the hook's path: stdlib only, one locked append per prompt (a few tens of µs); the
age check reads only the first line.
"""
from __future__ import annotations

import json
import os

from . import homedir as _home
from . import layout

DEFAULT_MAX_MB = 5
DEFAULT_DAYS = 90
PROMPT_WORDS = 12
PROMPT_CHARS = 120


def log_path() -> str:
    """Where the receipts are kept (``logs/recall.jsonl``: :func:`chrollo.layout.recall_log`)."""
    return layout.recall_log()


def settings(raw: dict | None = None) -> dict:
    """{"enabled", "max_mb", "days"} from privacy.json (``raw``: the file as already read)."""
    if raw is None:
        from .privacy import rules

        raw = rules().settings
    def num(key, default, lo, hi):
        v = raw.get(key)
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) and lo <= v <= hi else default

    return {"enabled": raw.get("recall_log") is not False,
            "max_mb": num("recall_log_max_mb", DEFAULT_MAX_MB, 0.01, 10_000),
            "days": num("recall_log_days", DEFAULT_DAYS, 1, 36_500)}


def first_words(prompt: str) -> str:
    words = " ".join(str(prompt).split()[:PROMPT_WORDS])
    return words[:PROMPT_CHARS] + ("…" if len(words) > PROMPT_CHARS or len(str(prompt).split()) > PROMPT_WORDS else "")


def record(harness: str, session: str, prompt, trace: dict) -> None:
    """Log one prompt the hook saw (``trace``: what :func:`chrollo.recall.recall` filled in).
    Never raises: a receipt that cannot be written is not worth a failed prompt."""
    try:
        conf = settings()
        if not conf["enabled"]:
            return
        from .dates import now

        excerpts = trace.get("excerpts") or []
        words = None
        if excerpts and isinstance(prompt, str):
            from .privacy import writer_scrub  # (what the vault keeps of a text: no forgotten line, no secret
            # with redact-capture on — the whole prompt first, so no secret is cut in two)

            words = first_words(writer_scrub()(prompt))
        entry = {"time": now().isoformat(timespec="seconds"), "harness": harness, "session": session,
                 "prompt": words,
                 "excerpts": excerpts, "chars": trace.get("chars", 0) if excerpts else 0}
        if trace.get("signals"):  # (numbers only: what the gate decided by)
            entry["signals"] = trace["signals"]
        _append(json.dumps(entry, ensure_ascii=False) + "\n", conf)
    except Exception:  # noqa: BLE001 — see the docstring
        pass


def _append(line: str, conf: dict) -> None:
    import fcntl

    path = log_path()
    lock = _home.open_lock(layout.recall_log_lock())
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, _home.FILE_MODE)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
            size = os.fstat(fd).st_size
            head = os.pread(fd, 40, 0)  # (the oldest entry's time)
        finally:
            os.close(fd)
        oldest = head[10:29].decode("ascii", "replace") if head.startswith(b'{"time": "') else ""
        # (the head is the oldest entry — a rewrite sorts them —, unless a clock set ahead wrote
        # one from the future: then it is no bound, and a rewrite drops it)
        if size > conf["max_mb"] * 1e6 or (oldest and (oldest < _cutoff(conf["days"]) or oldest > _cutoff(-1))):
            _rewrite(lambda e: True, conf)
    finally:
        os.close(lock)


def _cutoff(days: float) -> str:
    import datetime as dt

    from .dates import now

    return (now() - dt.timedelta(days=days)).isoformat(timespec="seconds")


def _rewrite(keep, conf: dict | None = None) -> int:
    """Rewrite the log with the entries ``keep(entry)`` accepts (returns how many went),
    within the age and size bounds (the oldest go first; ¾ of the size is kept so the next
    rewrite is far). The caller holds the lock."""
    conf = conf or settings()
    path = log_path()
    try:
        with open(path, "rb") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return 0
    cutoff, ahead = _cutoff(conf["days"]), _cutoff(-1)
    out = []
    for raw in lines:
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        # (a receipt dated more than a day ahead was written by a clock set wrong: no age bound
        # holds for it, so it goes with the old ones)
        if isinstance(e, dict) and cutoff <= str(e.get("time", "")) <= ahead:
            e = keep(e)
            if e:
                out.append(json.dumps(e if isinstance(e, dict) else json.loads(raw), ensure_ascii=False))
    out.sort(key=lambda x: x[10:29] if x.startswith('{"time": "') else "")  # (oldest first: see _append)
    budget, total, start = conf["max_mb"] * 1e6 * 0.75, 0, len(out)
    for i in range(len(out) - 1, -1, -1):
        total += len(out[i].encode("utf-8")) + 1
        if total > budget:
            break
        start = i
    out = out[start:]
    _home.write_private(path, "".join(x + "\n" for x in out))
    return len(lines) - len(out)


def entries(limit: int = 20, injections_only: bool = True) -> list:
    """The newest ``limit`` receipts (0: all), newest first."""
    try:
        with open(log_path(), "rb") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out = []
    for raw in reversed(lines):
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(e, dict) or (injections_only and not e.get("excerpts")):
            continue
        out.append(e)
        if limit and len(out) >= limit:
            break
    return out


def counts(since: str = "", until: str = "9999") -> dict:
    """Per day (``YYYY-MM-DD``) in [since, until]: {"prompts", "injections", "chars"}."""
    out: dict = {}
    try:
        with open(log_path(), "rb") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return out
    for raw in lines:
        try:
            e = json.loads(raw)
            day = str(e["time"])[:10]
        except (ValueError, KeyError, TypeError):
            continue
        if not since <= day <= until:
            continue
        c = out.setdefault(day, {"prompts": 0, "injections": 0, "chars": 0})
        c["prompts"] += 1
        if e.get("excerpts"):
            c["injections"] += 1
            c["chars"] += int(e.get("chars") or 0)
    return out


def forget(paths=(), sessions=(), renamed: dict | None = None, transform=None) -> int:
    """Drop the receipts citing any of ``paths`` (session files forgotten) or made in one of
    ``sessions`` (ids, their subagents too); cite a renamed file (``renamed``: {old path: new
    path}) by its new name; put the prompt words through ``transform`` (a forget's own: a
    forgotten line becomes the marker, a secret is redacted). Returns how many receipts went."""
    import fcntl

    paths = {os.path.realpath(p) for p in paths}
    renamed = {os.path.realpath(a): b for a, b in (renamed or {}).items()}
    sessions = {s for s in sessions if s}
    if not (paths or sessions or renamed or transform) or not os.path.exists(log_path()):
        return 0

    def keep(e):
        sid = str(e.get("session") or "")
        if sid in sessions or sid.split(":", 1)[0] in sessions:
            return None
        cited = [x for x in e.get("excerpts") or () if isinstance(x, dict)]
        if any(os.path.realpath(str(x.get("path"))) in paths for x in cited):
            return None
        for x in cited:
            new = renamed.get(os.path.realpath(str(x.get("path")))) if renamed else None
            if new is not None:
                x["path"] = new
        if transform is not None and isinstance(e.get("prompt"), str):
            e["prompt"] = transform(e["prompt"])
        return e

    lock = _home.open_lock(layout.recall_log_lock())
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _rewrite(keep)
    finally:
        os.close(lock)


def clear() -> int:
    """Remove the log (the setting turned it off); returns how many receipts it held."""
    try:
        with open(log_path(), "rb") as fh:
            n = fh.read().count(b"\n")
        os.unlink(log_path())
        return n
    except OSError:
        return 0
