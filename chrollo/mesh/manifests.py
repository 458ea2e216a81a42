"""Signed manifests, the heart of the mesh's trust layer: what this node publishes and what it
accepts against a peer's manifest. Knows no transport.

**Publishing.** A node publishes its own sessions only (top level of its vault, never
``peers/``), redacted of secrets, listed in a manifest ``{"v": 2, "id", "name", "seq", "time",
"files": [{"name", "sha256", "size"}], "withdrawn": [name, …]}`` that it signs with its key;
``withdrawn`` names the files ``chrollo forget`` removed here, so honest peers drop their copies; a
``withdrawal`` statement (the same list at the seq it last changed, signed apart) and the
``relayed`` statements of other nodes let a peer that missed a withdrawal learn it from any
member (see MAX_RELAYED). The signed envelope
``{"v": 2, "cert", "manifest" (base64), "sig" (base64)}`` is what every transport carries,
byte for byte. ``seq`` grows by one whenever the list changes.

**Accepting.** Given a peer paired by ID and a :class:`Source` (any transport), :func:`pull`
verifies the envelope — the certificate's fingerprint must be the pinned ID and the signature
must hold — refuses a manifest older than one already seen (rollback) or a second, different
manifest with the same ``seq``, bounds names, sizes, counts, JSON depth and the peer's byte
quota, checks every body against its signed size and sha256, and writes it into
``<vault>/peers/<peer name>/`` without following any link. The same peer reached by any
transport gives byte-identical folders. A peer's ``withdrawn`` files are deleted from its
folder, and a session the local user forgot (a tombstone, :mod:`chrollo.privacy`) is never
taken again.
"""
from __future__ import annotations

import base64
import bisect
import datetime as dt
import fcntl
import hashlib
import json
import os
import re
import stat
import time

from .. import clock as _clock
from .. import layout as _layout
from .. import vault as _vault
from ..redact import Redactor
from ..sanitize import clean
from . import identity as _identity
from . import records as _records
from .files import (FILE_RE, MAX_CERT, MAX_FILE, MAX_FILES, MAX_MANIFEST, Refused, bounded_json, own_files,
                    peer_folder_fd, read_path, session_key, sha_at, valid_file_name, write_at)

KEEP_BYTES = 256 << 20  # redacted bytes kept in memory between hashing and sending
BATCH_BYTES = 32 << 20  # raw bytes read before they are redacted together (on every core)
PEER_DEADLINE = 1800.0   # seconds for everything from one peer (`mesh sync --timeout`)
BLOCK = 4096             # quota unit: a file costs its size in blocks, one at least
# A manifest signed longer ago than this gives no new files (its withdrawals still apply).
# Why a bound at all: a receiver that has not synced since a peer withdrew a session cannot
# tell a replayed older publication from the newest one, and only time can bound the replay.
# Why 7 days: an honest node re-signs its manifest at least once a day when it syncs or
# serves (REFRESH), so a week covers a peer offline over a long weekend and more, while a
# saved publication stops working a week after it was signed. The cost: a node that has not
# synced for a week gives nothing new until it does (what it gave before stays).
MAX_AGE = 7 * 86400
REFRESH = 86400          # an unchanged manifest is signed again after a day
# Within MAX_AGE, what tells a receiver that missed a withdrawal about it is the other members:
# each manifest carries its node's withdrawal statement (the keys it withdrew, at the seq it
# withdrew them, signed apart so it can travel alone) and relays the newest statement it took
# from each peer. A receiver that learns "B withdrew K at seq n" — from B or from any member —
# takes none of K from a manifest of B older than n, replayed or not (see :func:`_learn`).
MAX_RELAYED = 64         # statements of other nodes a manifest relays
MAX_STATEMENT = 1 << 18  # bytes of one statement relayed (a longer list: MAX_AGE alone bounds a replay)
_GONE = ("gone_seq", "gone", "gone_stmt")  # what a peer record keeps of that peer's newest statement


class TransportError(Exception):
    """A transport could not move the bytes (unreachable, timed out, refused the connection)."""


class Source:
    """What a transport offers the trust layer: a peer's raw envelope and raw file bodies."""

    def manifest(self, peer_id: str) -> bytes | None:  # None: the peer has published nothing yet
        raise NotImplementedError

    def file(self, peer_id: str, name: str, size: int) -> bytes:
        raise NotImplementedError

    def files(self, peer_id: str, entries: list):
        """(entry, its bytes — or the Refused/TransportError/OSError for that one) for each
        manifest entry, in order, fetched lazily (a transport batches them: per file, a
        request or a folder lookup cost more than the bytes)."""
        for e in entries:
            try:
                yield e, self.file(peer_id, e["name"], e["size"])
            except (Refused, TransportError, OSError) as err:
                yield e, err

    def close(self) -> None:
        pass

    deadline: float | None = None  # time.monotonic() by which the pull must be done (set by pull)


# ------------------------------------------------------------------------------ publishing

class Publication:
    """This node's signed envelope and the redacted bytes behind it. Files go by their
    published names (:func:`published_name`); ``real`` maps each to the file here, ``links``
    the ones whose frontmatter links are rewritten to their targets' published names."""

    def __init__(self, envelope: bytes, entries: list, vault: str, redactor: Redactor, kept: dict | None = None,
                 real: dict | None = None, links: dict | None = None):
        self.envelope, self.entries, self.vault, self.redactor = envelope, entries, vault, redactor
        self.by_name = {e["name"]: e for e in entries}
        self.real = real if real is not None else {n: n for n in self.by_name}
        self.links = links or {}
        self.kept = kept or {}  # redacted bytes made while hashing (first sync: redact once, not twice)

    def data(self, name: str) -> bytes:
        """The bytes of ``name`` (a published name) as published; Refused if the file changed
        since (next round)."""
        e = self.by_name.get(name)
        if e is None:
            raise Refused(f"{name} is not published")
        real = self.real[name]
        data = self.kept.pop(real, None)
        if data is not None:
            return data  # (hashed into the manifest by this publication: nothing can differ)
        data = outgoing(os.path.join(self.vault, real), self.redactor, links=self.links.get(name))
        if hashlib.sha256(data).hexdigest() != e["sha256"]:
            raise Refused(f"{name} changed since the manifest was made")
        return data


def outgoing(path: str, redactor: Redactor, raw: bytes | None = None, links: dict | None = None) -> bytes:
    """A session file's bytes as they leave this machine (redacted; ``links``: see :func:`relink`)."""
    if raw is None:
        raw = read_path(path, MAX_FILE)
    data = redactor.redact_bytes(raw)
    return relink(data, links) if links else data


# Frontmatter links naming another session file by its name (format 2): a name holds its
# title's slug, so a link leaves as the target's published name, never as its name here.
LINKS = ("previous", "parent")
_FRONT_KEYS = frozenset(("session_id", "cwd", "repository", "title", *LINKS))  # what publishing reads


def _front(raw: bytes) -> dict:
    """A session file's frontmatter (its first 16 KB at most; only the frontmatter is decoded)."""
    from ..fileformat import parse_frontmatter

    end = raw.find(b"\n---", 3, 16384)
    head = raw[:end + 5] if end > 0 else raw[:16384]
    return parse_frontmatter(head.decode("utf-8", "replace").split("\n"), _FRONT_KEYS)[0]


def _origin(meta: dict) -> list:
    """[session id, working directory, repository] from a session file's frontmatter (None if absent)."""
    return [v if isinstance(v, str) else None
            for v in (meta.get("session_id"), meta.get("cwd"), meta.get("repository"))]


def _links(meta: dict) -> dict:
    """{link: target file stem} of the frontmatter's links to other session files."""
    out = {}
    for k in LINKS:
        v = meta.get(k)
        if isinstance(v, str) and v.startswith("[[") and v.endswith("]]"):
            out[k] = v[2:-2].split("|")[0]
    return out


def _title_slug(meta: dict) -> str | None:
    """The slug of a (redacted) file's title; None for a file without one (format 1)."""
    from ..obsidian import slug

    title = meta.get("title")
    return slug(title) if isinstance(title, str) else None


def published_name(name: str, title_slug: str | None) -> str:
    """What session file ``name`` is called when it leaves: its slug made again from the
    redacted title (``title_slug``), so nothing a redaction rule catches in a first prompt
    leaves in a name; without a title, its name without a slug (:func:`.files.session_key`)."""
    key = session_key(name)
    return f"{key[:17]}_{title_slug}_{key[18:]}" if title_slug else key


def relink(data: bytes, links: dict) -> bytes:
    """``data`` with its frontmatter ``links`` ({link: new target stem, or None: dropped}) rewritten."""
    from ..fileformat import yaml_quote

    end = data.find(b"\n---\n", 3) if data.startswith(b"---\n") else -1
    if end < 0:
        return data
    out = []
    for ln in data[:end].split(b"\n"):
        key = ln.partition(b": ")[0].decode("ascii", "replace")
        if key in links:
            if links[key]:
                out.append(f"{key}: {yaml_quote('[[' + links[key] + ']]')}".encode())
            continue
        out.append(ln)
    return b"\n".join(out) + data[end:]


def _held_back(name: str, origin: list, rules, memo: dict) -> bool:
    """Must this own file stay here? Forgotten (a tombstone, by name or session id — a file
    copied back by hand included) or captured in a project excluded now."""
    sid, cwd, repository = (origin + [None, None, None])[:3]
    if rules.forgotten(sid) or rules.forgotten_name(name):
        return True
    if (cwd or repository) and rules.exclude:
        key = (cwd, repository)
        if key not in memo:
            memo[key] = bool(rules.excluded(cwd, repository or ""))
        return memo[key]
    return False


SWEEP = 1000        # own files a publication stats besides those the changes journal names
# (home, vault) -> what this process's last publication made of its records: names, entries.
# The LAN server publishes for every manifest asked; after a turn appended to a session, the
# same files keep the same names, and only that file's entry is made again.
_LAST: dict = {}
RACY_NS = 10 ** 9   # a folder mtime read this soon after it changed may change again unseen


def publish(ident, name: str, vault: str, home: str) -> Publication:
    """Sign this node's current manifest. What changed since the last publication is found by
    :func:`_survey` (capture's journal, not a stat of every file); each file's record (size,
    mtime, hashes, published name's parts) is kept for the next one, keyed by redaction rules."""
    redactor = Redactor.from_config(home)
    lock = _vault.open_lock(_layout.mesh_publish_lock(home))
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # `serve` and `sync` may publish at once: one seq per change
        return _publish(ident, name, vault, home, redactor)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)  # (redaction workers forked meanwhile share the descriptor)
        os.close(lock)


def _publish(ident, name: str, vault: str, home: str, redactor: Redactor) -> Publication:
    cache, log = _layout.mesh_manifest_cache(home), _layout.mesh_manifest_log(home)
    records, log_lines = _records.load(cache, log, redactor.digest)  # (new rules: every hash is void)
    seen, everything, state = _survey(vault, home, records)
    files = records or {}
    fresh = {} if everything else files
    changed = set()
    entries, kept, room = [], {}, KEEP_BYTES
    from ..privacy import rules as privacy_rules

    privacy, memo, held = privacy_rules(reload=True), {}, set()
    batch, pending, waiting = [], 0, []  # files to redact together (on every core when worth it)
    before = {}  # own file read again -> its record's published-name parts before

    def redact_batch(pool):
        """Start redacting the batch; finish the one before (its workers ran while this one was read)."""
        if batch:
            raws = [b[2] for b in batch]
            keys = [hashlib.sha256(r).hexdigest() for r in raws]
            waiting.append((list(batch), keys, redactor.redact_later(raws, pool, keys)))
            batch.clear()
        while len(waiting) > (1 if pool.running else 0):
            finish_batch(*waiting.pop(0))

    def finish_batch(files, keys, finish):
        nonlocal room
        for (fname, stamp, raw, meta), key, data in zip(files, keys, finish()):
            # (most files hold no secret: the bytes that leave are the file's, hashed once)
            fresh[fname] = stamp + [key if data is raw else hashlib.sha256(data).hexdigest(), len(data),
                                    _origin(meta), _title_slug(meta if data is raw else _front(data)),
                                    _links(meta), None]
            changed.add(fname)
            if len(data) <= room:
                kept[fname], room = data, room - len(data)
    with redactor.pool() as pool:
        for fname, fpath, st in seen:
            if st is None or st.st_size > MAX_FILE:
                if fresh.pop(fname, None) is not None:
                    changed.add(fname)
                continue
            stamp = [st.st_size, st.st_mtime_ns]
            hit = files.get(fname)
            if hit and hit[:2] == stamp and len(hit) >= 8:
                fresh[fname] = hit
                continue
            if hit and len(hit) >= 8:
                before[fname] = hit[4:7]  # (its published name's parts until now)
            raw = read_path(fpath, MAX_FILE)
            batch.append((fname, stamp, raw, _front(raw)))
            pending += len(raw)
            if pending >= BATCH_BYTES:
                redact_batch(pool)
                pending = 0
        redact_batch(pool)
        while waiting:
            finish_batch(*waiting.pop(0))
    def entry(fname: str, pub: str) -> dict:
        """``fname``'s manifest entry as ``pub``; its links rewritten to what they name as published."""
        f = fresh[fname]
        sha, size, links = f[2], f[3], f[6]
        # a link names its target as published; one not published here, without its slug
        want = {k: names.get(t + ".md", "")[:-3] or (session_key(t + ".md")[:-3] if valid_file_name(t + ".md")
                                                      else None)
                for k, t in links.items()}
        relinked.pop(pub, None)
        if want != links:
            if f[7] and f[7][0] == want and fname not in kept:
                sha, size = f[7][1:3]
            else:
                data = relink(kept[fname] if fname in kept else
                              outgoing(os.path.join(vault, fname), redactor), want)
                sha, size = hashlib.sha256(data).hexdigest(), len(data)
                if fname in kept:
                    kept[fname] = data
                fresh[fname] = f[:7] + [[want, sha, size]]
                changed.add(fname)
            relinked[pub] = want
        return {"name": pub, "sha256": sha, "size": size}

    scope = (frozenset(privacy.sessions), frozenset(privacy.file_hashes), tuple(privacy.exclude))
    last = _LAST.pop((home, vault), None)
    if last and not everything and last["records"] is fresh and last["scope"] == scope and all(
            n in last["at"] and n in fresh and fresh[n][4:7] == before.get(n, fresh[n][4:7]) for n in changed):
        # the same files under the same names (a turn appended): only the changed entries again
        names, taken, held, relinked = last["names"], last["taken"], last["held"], last["relinked"]
        entries, pieces, at = last["entries"], last["pieces"], last["at"]
        for fname in list(changed):
            i = at[fname]
            entries[i] = entry(fname, names[fname])
            pieces[i] = _pieces([entries[i]])[0]
    else:
        order = sorted(fresh)
        if privacy.file_hashes or privacy.sessions or privacy.exclude:
            held = {n for n in order if _held_back(n, fresh[n][4], privacy, memo)}
            for fname in held:
                kept.pop(fname, None)
            order = [n for n in order if n not in held]
        # (10,000 files a publication in a new process: each step over all of them at once)
        pubs = [published_name(n, fresh[n][5]) for n in order]
        taken = set(pubs)
        if len(taken) < len(pubs) or any(not valid_file_name(p) for p, n in zip(pubs, order) if p != n):
            taken.clear()
            for i, (fname, pub) in enumerate(zip(order, pubs)):
                n = 0
                while pub in taken or (pub != fname and not valid_file_name(pub)):  # (two titles slugged alike at one second)
                    n += 1
                    pub = f"{fname[:17]}_n{n}.md"
                taken.add(pub)
                pubs[i] = pub
        names = dict(zip(order, pubs))  # file here -> its published name
        at = dict(zip(order, range(len(order))))
        relinked = {}
        records_of = [fresh[n] for n in order]
        entries = [{"name": p, "sha256": f[2], "size": f[3]} for p, f in zip(pubs, records_of)]
        for i, f in enumerate(records_of):
            if f[6]:  # links to rewrite
                entries[i] = entry(order[i], pubs[i])
        pieces = _pieces(entries)
    _LAST[(home, vault)] = {"records": fresh, "scope": scope, "names": names, "taken": taken, "held": held,
                            "relinked": relinked, "entries": entries, "pieces": pieces, "at": at}
    _records.keep(cache, log, redactor.digest, fresh, changed, everything, log_lines)
    _vault.write_private(_layout.mesh_publish_state(home), json.dumps(state))
    real = {v: k for k, v in names.items()}
    withdrawn = withdrawn_names(set(taken), held)
    relayed = _relayed(home, ident.id)
    files_json = "[" + ",".join(pieces) + "]"  # (10,000 entries: encoded once, for the digest and the manifest)
    digest = hashlib.sha256((json.dumps([ident.id, name, withdrawn, relayed]) + files_json).encode()).hexdigest()
    pub_path, env_path = _layout.mesh_published(home), _layout.mesh_published_envelope(home)
    last = _vault.read_json(pub_path)
    signed = last.get("signed") if isinstance(last.get("signed"), (int, float)) else 0
    when = _clock.now().timestamp()
    if last.get("digest") == digest and 0 <= when - signed < REFRESH:
        if isinstance(last.get("envelope"), str):  # (as an older version kept it)
            envelope = last["envelope"].encode()
        else:  # the envelope written beside it, if it is the one signed (a crash between the two
            try:  # writes below leaves another: never served for this digest)
                envelope = read_path(env_path, MAX_MANIFEST + 2 * MAX_CERT)
            except OSError:
                envelope = None
            if envelope is not None and hashlib.sha256(envelope).hexdigest() != last.get("envelope_sha"):
                envelope = None
        if envelope is not None:
            return Publication(envelope, list(entries), vault, redactor, kept, real, dict(relinked))
    # changed, or signed a day ago: signed again (receivers take nothing new from a
    # manifest older than MAX_AGE, so an honest node keeps its signature fresh)
    seq = int(last.get("seq", 0)) + 1
    # (the withdrawal statement as of the seq its list last changed: a later manifest that
    # withdraws nothing new does not make older ones "older than a withdrawal")
    gone_of = hashlib.sha256(json.dumps(withdrawn).encode()).hexdigest()
    own = last.get("gone_stmt") if last.get("gone_of") == gone_of and isinstance(last.get("gone_stmt"), dict) \
        else (_statement(ident, seq, withdrawn) if withdrawn else None)
    envelope, seq = _sign(ident, name, files_json, seq, withdrawn, when, {"withdrawal": own, "relayed": relayed})
    _vault.write_private(env_path, envelope.decode("ascii"))
    _vault.write_private(pub_path, json.dumps({"seq": seq, "digest": digest, "signed": when,
                                               "envelope_sha": hashlib.sha256(envelope).hexdigest(),
                                               "gone_of": gone_of, "gone_stmt": own}))
    return Publication(envelope, entries, vault, redactor, kept, real, relinked)


def _survey(vault: str, home: str, files: dict | None) -> tuple[list, bool, dict]:
    """([(own file, its path, its stat or None if gone)] to look at, whether that is every own
    file, the state to keep once published).

    Every file is walked (and capture's journal restarted first, so that no change falls
    between the two) when there is no trusted state: the first time, new redaction rules, a
    journal missing, damaged or full, a day since the last walk, or the vault folder's mtime
    moved other than by the session files chrollo created (:func:`chrollo.listing.created_since`:
    a file deleted, renamed or replaced). Otherwise only the files the journal names, those
    created, and a sweep of the next SWEEP files by name (so an in-place edit by hand is
    found within files / SWEEP publications)."""
    from .. import changes
    from ..listing import created_since

    path = _layout.mesh_publish_state(home)
    st = _vault.read_json(path)
    real = os.path.realpath(vault)
    now = time.time_ns()
    try:
        mtime = os.stat(vault).st_mtime_ns
    except OSError:
        mtime = None
    look = None
    try:
        if files is not None and mtime is not None and st.get("vault") == real and isinstance(st.get("dir"), int) \
                and 0 <= now / 1e9 - st["walked"] < REFRESH:
            got = changes.since(vault, st["gen"], st["offset"], home)
            made = created_since(vault, st["dir"], mtime) if got is not None and mtime != st["dir"] else []
            if got is not None and made is not None:
                look = got[0] | set(made)
                order = sorted(files)
                at = bisect.bisect_right(order, st.get("sweep") or "")
                sweep = (order[at:] + order[:at])[:SWEEP]
                look.update(sweep)
                state = {**st, "offset": got[1], "sweep": sweep[-1] if sweep else ""}
    except (KeyError, TypeError, ValueError, AttributeError):
        look = None
    if look is None:
        gen, offset = changes.restart(vault, home)
        try:
            mtime = os.stat(vault).st_mtime_ns
        except OSError:
            mtime = None
        state = {"vault": real, "gen": gen, "offset": offset, "sweep": "", "walked": now / 1e9}
        seen = [(e.name, e.path, e.stat(follow_symlinks=False)) for e in own_files(vault)]
    else:
        seen = []
        for fname in sorted(look):
            if not valid_file_name(fname):
                continue
            fpath = os.path.join(vault, fname)
            try:
                s = os.stat(fpath, follow_symlinks=False)
            except FileNotFoundError:
                s = None
            seen.append((fname, fpath, s if s is None or stat.S_ISREG(s.st_mode) else None))
    state["dir"] = mtime if mtime is not None and mtime < now - RACY_NS else None
    return seen, look is None, state


# printable ASCII but quotes and backslashes (every session file name: nothing to escape), and
# the newline that joins the names tested at once
_PLAIN = re.compile(r'[ !#-\[\]-~\n]*')


def _pieces(entries: list) -> list:
    """Each manifest entry as JSON, compact — ``json.dumps(e, separators=(",", ":"))``, 5×
    faster: the names are tested for characters to escape all at once (joined by newlines, so
    a name holding one goes the json.dumps way too)."""
    names = "\n".join([e["name"] for e in entries])
    if _PLAIN.fullmatch(names) and names.count("\n") == len(entries) - 1:
        # (each name quoted in place: a call a name cost 10,000 entries 2 ms more)
        return [f'{{"name":"{e["name"]}","sha256":"{e["sha256"]}","size":{e["size"]}}}' for e in entries]
    return [f'{{"name":{json.dumps(e["name"])},"sha256":"{e["sha256"]}","size":{e["size"]}}}' for e in entries]


def withdrawn_names(published: set, held: set = frozenset()) -> list:
    """This node's forgotten sessions (tombstones) and the sessions it holds back (an excluded
    project's), named by their keys (:func:`.files.session_key`: no slug, so no title leaves in
    the list): honest peers drop every copy of theirs under any name."""
    from ..privacy import rules

    gone = rules().keys | {session_key(n) for n in held if valid_file_name(n)}
    if not gone:
        return []
    return sorted(n for n in gone - {session_key(n) for n in published} if valid_file_name(n))[:MAX_FILES]


def _sign(ident, name: str, files_json: str, seq: int, withdrawn: list = (), when: float | None = None,
          statements: dict | None = None) -> tuple[bytes, int]:
    """The signed envelope of a manifest whose files are ``files_json`` (their JSON, compact);
    ``statements``: {"withdrawal": this node's statement, "relayed": others'} (see MAX_RELAYED)."""
    when = _clock.now().timestamp() if when is None else when
    head = json.dumps({"v": 2, "id": ident.id, "name": name, "seq": seq,
                       "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))}, separators=(",", ":"))
    extra = "".join(f',"{k}":' + json.dumps(v, separators=(",", ":")) for k, v in (statements or {}).items() if v)
    manifest = (head[:-1] + ',"files":' + files_json + ',"withdrawn":'
                + json.dumps(list(withdrawn), separators=(",", ":")) + extra + "}").encode()
    # json.dumps({"v": 2, "cert", "manifest", "sig"}) byte for byte, put together: base64 needs
    # no escaping, and json.dumps scanned the 1.7 MB of it for characters to escape (~4 ms)
    envelope = b"".join((b'{"v": 2, "cert": ', json.dumps(ident.cert_pem.decode()).encode(), b', "manifest": "',
                         base64.b64encode(manifest), b'", "sig": "', base64.b64encode(ident.sign(manifest)), b'"}'))
    return envelope, seq


def _statement(ident, seq: int, withdrawn: list) -> dict:
    """This node's withdrawal statement: ``withdrawn`` (session keys) as of ``seq``, signed."""
    stmt = json.dumps({"v": 2, "id": ident.id, "seq": seq, "withdrawn": list(withdrawn)}, separators=(",", ":"))
    return {"stmt": base64.b64encode(stmt.encode()).decode("ascii"),
            "sig": base64.b64encode(ident.sign(stmt.encode())).decode("ascii")}


def _relayed(home: str, own_id: str) -> list:
    """The newest statement taken from each peer (their records), to relay: sorted, bounded."""
    folder = os.path.dirname(_layout.mesh_peer_record(own_id, home))
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for n in names:
        nid = n[:-5]
        if not n.endswith(".json") or nid == own_id or not _identity.is_id(nid):
            continue
        got = _vault.read_json(os.path.join(folder, n)).get("gone_stmt")
        if isinstance(got, dict) and isinstance(got.get("stmt"), str) and len(got["stmt"]) <= MAX_STATEMENT * 4 // 3 + 4:
            out.append({"stmt": got["stmt"], "sig": got.get("sig")})
        if len(out) >= MAX_RELAYED:
            break
    return out


def verify_statement(entry) -> dict | None:
    """``{"id", "seq", "withdrawn"}`` of a withdrawal statement signed by the node it names,
    whose certificate this node holds; None for anything else (never raises)."""
    from .identity import known_cert

    try:
        stmt = base64.b64decode(entry["stmt"], validate=True)
        sig = base64.b64decode(entry["sig"], validate=True)
        if len(stmt) > MAX_STATEMENT or len(sig) > 1024:
            return None
        s = bounded_json(stmt, MAX_STATEMENT)
        nid, seq, gone = s["id"], s["seq"], s["withdrawn"]
        if not _identity.is_id(nid) or not isinstance(seq, int) or isinstance(seq, bool) or seq < 1 \
                or not isinstance(gone, list) or len(gone) > MAX_FILES or not all(valid_file_name(n) for n in gone):
            return None
        cert = known_cert(nid)
        if cert is None or _identity.verify(cert, stmt, sig) != nid:
            return None
    except (Refused, ValueError, TypeError, KeyError, AttributeError):
        return None
    return {"id": nid, "seq": seq, "withdrawn": gone}


def _learn(m: dict, home: str) -> list:
    """Keep, in each named peer's record, the newest withdrawal statement manifest ``m``
    carries of it (its own and those it relays); the ids whose record moved."""
    entries = [m.get("withdrawal")] + (m.get("relayed") if isinstance(m.get("relayed"), list) else [])[:MAX_RELAYED]
    moved = []
    for e in entries:
        s = verify_statement(e) if isinstance(e, dict) else None
        if s is None:
            continue
        path = _layout.mesh_peer_record(s["id"], home)
        rec = _vault.read_json(path)
        if s["seq"] > (rec.get("gone_seq") if isinstance(rec.get("gone_seq"), int) else 0):
            rec.update(gone_seq=s["seq"], gone=s["withdrawn"], gone_stmt={"stmt": e["stmt"], "sig": e["sig"]})
            _home_dirs(path)
            _vault.write_private(path, json.dumps(rec))
            moved.append(s["id"])
    return moved


def _home_dirs(path: str) -> None:
    from ..homedir import make_private_dirs

    make_private_dirs(os.path.dirname(path))


# ------------------------------------------------------------------------------- accepting

def verify_envelope(raw: bytes, pinned_id: str) -> dict:
    """The manifest inside ``raw`` if it is signed by the node ``pinned_id``; else Refused."""
    env = bounded_json(raw, MAX_MANIFEST + MAX_CERT, depth=2)
    if not isinstance(env, dict) or env.get("v") != 2:
        raise Refused("not a chrollo v2 signed manifest")
    cert, man, sig = env.get("cert"), env.get("manifest"), env.get("sig")
    if not (isinstance(cert, str) and len(cert) <= MAX_CERT and isinstance(man, str) and isinstance(sig, str)
            and len(sig) <= 1024):
        raise Refused("signed manifest is malformed")
    try:
        mbytes, sbytes = base64.b64decode(man, validate=True), base64.b64decode(sig, validate=True)
        signer = _identity.verify(cert.encode(), mbytes, sbytes)
    except ValueError as e:
        raise Refused(f"manifest signature does not verify ({e})") from None
    if signer != pinned_id:
        raise Refused(f"manifest is signed by {signer}, not by the paired node {pinned_id}")
    m = bounded_json(mbytes)
    if not isinstance(m, dict) or m.get("id") != pinned_id:
        raise Refused("manifest names another node")
    seq = m.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise Refused("manifest has no valid sequence number")
    m["files"] = check_entries(m.get("files"))
    gone = m.get("withdrawn", [])
    if not isinstance(gone, list) or len(gone) > MAX_FILES or not all(valid_file_name(n) for n in gone):
        raise Refused("manifest withdrawn list refused")
    m["sha"] = hashlib.sha256(mbytes).hexdigest()  # (what a second manifest of the same seq must be)
    return m


_SHA = re.compile(r"[0-9a-f]{64}")
_NAMES = re.compile(f"(?:{FILE_RE.pattern})(?:\n(?:{FILE_RE.pattern}))*")
_HEX = b"0123456789abcdef"


def _all_hex64(shas: list) -> bool:
    """Is every item 64 lowercase hex digits? (bytes.translate at memory speed: the regex over
    10,000 of them was ~5 ms a pull)"""
    if {s.__class__ for s in shas} != {str} or {len(s) for s in shas} != {64}:
        return False
    try:
        return not "".join(shas).encode("ascii").translate(None, _HEX)
    except UnicodeEncodeError:
        return False


def check_entries(entries) -> list:
    """``entries`` if every one is {"name": a session file name, listed once, "sha256": 64 hex
    digits, "size": 0..MAX_FILE}; else Refused, naming the first that is not."""
    if not isinstance(entries, list):
        raise Refused("manifest files is not a list")
    if len(entries) > MAX_FILES:
        raise Refused(f"manifest lists {len(entries)} files (at most {MAX_FILES})")
    try:  # every entry at once, each test one pass in C (10,000 entries one by one: ~30 ms a sync)
        names, sizes = [x["name"] for x in entries], [x["size"] for x in entries]
        joined = "\n".join(names)
        if (not entries or (_NAMES.fullmatch(joined) and ".." not in joined
                            and len(set(names)) == len(names) and {type(n) for n in sizes} == {int}
                            and 0 <= min(sizes) and max(sizes) <= MAX_FILE
                            and _all_hex64([x["sha256"] for x in entries]))):
            return entries
    except (TypeError, KeyError):
        pass  # (the one by one check says which entry is wrong)
    seen = set()
    for x in entries:
        if not isinstance(x, dict):
            raise Refused("manifest entry is not an object")
        name, sha, size = x.get("name"), x.get("sha256"), x.get("size")
        if not valid_file_name(name):
            raise Refused(f"file name refused: {clean(repr(name)[:80])}")
        if name in seen:
            raise Refused(f"file listed twice: {name}")
        seen.add(name)
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_FILE:
            raise Refused(f"size refused for {name}: {clean(repr(size)[:20])}")
        if not isinstance(sha, str) or not _SHA.fullmatch(sha):
            raise Refused(f"sha256 refused for {name}")
    return entries


def _by_name(e: dict) -> str:
    return e["name"]


_SIGNED = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z")


def _signed_at(m: dict) -> float | None:
    """When a manifest says it was signed (``time``, as :func:`_sign` writes it); None if it
    says nothing readable. (Read by hand: strptime's import was ~3 ms of every pull.)"""
    t = m.get("time")
    g = _SIGNED.fullmatch(t) if isinstance(t, str) else None
    try:
        return dt.datetime(*map(int, g.groups()), tzinfo=dt.timezone.utc).timestamp() if g else None
    except ValueError:  # (a 30th of February)
        return None


def _blocks(size: int) -> int:
    """What a file costs against a quota: its size in 4 KiB blocks, one at least — so 10,000
    empty files cost 40 MB, not nothing."""
    return (-(-size // BLOCK) or 1) * BLOCK


def _blocks_of(entries: list) -> int:
    """:func:`_blocks` of every entry's size, summed (10,000 calls were ~4 ms a pull)."""
    return BLOCK * sum([-(-e["size"] // BLOCK) or 1 for e in entries])


def _held(fd: int) -> dict:
    """{name: [size, mtime ns, inode]} of the session files in a peer's folder (links and
    others ignored): one listing and one stat a file, for the whole pull. A copy whose stamp
    is the one recorded when it was written has not been touched since."""
    out = {}
    with os.scandir(fd) as it:
        for e in it:
            if valid_file_name(e.name):
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    out[e.name] = [st.st_size, st.st_mtime_ns, st.st_ino]
    return out


def _copies(fd: int, have: dict, known: dict | None) -> tuple[dict, str]:
    """({name: [size, mtime ns, inode]} of the copies in a peer's folder, the last one swept).
    While the folder's mtime is the one the last pull left (``known["dir"]``), the copies are
    the ones recorded then, and only a sweep of the next SWEEP of them is stat'ed (an edit in
    place is found within copies / SWEEP pulls); otherwise the folder is listed and every
    copy stat'ed (:func:`_held`)."""
    try:
        trusted = known is not None and known.get("dir") == os.fstat(fd).st_mtime_ns
    except OSError:
        trusted = False
    if not trusted:
        return _held(fd), ""
    held = {n: v[2:5] for n, v in have.items() if isinstance(v, list) and len(v) == 5}
    order = sorted(held)
    at = bisect.bisect_right(order, known.get("sweep") if isinstance(known.get("sweep"), str) else "")
    swept = (order[at:] + order[:at])[:SWEEP]
    for name in swept:
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return _held(fd), ""  # (gone, in a folder whose mtime did not move: trust nothing)
        held[name] = [st.st_size, st.st_mtime_ns, st.st_ino] if stat.S_ISREG(st.st_mode) else None
    return {n: v for n, v in held.items() if v is not None}, swept[-1] if swept else ""


def _flush(fd: int, names: list) -> None:
    """Received files onto the disk (they are renamed into place unsynced): a few, each and
    their folder; many, one os.sync() (10,000 fsyncs cost more; one sync flushes whatever
    else the machine has written, 65 ms under load, for one file)."""
    if len(names) > 64:
        os.sync()
        return
    for name in names:
        try:
            f = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=fd)
            try:
                os.fsync(f)
            finally:
                os.close(f)
        except OSError:
            pass
    if names:
        os.fsync(fd)


def batches(entries: list, size: int, count: int):
    """``entries`` (manifest entries) in runs of at most ``count`` files and about ``size``
    bytes (a file larger than ``size`` alone)."""
    run, total = [], 0
    for e in entries:
        if run and (total + e["size"] > size or len(run) >= count):
            yield run
            run, total = [], 0
        run.append(e)
        total += e["size"]
    if run:
        yield run


def _local_names(files: list) -> dict:
    """{a peer's name: the name its copy is kept under here} where they differ: a name whose
    title slug holds a line this user forgot (``forget --lines``) is kept without its slug, as
    the forget renamed the copy it scrubbed (chrollo.forget only when a pattern is kept)."""
    from ..privacy import rules

    if not rules().lines:
        return {}
    from ..forget import kept_name

    out = {}
    for e in files:
        kept = kept_name(e["name"])
        if kept != e["name"]:
            out[e["name"]] = kept
    return out


def pull(own_name: str, peer: dict, source: Source, vault: str, home: str, transport: str,
         timeout: float = PEER_DEADLINE, learned: list | None = None) -> dict:
    """Take what is new from ``peer`` through ``source`` into peers/<name>/; never raises for the
    peer's faults (they are listed in ``errors``), so one bad peer never stops the others.

    Bounded: everything from one peer within ``timeout`` seconds (a server dripping each file
    inside its own deadline once held `sync --all` for days); the peer's folder as a whole —
    files it lists now and copies of ones it no longer lists — within its quota, counted in
    4 KiB blocks (the oldest unlisted copies go first, then older listed files are not taken);
    new files only from a manifest signed within MAX_AGE (see :data:`MAX_AGE`), and none a
    withdrawal newer than the manifest names (see MAX_RELAYED). ``learned`` gets the ids of
    the nodes whose withdrawal statement this pull took (the caller pulls them again)."""
    started = time.monotonic()
    source.deadline = started + timeout
    out = {"peer": peer["name"], "id": peer["id"], "transport": transport, "seq": None, "files": 0,
           "downloaded": 0, "bytes": 0, "unchanged": 0, "skipped_quota": 0, "withdrawn": 0, "evicted": 0,
           "errors": []}
    fd = None
    try:
        raw = source.manifest(peer["id"])
        if raw is None:
            out["note"] = getattr(source, "notes", {}).get(peer["id"], "nothing published yet")
            return out
        m = verify_envelope(raw, peer["id"])
        got = _learn(m, home)  # (before this peer's record is read: its own statement)
        if learned is not None:
            learned.extend(got)
        state_path = _layout.mesh_peer_record(peer["id"], home)
        known = _vault.read_json(state_path)
        last = known.get("seq", 0)
        if m["seq"] < last:
            raise Refused(f"rollback refused: manifest seq {m['seq']} is older than seq {last} already taken")
        if m["seq"] == last and known.get("sha") not in (None, m["sha"]):
            raise Refused(f"two different manifests with seq {last}: refused")
        # a withdrawal this node knows of (from the peer or any member) that is newer than
        # this manifest: none of it is taken from it, and copies of it go (a replay)
        later = known.get("gone_seq") if isinstance(known.get("gone_seq"), int) else 0
        stale = {session_key(n) for n in known.get("gone", []) if valid_file_name(n)} if later > m["seq"] else set()
        if stale:
            m["files"] = [e for e in m["files"] if session_key(e["name"]) not in stale]
        out["seq"], out["files"] = m["seq"], len(m["files"])
        quota = int(peer.get("quota_mb", 512)) << 20
        fd = peer_folder_fd(vault, peer["name"], own_name)
        files_path, files_log = _layout.mesh_peer_files(peer["id"], home), _layout.mesh_peer_files_log(peer["id"], home)
        have, log_lines = _records.load(files_path, files_log, 1)
        whole, touched, received = have is None, set(), []
        if whole:  # (a record of an older version kept them in the peer record itself)
            have = known.get("files", {}) if isinstance(known.get("files"), dict) else {}
        local = _local_names(m["files"])  # (the name a copy is kept under here, where it differs)
        listed = {local.get(e["name"], e["name"]) for e in m["files"]}
        # by session key (a name without its slug): the owner forgot them (an honest peer drops
        # its copy, under any name), or a listed file now goes by another name (new redaction
        # rules, or a sender that published names as they were): one copy, the listed one
        held, swept = _copies(fd, have, None if whole else known)
        unlisted = [n for n in held if n not in listed]
        gone = {session_key(n) for n in m.get("withdrawn", [])} | stale
        renamed = {session_key(n) for n in listed} if unlisted else ()  # (10,000 keys: only when asked)
        for name in unlisted:
            key = session_key(name)
            if key in gone or key in renamed:
                try:
                    os.unlink(name, dir_fd=fd)  # (unlink never follows a link)
                    out["withdrawn"] += key in gone
                except FileNotFoundError:
                    pass
                del held[name]
                touched.add(name)
                have.pop(name, None)
        from ..privacy import forgotten_file, name_hash, rules

        signed = _signed_at(m)
        age = _clock.now().timestamp() - signed if signed is not None else None
        if age is None or age > MAX_AGE:
            _records.keep(files_path, files_log, 1, have, touched, whole, log_lines)  # (withdrawals done)
            _vault.write_private(state_path, json.dumps({k: v for k, v in known.items() if k not in ("files", "dir")}))
            raise Refused(f"manifest signed {m.get('time')!s:.20}, more than {MAX_AGE // 86400} days ago: its "
                          "withdrawals are applied, nothing new is taken from it (a replayed old publication, "
                          "or the peer has not synced since)")
        forgot = rules(reload=True).file_hashes  # (forgotten_file's test without the bytes, as one set)
        if rules().lines:  # (chrollo.forget and its imports only when a `forget --lines` pattern is kept)
            from ..forget import keep_forgotten
        else:
            keep_forgotten = None
        # what this user forgot is never taken: `chrollo forget` outranks the mesh
        take = [e for e in m["files"] if name_hash(e["name"]) not in forgot] if forgot else m["files"]
        used = _blocks_of(take)
        if used > quota:  # newest first until the quota is reached (else all: in any order)
            wanted, take, used = take, [], 0
            for e in sorted(wanted, key=_by_name, reverse=True):
                cost = _blocks(e["size"])
                if used + cost > quota:
                    out["skipped_quota"] += 1
                    continue
                used += cost
                take.append(e)
        keep = {local.get(e["name"], e["name"]) for e in take}
        for name in sorted(set(held) - listed, reverse=True):  # copies it no longer lists: newest kept
            if used + _blocks(held[name][0]) <= quota and len(keep) < MAX_FILES:
                used += _blocks(held[name][0])
                keep.add(name)
        for name in set(held) - keep:  # over the quota: out, so the folder never outgrows it
            try:
                os.unlink(name, dir_fd=fd)
                out["evicted"] += 1
            except OSError:
                pass
            touched.add(name)
            have.pop(name, None)
        todo = []
        for e in take:
            name, sha = local.get(e["name"], e["name"]), e["sha256"]
            # what we hold: [the peer's sha256, the sha256 of our copy, our copy's stat stamp]
            # — the shas differ where a `forget --lines` pattern was applied to the copy (an old
            # state holds one sha, or no stamp). A copy whose stamp is unchanged is not read
            # again (hashing every copy made each sync read the whole peer folder)
            got, now = have.get(name), held.get(name)
            if got.__class__ is list and len(got) == 5 and got[0] == sha and now == got[2:]:
                out["unchanged"] += 1  # (the common case, at no cost: untouched since it was written)
                continue
            theirs, ours, *stamp = [got, got] if isinstance(got, str) else (got or [None, None])
            if theirs == sha and now and (stamp == now or sha_at(fd, name) == ours):
                out["unchanged"] += 1
                if stamp != now:
                    have[name] = [theirs, ours, *now]
                    touched.add(name)
            else:
                todo.append(e)
        todo.sort(key=_by_name, reverse=True)  # newest first
        for e, body in source.files(peer["id"], todo):
            name, sha = e["name"], e["sha256"]
            if time.monotonic() > source.deadline:
                out["errors"].append(f"deadline of {timeout:.0f} s for this peer reached: the rest waits "
                                     "for the next sync")
                break
            try:
                if isinstance(body, Exception):
                    raise body
                if len(body) != e["size"] or hashlib.sha256(body).hexdigest() != sha:
                    raise Refused(f"{name}: body does not match the signed manifest (size or sha256)")
                if forgotten_file(name, body):
                    continue
                kept = keep_forgotten(body) if keep_forgotten else body  # a line this user forgot stays forgotten
                name = local.get(name, name)
                now = write_at(fd, name, kept)
            except (Refused, TransportError, OSError) as err:
                out["errors"].append(str(err))
                continue
            have[name] = [sha, sha if kept is body else hashlib.sha256(kept).hexdigest(), *now]
            touched.add(name)
            received.append(name)
            out["downloaded"] += 1
            out["bytes"] += len(body)
        if out["skipped_quota"]:
            out["errors"].append(f"quota of {peer.get('quota_mb')} MB reached: {out['skipped_quota']} older files not taken")
        _flush(fd, received)
        _records.keep(files_path, files_log, 1, have, touched, whole, log_lines)
        # the folder's mtime now that this pull is done with it: while it stays so, nobody
        # added, removed or replaced a copy, and the next pull stats a sweep of them only
        _vault.write_private(state_path, json.dumps({"seq": m["seq"], "sha": m["sha"], "dir": os.fstat(fd).st_mtime_ns,
                                                     "sweep": swept, **{k: known[k] for k in _GONE if k in known}}))
    except (Refused, TransportError, OSError) as err:
        out["errors"].append(str(err))
    finally:
        if fd is not None:
            os.close(fd)
        out["seconds"] = round(time.monotonic() - started, 3)
        record_status(home, out)
    return out


def drop_peer(peer: dict, vault: str, home: str, keep_files: bool = False) -> int:
    """Forget what was taken from an unpaired ``peer``: its sync state and status, and (unless
    ``keep_files``) the files it sent, ``<vault>/peers/<name>/``; returns how many were deleted.
    Links are never followed: a link in that folder is removed, not its target."""
    try:
        os.unlink(_layout.mesh_peer_record(peer["id"], home))  # (paired again, it sends all again)
    except FileNotFoundError:
        pass
    _records.drop(_layout.mesh_peer_files(peer["id"], home), _layout.mesh_peer_files_log(peer["id"], home))
    path = _layout.mesh_status(home)
    status = _vault.read_json(path)
    if status.pop(peer["id"], None) is not None:
        _vault.write_private(path, json.dumps(status))
    if keep_files:
        return 0
    from .files import open_dir

    try:
        top = open_dir(None, os.path.join(vault, _vault.PEERS))
    except OSError:
        return 0  # nothing received, or peers/ is not a real folder
    removed = 0
    try:
        fd = open_dir(top, peer["name"])
    except OSError:
        os.close(top)
        return 0
    try:
        for name in os.listdir(fd):
            try:
                os.unlink(name, dir_fd=fd)
                removed += name.endswith(".md")
            except IsADirectoryError:
                pass  # (pull never makes one: someone else's; left alone)
        os.rmdir(peer["name"], dir_fd=top)
    except OSError:
        pass
    finally:
        os.close(fd)
        os.close(top)
    return removed


def record_status(home: str, result: dict) -> None:
    """Keep the last sync that reached the peer (its time, files, bytes) and, apart from it,
    the last attempt's failure: a sync that never got the peer's manifest (unreachable,
    refused) overwrites none of the last good one's figures."""
    path = _layout.mesh_status(home)
    status = _vault.read_json(path)
    entry = status.get(result["id"], {})
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    errors = result["errors"]
    entry.update(name=result["peer"], transport=result["transport"], errors=len(errors),
                 last_error=errors[-1] if errors else None)
    if errors and result["seq"] is None:
        entry["last_failure"] = now
    else:
        entry.pop("last_failure", None)
        entry.update(last_sync=now, files=result["files"], downloaded=result["downloaded"],
                     bytes=entry.get("bytes", 0) + result["bytes"])
        if not errors:
            entry["last_ok"] = now
    status[result["id"]] = entry
    _vault.write_private(path, json.dumps(status))


def status(cfg) -> dict:
    st = _vault.read_json(_layout.mesh_status())
    return {"name": cfg.name, "peers": [{**p, **st.get(p["id"], {})} for p in cfg.peers]}
