"""Scan: ripgrep over the vault, its rows fed to a collector; and the sample of a large vault.

Vaults of thousands of sessions are sampled first: ~1/64 of the sessions (picked by the last
hex digits of their names, see tuning.SAMPLE_ENDINGS) are searched for every term. That
estimates each term's document frequency and singles out the "common" terms (more than
tuning.COMMON_RATE occurrences per session), which the main scan then leaves out (the ranking
makes up for it: rank.rescore, and pipeline's exactness check).
"""
from __future__ import annotations

import os
import time

from .. import rg as _rg
from .. import vault as _vault
from ..fileformat import read_frontmatter
from ..index import available
from ..vaultfiles import more_than
from . import tuning
from .collect import Collector
from .options import Scope


class ScanSpec:
    """What every rg scan of one pass shares: the globs (peers in or out), the --since,
    --until, --harness and --project filters, the files holding the query's quoted phrases,
    the timeout, and the result's warnings list (scans append to it)."""

    __slots__ = ("globs", "since_ts", "until_name", "harness", "project", "only", "timeout", "warnings",
                 "filtering")

    def __init__(self, scope: Scope, warnings: list):
        # (unanchored: a vault's only folders named "peers" are its peers/ — see docs/design.md §3)
        folder, vault = scope.folder, scope.vault
        globs = ["*.md"] if scope.include_peers or folder != vault else ["*.md", f"!{_vault.PEERS}/"]
        if scope.include_peers and folder == vault:
            globs += _unsearchable_peers(vault)
        self.globs = globs
        self.since_ts = scope.since.timestamp() if scope.since else None
        # (a session started after --until holds no turn before it: its name says when it started)
        self.until_name = scope.until.strftime("%Y-%m-%d_%H%M%S").encode() if scope.until else None
        self.harness, self.project, self.timeout, self.warnings = scope.harness, scope.project, scope.timeout, warnings
        self.only = scope.phrases.files if scope.phrases is not None else None
        # (no filter, no call per matched file: the hot loop of a search)
        self.filtering = any(x is not None for x in (self.since_ts, self.until_name, self.harness,
                                                      self.project, self.only))


def _unsearchable_peers(vault: str) -> list:
    """rg globs leaving out the peers switched off with `chrollo mesh peers set NAME --no-searchable`."""
    return [f"!**/{_vault.PEERS}/{name}/**" for name in _unsearchable_names(vault)]


def _unsearchable_names(vault: str) -> frozenset:
    if not os.path.isdir(os.path.join(vault, _vault.PEERS)):
        return frozenset()
    return frozenset(name for name, s in _vault.peer_switches().items() if not s["searchable"])


def large(scope) -> bool:
    """Whether the search's folder holds more than SELECT_AFTER session files (counted once
    per search by the one walk, vaultfiles.more_than: it stops at SELECT_AFTER + 1). A smaller one is read
    whole, without its index — the index costs it more than it saves (docs/index.md)."""
    got = scope.memo.get("large")
    if got is None:
        got = scope.memo["large"] = more_than(scope.folder, tuning.SELECT_AFTER)
    return got


def scan_indexed(col: Collector, scope: Scope, spec: ScanSpec) -> tuple[int, list]:
    """The main scan of a complete search: with the vault's index (chrollo/index/plan.py), rg
    reads only the files that may hold a form plus every file not indexed as it is now —
    the same rows as a walk of the folder, and the same count of files searched; without
    one (or when most files are candidates), rg walks the folder. Either way the index gives
    the frontmatter ends of the files it vouches for (no head is read for those); more than
    CATCHUP_SHARE of them not indexed as they are now: a build is due (``scope.memo``)."""
    q, common, folder, vault = col.q, col.common, scope.folder, scope.vault
    forms, parts = q.forms(~common), q.part_forms(~common)
    plan = None
    # (no index file, no import of the index's modules: 1 ms of every search where there is none;
    # a folder of SELECT_AFTER files or fewer is read whole faster than the index narrows it)
    if available(vault) and large(scope):
        from ..index.plan import plan as index_plan

        whole = scope.include_peers and folder == vault
        plan = index_plan(vault, folder, forms + parts, exclude_peers=not scope.include_peers and folder == vault,
                          unsearchable=_unsearchable_names(vault) if whole else frozenset(), memo=scope.memo,
                          min_files=tuning.INDEX_MIN_FILES, scan_share=tuning.INDEX_SCAN_SHARE)
    if plan is not None:
        scope.fm_ends.update(plan.fm_ends)  # (the collector reads no head for these)
        if plan.stale > tuning.CATCHUP_SHARE * plan.files:
            scope.memo["unindexed"] = True  # (files another program wrote: have them indexed)
    if plan is None or plan.paths is None:
        return scan_into(col, forms, parts, [folder], spec)
    errors: list = []
    for i in range(0, len(plan.paths), tuning.DEADLINE_MAX_BATCH):
        _n, err = scan_into(col, forms, parts, plan.paths[i:i + tuning.DEADLINE_MAX_BATCH], spec)
        errors += err
    return plan.files, errors


def scan_into(col: Collector, forms: list, parts: list, paths: list, spec: ScanSpec, *,
              timeout: float | None = None, quiet_timeout: bool = False,
              until: float | None = None) -> tuple[int, list]:
    """Feed one rg scan into the collector; returns (files searched, rg errors).

    ``until`` (a time.monotonic()): stop reading there, rows rg has written but the collector
    not yet taken included (folding them could overrun a deadline by a tenth of a second);
    the scan then counts as cut short (0 files searched).
    """
    timeout = spec.timeout if timeout is None else timeout
    filtering = spec.filtering
    info = _rg.Scan()
    fold = col.fold
    rows_of = _rg.scan(forms, [str(p) for p in paths], globs=tuple(spec.globs), timeout=timeout,
                       info=info, on_data=lambda b: col.seen(fold(b)), parts=parts)
    for path, rows in rows_of:
        if until is not None and time.monotonic() >= until:
            rows_of.close()  # (kills rg)
            info.files_searched = 0
            break
        if filtering and _filtered(path, spec) or path in col.sampled:
            continue
        col.add(path, rows)
    warnings = spec.warnings
    for e in info.errors[:20]:
        if e not in warnings:
            warnings.append(e)
    if info.timed_out and not quiet_timeout:
        warnings.append(f"search stopped after {timeout:g}s; results are partial")
    if info.truncated:
        warnings.append("too many matching lines; results are from the first part of the vault")
    return info.files_searched, info.errors


def _filtered(path: bytes, spec: ScanSpec) -> bool:
    """Whether --since, --until, --harness, --project or a quoted phrase leaves this matching
    file out."""
    if spec.only is not None and path not in spec.only:
        return True
    if spec.until_name is not None:
        name = os.path.basename(path)
        if name[:4].isdigit() and name[:17] > spec.until_name:
            return True  # started after --until
    if spec.since_ts is not None:
        try:
            if os.stat(path).st_mtime < spec.since_ts:
                return True  # nothing in this file was written on or after --since
        except OSError:
            return True
    harness, project = spec.harness, spec.project
    if harness is None and project is None:
        return False
    meta = read_frontmatter(path)
    if harness is not None and str(meta.get("harness", "")).lower() != harness.lower():
        return True
    return project is not None and not project.meta_ok(meta)


def sample_files(folder: str) -> list:
    """The sampled session files of a large vault (see SAMPLE_AFTER), or [] for a small one."""
    picked = []
    n = 0
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                n += 1
                if n > tuning.SAMPLE_AFTER:
                    return picked
                # (rg opens a path it is given even if it is a FIFO or a symlink: regular files only)
                if e.name.endswith(tuning.SAMPLE_ENDINGS) and e.is_file(follow_symlinks=False):
                    picked.append(e.path)
    except OSError:
        pass
    return []


class Sample:
    """What the sample saw: its document frequencies, its size, and the common terms."""

    __slots__ = ("df", "files", "common", "errors")

    def __init__(self, df: list | None = None, files: int = 0, common: int = 0, errors: list | None = None):
        self.df, self.files, self.common = df, files, common
        self.errors = errors if errors is not None else []


def scan_sample(col: Collector, paths: list, spec: ScanSpec) -> Sample:
    """Scan the sampled files into ``col`` (their masks are exact from then on) and set the
    collector to list only the terms that are not common for the main scan."""
    q, n = col.q, len(col.q.terms)
    col.rows = [0] * n
    files, errors = scan_into(col, q.forms(), q.part_forms(), paths, spec)
    col.sampled = {os.fsencode(p) for p in paths}
    df = col.df()
    files = max(files, 1)
    common = sum(1 << i for i in range(n) if col.rows[i] > tuning.COMMON_RATE * files)
    if not any(col.rows[i] for i in range(n) if not common >> i & 1):
        common = 0  # nothing else occurs: the shortcut would list nothing
    col.rows = None
    col.common = common
    col.use(q.forms(~common))
    return Sample(df, files, common, errors)
