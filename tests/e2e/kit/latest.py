"""What "latest" means for ``tests/e2e/run-latest``: each harness's CURRENT package name and
version, asked of the npm registry, following renames.

A harness package can move to a new name (pi did at 0.74: ``@mariozechner/pi-coding-agent``
stops at 0.73.1, ``@earendil-works/pi-coding-agent`` goes on) without the old name saying so:
asking the old name for its latest version then silently tests a months-old release. So each
name is looked up (``npm view <name> name version deprecated dist-tags --json``) and moved on
from when

- the registry marks it deprecated with a message naming another package that exists
  (``"renamed to `@new/name`"``, ``"use @new/name instead"``), or
- it is in :data:`RENAMES`, the renames seen so far — checked against the registry every run:
  the new name must exist, and an old name that published past its last known version is
  reported (the table may be wrong).

:func:`resolve` takes the lookup as a function, so the logic is tested on recorded registry
answers (tests/fixtures/registry/, tests/test_e2e_latest.py) with no network. The report
(:func:`report_text`) names, per harness, the name asked, the name and version installed, and
every rename followed; ``run-latest`` prints it and keeps it beside the install.
"""
from __future__ import annotations

import json
import re
import subprocess

# old name -> (new name, the old name's last version before the move)
RENAMES = {"@mariozechner/pi-coding-agent": ("@earendil-works/pi-coding-agent", "0.73.1")}

_NAME = r"(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*"
# where a deprecation message names the package to use instead
_MOVED = [re.compile(r"`(" + _NAME + r")`", re.I),
          re.compile(r"(?:renamed|moved|migrated)\s+(?:to|into)\s+(?:the\s+)?(?:package\s+)?[\"']?(" + _NAME + ")", re.I),
          re.compile(r"\buse\s+[\"']?(" + _NAME + r")[\"']?\s+instead", re.I),
          re.compile(r"(@[a-z0-9][\w.-]*/[a-z0-9][\w.-]*)", re.I)]
MAX_HOPS = 5


def npm_view(name: str, timeout: float = 120) -> dict | None:
    """The registry's answer for ``name`` (None: no such package). Raises on other failures."""
    p = subprocess.run(["npm", "view", name, "name", "version", "deprecated", "dist-tags", "--json"],
                       capture_output=True, text=True, timeout=timeout)
    try:
        data = json.loads(p.stdout) if p.stdout.strip() else {}
    except ValueError:
        data = {}
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        if data["error"].get("code") == "E404":
            return None
        raise RuntimeError(f"npm view {name}: {data['error'].get('summary')}")
    if p.returncode != 0 or not isinstance(data, dict) or not data.get("version"):
        raise RuntimeError(f"npm view {name} exited {p.returncode}: {p.stderr[-2000:]}")
    return data


def latest_version(info: dict) -> str:
    tags = info.get("dist-tags")
    return tags.get("latest") if isinstance(tags, dict) and isinstance(tags.get("latest"), str) else info["version"]


def named_in(message: str, current: str) -> list:
    """The package names a deprecation message points to (in order; never ``current``)."""
    out: list = []
    for rx in _MOVED:
        for m in rx.finditer(message or ""):
            name = m.group(1).rstrip(".,;:").lower()
            if name != current and name not in out and ("/" in name or rx is not _MOVED[-1]):
                out.append(name)
    return out


def resolve(name: str, view) -> dict:
    """``{"asked", "package", "version", "renamed": [(old, new, why)], "notes": [...]}``:
    the harness's current package, from ``name`` through every rename. ``view(name)`` is the
    registry lookup (:func:`npm_view`'s answer, None for a missing package)."""
    asked, renamed, notes, seen = name, [], [], {name}
    info = view(name)
    for _ in range(MAX_HOPS):
        if info is None:
            raise LookupError(f"{name} is not on the registry")
        nxt, why = None, ""
        deprecated = info.get("deprecated")
        if isinstance(deprecated, str) and deprecated.strip():
            for cand in named_in(deprecated, name):
                cand_info = view(cand) if cand not in seen else None
                if cand_info is not None:
                    nxt, why, info_next = cand, f"deprecated: {deprecated.strip()[:200]}", cand_info
                    break
            else:
                notes.append(f"{name} is deprecated and names no package to move to: {deprecated.strip()[:200]}")
        if nxt is None and name in RENAMES:
            new, last_old = RENAMES[name]
            new_info = view(new) if new not in seen else None
            if new_info is None:
                notes.append(f"known rename {name} -> {new}: {new} is not on the registry; staying on {name}")
            else:
                nxt, why, info_next = new, f"known renames table: the old name stops at {last_old}", new_info
                if latest_version(info) != last_old:
                    notes.append(f"{name} published {latest_version(info)} after its known last version "
                                 f"{last_old}: check the rename to {new}")
        if nxt is None:
            return {"asked": asked, "package": name, "version": latest_version(info),
                    "renamed": renamed, "notes": notes}
        renamed.append((name, nxt, why))
        seen.add(nxt)
        name, info = nxt, info_next
    raise LookupError(f"{asked}: more than {MAX_HOPS} renames")


def oldest_name(name: str) -> str:
    """The first name a package had, by :data:`RENAMES` (itself if it was never renamed)."""
    back = {new: old for old, (new, _v) in RENAMES.items()}
    seen = {name}
    while name in back and back[name] not in seen:
        name = back[name]
        seen.add(name)
    return name


def resolve_all(packages: dict, view=npm_view) -> dict:
    """harness -> :func:`resolve`, each from the OLDEST known name of its package, so every
    run checks the renames table against the registry and the report shows the renames."""
    return {h: resolve(oldest_name(pkg), view) for h, pkg in packages.items()}


def report_text(found: dict, pinned: dict | None = None) -> str:
    """One line per harness (and its renames and notes, indented): what run-latest installs."""
    lines = []
    for h, r in found.items():
        pin = f" (pinned {pinned[h]})" if pinned and pinned.get(h) else ""
        lines.append(f"{h}: {r['package']}@{r['version']}{pin}")
        lines += [f"  renamed: {old} -> {new} ({why})" for old, new, why in r["renamed"]]
        lines += [f"  note: {n}" for n in r["notes"]]
    return "\n".join(lines)
