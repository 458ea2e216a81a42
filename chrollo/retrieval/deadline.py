"""The scan of a search with a deadline (the recall hook): newest sessions first, in growing
batches, until the deadline (see tuning.DEADLINE_BATCH); what was left unsearched is said."""
from __future__ import annotations

import os
import time

from .. import listing as _listing
from ..index import available, enabled
from . import tuning
from .collect import Collector
from .scan import ScanSpec, scan_into


def newest_first(folder: str, files: list, total: int | None = None, include_peers: bool = True,
                 stop: float | None = None):
    """Paths of ``files`` (listing.session_files keys) in batches, newest first (see
    listing.newest_keys); when ``files`` holds only the newest of ``total`` (a cached
    listing), the vault is listed once they are done, for the older ones — unless ``stop``
    (a time.monotonic()) passes first or meanwhile (then there are no more batches)."""
    sep = folder + os.sep
    for batch in _listing.newest_keys(files, tuning.DEADLINE_BATCH):
        paths = [sep + (f.rpartition("\0")[2]) for f in batch]
        for i in range(0, len(paths), tuning.DEADLINE_MAX_BATCH):
            yield paths[i:i + tuning.DEADLINE_MAX_BATCH]
    if total is not None and total > len(files) and files:
        oldest = min(files)
        older = _listing.older_keys(folder, include_peers, oldest, stop)
        yield from newest_first(folder, older)


def _small_regular(path: str) -> bool:
    """A regular file (never a link: rg would follow one given by name) of a size worth
    reading within a deadline."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return (st.st_mode & 0o170000) == 0o100000 and st.st_size <= tuning.DEADLINE_MAX_FILE


def scan_newest(col: Collector, folder: str, spec: ScanSpec, include_peers: bool,
                stop: float) -> tuple[int, list, bool]:
    """Scan ``folder`` newest sessions first until ``stop`` (the batch running then is cut
    short, its rows so far kept); returns (files searched, rg errors, whether sessions of a
    vault large enough for the selection were left unread without an index to reach them)."""
    files, total = _listing.cached(folder, include_peers, deadline=True)
    batches = _indexed_batches(col.q, folder, files, total, include_peers, stop)
    if batches is not None:
        total = batches.total
        batches.fm_ends, batches.stop = col.fm_ends, stop  # (no head read for those: see index.newest_plan)
    searched, complete, skipped, errors = _scan_batches(
        col, batches or newest_first(folder, files, total, include_peers, stop), spec, stop)
    if batches is not None and batches.done:  # the files the index rules out count as searched
        searched, complete = searched + batches.ruled_out, total
    short = complete < total or time.monotonic() >= stop
    # (an index would reach them — unless indexes are turned off)
    unreached = short and total > tuning.SELECT_AFTER and batches is None and enabled()
    if short:
        spec.warnings.append(f"deadline: searched the newest {complete} session file{'s' * (complete != 1)} "
                             f"(of {total} listed) in full")
    if skipped:
        spec.warnings.append(f"deadline: skipped {skipped} files over {tuning.DEADLINE_MAX_FILE >> 20} MiB "
                             "(or not regular files); a search without a deadline reads them")
    return searched, errors, unreached


def _indexed_batches(q, folder: str, files: list, total: int, include_peers: bool, stop: float):
    """With the vault's index: the newest DEADLINE_BATCH files, then — of all the others,
    whatever their age — only those that may hold a form or are not indexed: every indexed
    session is within reach (chrollo/index/newest.py; the index is asked once the
    newest are read, if time is left). None without an index."""
    if not available(folder):
        return None  # (and the index's modules, 1 ms to import, are not needed)
    from ..index.newest import newest_plan

    first = tuning.DEADLINE_BATCH
    return newest_plan(folder, q.forms() + q.part_forms(), files, total, include_peers, first,
                       lambda older: newest_first(folder, older),
                       lambda: newest_first(folder, files[first:], total - len(files[:first]), include_peers, stop),
                       rare_files=tuning.HOOK_RARE_FILES, most=tuning.HOOK_CANDIDATES)


def _scan_batches(col: Collector, batches, spec: ScanSpec, stop: float) -> tuple:
    """(files searched, files complete, files skipped, rg errors) of scanning ``batches``."""
    q = col.q
    searched, errors, complete, skipped = 0, [], 0, 0
    batches = iter(batches)
    while not complete or time.monotonic() < stop:
        # (the next batch is not asked for past the deadline: making it may list the vault)
        batch = next(batches, None)
        if batch is None:
            break
        # The first batch (the newest DEADLINE_BATCH sessions) is always searched in full —
        # a loaded machine must not cost the prompt its recent memory; the rest until `stop`.
        left = stop - time.monotonic() if complete else spec.timeout
        if left <= 0:
            break
        todo = [p for p in batch if _small_regular(p)]
        n, err = scan_into(col, q.forms(), q.part_forms(), todo, spec, timeout=left, quiet_timeout=True,
                           until=stop if complete else None) if todo else (0, [])
        errors += err
        if n or not todo:  # (a scan cut short prints no count)
            searched, complete = searched + n, complete + len(batch)
            skipped += len(batch) - len(todo)
    return searched, complete, skipped, errors
