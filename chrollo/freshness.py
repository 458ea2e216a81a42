"""Are the hooks still firing? When each harness last captured a turn, against when it was
last active (its newest transcript), so a harness update that stops calling the hooks does
not go unnoticed while memory silently stops growing.

The hook records each capture that wrote turns in ``$CHROLLO_HOME/state/hooks/<harness>.json``
(``{"last_capture": <epoch seconds>, "session_id": …}``); ``doctor`` and ``stats`` compare it
with the newest transcript in the harness's own data folder.
"""
from __future__ import annotations

import time

from . import vault as _vault

STALE_AFTER = 600  # seconds a transcript may be newer than the last capture (records written after Stop)


def _path(harness: str) -> str:
    from .layout import hook_record

    return hook_record(harness)


def record_capture(harness: str, session_id: str) -> None:
    """Called by the hook after a capture wrote turns."""
    import json

    _vault.write_private(_path(harness), json.dumps({"last_capture": time.time(), "session_id": session_id}))


def last_capture(harness: str) -> float | None:
    t = _vault.read_json(_path(harness)).get("last_capture")
    return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None


def last_activity(harness: str) -> tuple:
    """(mtime, path) of the newest transcript in the harness's data folder, or (None, None)."""
    from pathlib import Path

    from .importer import default_root, discover

    root = default_root(harness)
    newest, where = None, None
    if not root.is_dir():
        return None, None
    for p in discover(harness, Path(root)):
        try:
            m = p.stat().st_mtime
        except OSError:
            continue
        if newest is None or m > newest:
            newest, where = m, str(p)
    return newest, where


def hooked(harness: str) -> bool:
    """Are chrollo's hooks in the harness's own config? (Installed otherwise — as the
    harness's plugin — they show once they have captured.)"""
    from .install import hooks_config_path, installed_events

    try:
        text = hooks_config_path(harness).read_text("utf-8", "replace")
    except OSError:
        return False
    return bool(installed_events(harness, text))


def check(harness: str) -> dict:
    """{last_capture, last_activity, activity_path, stale, message} (times as ISO strings).

    Stale: the harness was active since the last capture, and its hooks are installed or have
    captured before (hooks never installed are not hooks that stopped firing)."""
    cap = last_capture(harness)
    act, where = last_activity(harness)
    stale = act is not None and (cap is None or act > cap + STALE_AFTER) and (cap is not None or hooked(harness))
    out = {"last_capture": _iso(cap), "last_activity": _iso(act), "activity_path": where, "stale": stale,
           "message": ""}
    if stale:
        since = f"since {_iso(cap)}" if cap is not None else "ever"
        out["message"] = (f"no turn captured from {harness} {since}, but it wrote {where} at {_iso(act)}: "
                          f"its hooks may have stopped firing (a harness update?). Run `chrollo install "
                          f"{harness}` and check again; `chrollo import {harness}` backfills the gap.")
    return out


def _iso(t: float | None) -> str | None:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) if t is not None else None
