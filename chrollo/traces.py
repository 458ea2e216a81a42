"""What chrollo keeps *about* session files, made to follow a forget (docs/design.md §11).

A forget removes files, or scrubs them (and a scrubbed title's words leave the file's name: a
rename). Besides the files, ``$CHROLLO_HOME`` holds their names and some of their words in:
recall receipts and every session's recall record (the excerpts shown: file names), capture
records (the session's file, the prompt in flight, a deferred answer), the session writer's
records, torn remnants in ``state/torn/`` (bytes cut off a file, named after it), chrollo's
logs (an error may name a file), and the mesh's records (own files, what was written to a shared folder and taken from peers, the last
signed envelope). :func:`follow` brings all of them in line at once: what cites a removed file
goes, a renamed file's old name is replaced by the new one, and stored text goes through the
forget's own ``transform`` (a forgotten line becomes the marker, a secret is redacted).

Each record is rewritten only if it changes, atomically, owner-only; a capture record under
its session's capture lock (lock 1 of :mod:`chrollo.layout`, taken alone). Never fatal: a
record that cannot be read is a disposable one, and is removed.
"""
from __future__ import annotations

import fcntl
import json
import os

from . import layout as _layout
from . import vault as _vault


def follow(removed=(), renamed: dict | None = None, sessions=(), transform=None, home: str | None = None) -> int:
    """Apply a forget to every record: ``removed`` (paths of files deleted), ``renamed`` ({old
    path: new path}), ``sessions`` (ids forgotten whole), ``transform`` (text -> text, applied
    to stored text; None: no text forgotten but whole sessions). Returns how many receipts went."""
    from .receipts import forget as forget_receipts

    renamed = dict(renamed or {})
    removed = [str(p) for p in removed]
    gone = {os.path.basename(p) for p in removed}
    moved = {os.path.basename(a): os.path.basename(b) for a, b in renamed.items()}
    n = forget_receipts(paths=removed, sessions=sessions, renamed=renamed, transform=transform)
    if not (gone or moved or transform):
        return n
    _recall_records(gone, moved)
    if moved or transform is not None:
        _capture_records(moved, transform)
    _writer_records(moved)
    _torn(gone, moved, sessions, transform)
    _logs(gone | set(moved), transform)
    if gone or moved:
        _mesh(gone | set(moved), home)
    return n


def _each(folder: str):
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return
    for name in names:
        if name.endswith(".json"):
            yield os.path.join(folder, name)


def _rewrite(path: str, data, new) -> None:
    if new != data:
        _vault.write_private(path, json.dumps(new, ensure_ascii=False))


def _recall_records(gone: set, moved: dict) -> None:
    """Each session's record of the excerpts it was shown: [file (relative), start, end]."""
    for path in _each(os.path.dirname(_layout.recall_record("x"))):
        data = _vault.read_json(path)
        spans = data.get("injected")
        if not isinstance(spans, list):
            continue
        out = []
        for x in spans:
            if isinstance(x, list) and x and isinstance(x[0], str):
                head, base = os.path.split(x[0])
                if base in gone:
                    continue
                if base in moved:
                    x = [os.path.join(head, moved[base]), *x[1:]]
            out.append(x)
        _rewrite(path, data, {**data, "injected": out})


def _moved(path, moved: dict):
    """``path`` under its new name, if its file was renamed (else None)."""
    if not isinstance(path, str) or os.path.basename(path) not in moved:
        return None
    return os.path.join(os.path.dirname(path), moved[os.path.basename(path)])


def _capture_records(moved: dict, transform) -> None:
    """Capture's records: the file each session writes to (and the one an append was about to
    grow), the prompt in flight and a deferred answer (stored text). Read first without the
    lock; one that changes is read again and rewritten under its session's capture lock."""
    for path in _each(os.path.dirname(_layout.capture_record("x"))):
        data = _vault.read_json(path)
        sid = data.get("session_id")
        if _followed(data, moved, transform) == data or not isinstance(sid, str):
            continue
        lock = _vault.open_lock(_layout.capture_lock(sid))
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            data = _vault.read_json(path)
            _rewrite(path, data, _followed(data, moved, transform))
        finally:
            os.close(lock)


def _followed(data: dict, moved: dict, transform) -> dict:
    """A capture record as the forget leaves it."""
    vaults = data.get("vaults")
    if not isinstance(vaults, dict):
        return data
    new = json.loads(json.dumps(vaults))
    for st in new.values():
        if not isinstance(st, dict):
            continue
        for holder in (st, st.get("intent")):
            if isinstance(holder, dict) and _moved(holder.get("file"), moved):
                holder["file"] = _moved(holder["file"], moved)
        for key in ("pending", "deferred"):
            item = st.get(key)
            if transform is not None and isinstance(item, dict) and isinstance(item.get("text"), str):
                item["text"] = transform(item["text"])
    return {**data, "vaults": new}


def _writer_records(moved: dict) -> None:
    """The session writer's record of the file it created (a renamed file: its new name)."""
    if not moved:
        return
    for path in _each(os.path.dirname(_layout.writer_record("x"))):
        data = _vault.read_json(path)
        if _moved(data.get("path"), moved):
            _rewrite(path, data, {**data, "path": _moved(data["path"], moved)})


def _torn(gone: set, moved: dict, sessions, transform) -> None:
    """Torn remnants (``<file name>.<size>.torn``, a crashed writer's ``<id>.<pid>.tmp``): a
    removed file's go, a renamed one's follow its name, and all go through ``transform``."""
    from .privacy import rules

    folder = _layout.torn_dir()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    forgotten = rules(reload=True)
    for name in names:
        path = os.path.join(folder, name)
        base = name[:name.rfind(".md.") + 3] if ".md." in name else None
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if base in gone or (name.endswith(".tmp") and _tmp_forgotten(data, forgotten, sessions)):
            _unlink(path)
            continue
        if transform is not None:
            text = data.decode("utf-8", "surrogateescape")
            new = transform(text)
            if new != text:
                _vault.write_private(path, new.encode("utf-8", "surrogateescape"))
        if base in moved:
            try:
                os.replace(path, os.path.join(folder, moved[base] + name[len(base):]))
            except OSError:
                pass


def _logs(names: set, transform) -> None:
    """chrollo's own logs (``logs/<name>.log`` and the ``.1`` rotated beside it): an error may
    name a session file — a removed or renamed one's name becomes its slug-free key — and every
    line goes through ``transform``. (The receipts are :mod:`chrollo.receipts`'.)"""
    from .fileformat import slug_free

    folder = _layout.logs_dir()
    try:
        found = sorted(n for n in os.listdir(folder) if n.endswith((".log", ".log.1")))
    except OSError:
        return
    swap = {n[:-3]: slug_free(n)[:-3] for n in names if n.endswith(".md")}
    for n in found:
        path = os.path.join(folder, n)
        try:
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8", "surrogateescape")
        except OSError:
            continue
        new = text
        for old, key in swap.items():
            new = new.replace(old, key)
        if transform is not None:
            new = transform(new)
        if new != text:
            _vault.write_private(path, new.encode("utf-8", "surrogateescape"))


def _tmp_forgotten(data: bytes, rules, sessions) -> bool:
    """Does a crashed writer's temp file (a whole new session file) belong to a forgotten session?"""
    from .fileformat import parse_frontmatter

    sid = parse_frontmatter(data[:8192].decode("utf-8", "replace").split("\n"))[0].get("session_id")
    return isinstance(sid, str) and (sid in sessions or rules.forgotten(sid))


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _mesh(names: set, home: str | None) -> None:
    """The mesh's records of these session files (by their slug-free keys: a published name
    carries the redacted title's slug, a peer's copy the peer's): taken out now, not at the next
    publication; the last signed envelope (it lists the names) is signed again by the next one."""
    from .fileformat import slug_free

    keys = {slug_free(n) for n in names}
    folder = os.path.dirname(_layout.mesh_manifest_cache(home))
    if not os.path.isdir(folder):
        return
    from .mesh import records

    def drop(key) -> bool:
        return isinstance(key, str) and key.endswith(".md") and slug_free(os.path.basename(key)) in keys

    stems = [n[:-3] for n in names if n.endswith(".md")]

    def naming(value) -> bool:  # (an own file's record holds the names its links point to)
        text = repr(value)
        return any(s in text for s in stems)

    sets = [(_layout.mesh_manifest_cache(home), _layout.mesh_manifest_log(home))]
    for index, journal in ((_layout.mesh_folder_index, _layout.mesh_folder_log),
                           (_layout.mesh_peer_files, _layout.mesh_peer_files_log)):
        d, whole, log = os.path.dirname(index("", home)), os.path.basename(index("", home)), \
            os.path.basename(journal("", home))
        try:
            found = sorted(n for n in os.listdir(d) if n.endswith(whole))
        except OSError:
            found = []
        sets += [(os.path.join(d, n), os.path.join(d, n[:-len(whole)] + log)) for n in found]
    for path, log in sets:
        records.forget(path, log, drop, naming)
    for path in _each(os.path.dirname(_layout.mesh_peer_record("", home))):  # where a pull's sweep left off
        data = _vault.read_json(path)
        if drop(data.get("sweep")):
            _rewrite(path, data, {**data, "sweep": ""})
    state = _layout.mesh_publish_state(home)
    try:
        with open(state, "rb") as fh:
            held = any(k.encode() in fh.read() for k in keys | names)
    except OSError:
        held = False
    if held:  # (its sweep position may name the file: the next publication walks every file)
        _unlink(state)
    _unlink(_layout.mesh_published_envelope(home))
