"""Every file chrollo keeps in ``$CHROLLO_HOME``: its records, locks and settings, named once.

No other module joins a ``state/`` path or spells a state or settings file's name: each asks a
function here (``tests/test_state_layout.py`` fails otherwise), so renaming a record or a lock
cannot silently break whoever else takes it (``chrollo forget`` takes capture's and the session
writer's locks by the names below). See docs/design.md §3.

``$CHROLLO_HOME`` (default ``~/.chrollo``)::

  memories/                  the global vault (unless ``chrollo config vault`` moved it)
  config.json                settings: the global vault (``chrollo config vault``)
  privacy.json               settings: excluded projects, ``redact_capture``, the recall log's
                             ``recall_log``, ``recall_log_max_mb``, ``recall_log_days`` (``chrollo config``)
  redact.json                the secret detector's extra/disabled rules (mesh/redact.json too)
  thesaurus.json             the user's own thesaurus overlay
  trusted-projects.json      the project vaults the user opted in to (``chrollo init``)
  mesh/config.json           this node's name, its peers and their switches
  mesh/node.key, node.crt    this node's identity (swarm.key: the retired shared key)
  mesh/git/<key>.git         a bare mirror per git remote (<key>.git.blobs.json: its blob cache)
  logs/<name>.log            hook and mesh logs
  logs/recall.jsonl          recall receipts: what was injected into which prompt (.lock: its lock)
  state/                     disposable records (except forgotten.json), locks:
    capture/<key>.json       a capture's watermarks, digests, the turn in flight
    sessions/<key>.json      the session writer's record of a file it created
    recall/<key>.json        the excerpts injected into a session
    hooks/<harness>.json     the last capture of each harness (freshness)
    import/files.json        transcripts already imported (size, mtime)
    install/<kind>-<key>.json   what install wrote into a harness config
    obsidian/<key>           chrollo.base was written once into that vault
    ignored-projects/<key>   an untrusted project vault was logged once
    repositories/<key>.json  a repository's root commit, found once (chrollo/repository.py)
    listing/                 cached vault listings (<key>.json), creation journals (<key>.created[.lock]),
                             each file's counts for ``stats`` (<key>.stats.json)
    index/<key>.sqlite       the search index of a vault (docs/index.md; -journal beside it mid-write,
                             .sweep: where the searches' verification sweep is; .order: its files
                             in file-key order; .building: held by the recall hook's background build)
    torn/                    torn bytes cut off a session file
    forgotten.json           tombstones (NOT disposable)
    mesh/...                 the mesh's caches, its peers' manifests and its status
    mesh/redacted.sqlite     publishing's redaction cache: content sha256 -> redacted bytes
    mesh/detect-secrets-rules.json   detect-secrets' detector regexes as data (its version's)
    mesh/changes/<key>.log   session files capture changed since the last publication (chrollo/changes.py)
    mesh/manifest-cache.records, .log   publishing's record of each own file (the .log: changed since)
    mesh/publish-state.json  where publishing left off: the changes journal read, the sweep, the vault's mtime
    locks/                   capture-XX, write-XX (256 shards each), forgotten

**Lock order.** A process holding several of these locks takes them in this order and never
the other way round (every lock is an exclusive ``flock``):

  1. ``capture_lock(session)``   — capture, ``forget``
  2. ``writer_lock(session)``    — the session writer, ``forget``, cutting torn bytes back
  3. ``listing_journal_lock(folder)`` — the writer, while it creates a session file
  4. ``tombstones_lock()``       — capture marking a session private (``forget_ids``)

``mesh_publish_lock()`` and ``recall_log_lock()`` are taken alone. ``<key>`` is :func:`state_key`, a hash of the session
id (or folder); the lock files are sharded by its first two hex digits.

Stdlib only and cheap: the hooks import it on every call.
"""
from __future__ import annotations

import os

STATE = "state"


def home_path() -> str:
    """``$CHROLLO_HOME``, default ``~/.chrollo`` (not created)."""
    env = os.environ.get("CHROLLO_HOME", "").strip()
    return os.path.expanduser(env) if env else os.path.join(os.path.expanduser("~"), ".chrollo")


def state_key(session_id: str) -> str:
    """The file-name-safe key of a session (or folder) in state/ (a hash of the full id)."""
    from .sha256 import hexdigest

    return hexdigest(session_id.encode("utf-8", "surrogatepass"))[:32]


def _state(*parts: str, home: str | None = None) -> str:
    return os.path.join(home or home_path(), STATE, *parts)


# ----------------------------------------------------------------------------- home

def state_dir() -> str:
    return _state()


def logs_dir() -> str:
    return os.path.join(home_path(), "logs")


def log_file(name: str) -> str:
    """``logs/<name>.log`` (``hooks``, ``mesh``…; rotated to ``.1`` past 1 MiB)."""
    return os.path.join(logs_dir(), name + ".log")


def recall_log() -> str:
    """Recall receipts, one JSON line per prompt the recall hook saw (:mod:`chrollo.receipts`)."""
    return os.path.join(logs_dir(), "recall.jsonl")


def recall_log_lock() -> str:
    """Taken alone, around each append to (and rewrite of) :func:`recall_log`."""
    return recall_log() + ".lock"


def default_vault() -> str:
    return os.path.join(home_path(), "memories")


def mesh_dir() -> str:
    """$CHROLLO_HOME/mesh: the node's keys and its mesh settings."""
    return os.path.join(home_path(), "mesh")


# ----------------------------------------------------------------------------- settings

def config_file() -> str:
    """chrollo's settings (``chrollo config vault``)."""
    return os.path.join(home_path(), "config.json")


def privacy_file() -> str:
    """Excluded projects, ``redact_capture`` and the recall log's switches (``chrollo exclude``,
    ``chrollo config``)."""
    return os.path.join(home_path(), "privacy.json")


def redaction_cache_file(home: str | None = None) -> str:
    """Redacted output of each published file, keyed by the hash of its raw bytes and the rules
    (chrollo/redact.py): an unchanged file is never redacted twice. Holds redacted text only."""
    return _state("mesh", "redacted.sqlite", home=home)


def redaction_rule_sets_file(home: str | None = None) -> str:
    """detect-secrets' detector regexes as data, for its installed version (chrollo/redact.py):
    a process that finds them here never imports detect-secrets. Disposable."""
    return _state("mesh", "detect-secrets-rules.json", home=home)


def redact_rule_files(home: str | None = None) -> list:
    """The secret detector's rule files, in the order they are looked for (the first found wins)."""
    home = home or home_path()
    return [os.path.join(home, "redact.json"), os.path.join(home, "mesh", "redact.json")]


def thesaurus_file() -> str:
    """The user's own thesaurus overlay."""
    return os.path.join(home_path(), "thesaurus.json")


def trusted_projects_file() -> str:
    """The project vaults the user opted in to (``chrollo init``)."""
    return os.path.join(home_path(), "trusted-projects.json")


def mesh_config_file() -> str:
    """This node's name and its peers (``chrollo mesh``)."""
    return os.path.join(mesh_dir(), "config.json")


def mesh_legacy_key() -> str:
    """The shared swarm key of the first mesh (its presence means: migrate)."""
    return os.path.join(mesh_dir(), "swarm.key")


def mesh_identity_files(folder: str) -> tuple[str, str]:
    """(the node's private key, its certificate) in ``folder`` (normally :func:`mesh_dir`)."""
    return os.path.join(folder, "node.key"), os.path.join(folder, "node.crt")


def settings_files() -> list:
    """(file, what it holds, the command that changes it) for every settings file, as
    ``chrollo config --files`` lists them."""
    return [
        (config_file(), "the global vault", "chrollo config vault PATH"),
        (privacy_file(), "excluded projects; redact-capture; recall-log, recall-log-max-mb, recall-log-days",
         "chrollo exclude, chrollo config redact-capture|recall-log…"),
        (trusted_projects_file(), "project vaults opted in", "chrollo init"),
        (mesh_config_file(), "this node's name, its peers and their switches", "chrollo mesh init, chrollo mesh peers"),
        *((f, "extra and disabled secret rules", "edit by hand") for f in redact_rule_files()),
        (thesaurus_file(), "your own synonyms", "edit by hand"),
    ]


# ----------------------------------------------------------------------------- per-session records

def capture_record(session_id: str) -> str:
    return _state("capture", state_key(session_id) + ".json")


def writer_record(session_id: str) -> str:
    """The session writer's record of the file it created (to recreate a deleted one)."""
    return _state("sessions", state_key(session_id) + ".json")


def recall_record(session_id: str) -> str:
    return _state("recall", state_key(session_id) + ".json")


def session_records(session_id: str) -> list:
    """Every record chrollo keeps about one session (``forget`` removes them with it)."""
    return [capture_record(session_id), writer_record(session_id), recall_record(session_id)]


# ----------------------------------------------------------------------------- locks

def capture_lock(session_id: str) -> str:
    """Lock 1 of the order: one capture pass at a time per session (256 shards)."""
    return _state("locks", f"capture-{state_key(session_id)[:2]}.lock")


def writer_lock(session_id: str) -> str:
    """Lock 2 of the order: one append at a time per session file (256 shards)."""
    return _state("locks", f"write-{state_key(session_id)[:2]}.lock")


def session_locks(session_id: str) -> list:
    """A session's locks in the order they are taken: capture's, then the writer's."""
    return [capture_lock(session_id), writer_lock(session_id)]


def tombstones_lock() -> str:
    """Lock 4 of the order: updating the tombstones."""
    return _state("locks", "forgotten.lock")


# ----------------------------------------------------------------------------- other records

def tombstones_file() -> str:
    """Forgotten sessions and line patterns: the one record in state/ that is not disposable."""
    return _state("forgotten.json")


def torn_dir() -> str:
    return _state("torn")


def hook_record(harness: str) -> str:
    """The last capture that wrote turns for ``harness`` (freshness)."""
    return _state("hooks", f"{harness}.json")


def import_record() -> str:
    return _state("import", "files.json")


def install_record(kind: str, key: str) -> str:
    return _state("install", f"{kind}-{key}.json")


def obsidian_marker(vault: str) -> str:
    """Present once chrollo wrote chrollo.base into ``vault`` (its real path)."""
    return _state("obsidian", state_key(vault))


def ignored_project_marker(root: str) -> str:
    return _state("ignored-projects", state_key(root))


def repository_record(git_dir: str) -> str:
    """The root commit of the repository whose common git directory is ``git_dir`` (its
    path and inode), found once per repository (from its files, or by ``git``), not per session."""
    return _state("repositories", state_key(git_dir) + ".json")


def listing_dir() -> str:
    return _state("listing")


def listing_cache(folder: str, include_peers: bool) -> str:
    return os.path.join(listing_dir(), state_key(f"{folder}\0{include_peers}") + ".json")


def listing_refresh_lock(folder: str, include_peers: bool) -> str:
    """Held by the detached process listing ``folder`` afresh (chrollo/listing.py)."""
    return listing_cache(folder, include_peers) + ".refreshing"


def stats_cache(folder: str) -> str:
    """What ``stats`` counted in each file of ``folder`` (chrollo/vaultstats.py), keyed by the
    file's size and mtime; in listing/, so that `chrollo forget` drops it with the listings."""
    return os.path.join(listing_dir(), state_key(f"{folder}\0stats") + ".stats.json")


def listing_journal(folder: str) -> str:
    """Session files created in ``folder`` since its listing."""
    return os.path.join(listing_dir(), state_key(folder) + ".created")


def listing_journal_lock(folder: str) -> str:
    """Lock 3 of the order: noting a creation in ``folder``'s journal."""
    return listing_journal(folder) + ".lock"


def index_file(vault: str) -> str:
    """The search index of ``vault`` (chrollo/index/); SQLite keeps ``-journal`` beside it
    while a write is open, ``.sweep`` holds the verification sweep's position. Its own lock
    is SQLite's."""
    return os.path.join(_state("index"), state_key(os.path.realpath(vault)) + ".sqlite")


# ----------------------------------------------------------------------------- the mesh's

def mesh_state(name: str, home: str | None = None) -> str:
    """A record of the mesh in state/mesh/: ``manifest-cache.records``, ``published.json``,
    ``status.json`` (use the named functions below)."""
    return _state("mesh", name, home=home)


def mesh_manifest_cache(home: str | None = None) -> str:
    """Publishing's record of each own session file (stat, hashes, published name's parts)."""
    return mesh_state("manifest-cache.records", home)


def mesh_manifest_log(home: str | None = None) -> str:
    """The records changed since :func:`mesh_manifest_cache` was written whole (JSON lines)."""
    return mesh_state("manifest-cache.log", home)


def mesh_publish_state(home: str | None = None) -> str:
    """Where publishing left off (chrollo/mesh/manifests.py): the changes journal's generation
    and offset, the sweep's position, the vault folder's mtime, the last full walk."""
    return mesh_state("publish-state.json", home)


def mesh_changes_dir(home: str | None = None) -> str:
    """Where the journals of :func:`mesh_changes` live (``chrollo forget`` empties it)."""
    return _state("mesh", "changes", home=home)


def mesh_changes(vault: str, home: str | None = None) -> str:
    """The journal of the session files capture changed in ``vault`` since publishing last read
    it (chrollo/changes.py); it exists only once the mesh has published that vault."""
    return os.path.join(mesh_changes_dir(home), state_key(os.path.realpath(vault)) + ".log")


def mesh_published(home: str | None = None) -> str:
    """The last signed manifest's seq, digest, signing time and envelope's SHA-256."""
    return mesh_state("published.json", home)


def mesh_published_envelope(home: str | None = None) -> str:
    """The last signed envelope itself, byte for byte (apart from :func:`mesh_published`: a
    1.7 MB string inside JSON cost escaping to write and parsing to read at every publication)."""
    return mesh_state("published.envelope", home)


def mesh_publish_lock(home: str | None = None) -> str:
    return mesh_state("publish.lock", home)


def mesh_status(home: str | None = None) -> str:
    return mesh_state("status.json", home)


def mesh_git_mirror(remote_key: str, home: str | None = None) -> str:
    """The bare mirror of one git remote (its blob cache sits beside it: ``<mirror>.blobs.json``)."""
    return os.path.join(home or home_path(), "mesh", "git", remote_key + ".git")


def mesh_peer_record(peer_id: str, home: str | None = None) -> str:
    """What was taken from a peer: its last manifest's seq and sha256, its folder's mtime."""
    return _state("mesh", "peers", f"{peer_id}.json", home=home)


def mesh_peer_files(peer_id: str, home: str | None = None) -> str:
    """Each copy taken from a peer (its sha256 there and here, its stat), written whole."""
    return _state("mesh", "peers", f"{peer_id}.files.records", home=home)


def mesh_peer_files_log(peer_id: str, home: str | None = None) -> str:
    """The changes to :func:`mesh_peer_files` since it was written whole (JSON lines)."""
    return _state("mesh", "peers", f"{peer_id}.files.log", home=home)


def mesh_folder_index(folder_key: str, home: str | None = None) -> str:
    """What this node wrote into a shared folder (chrollo/mesh/folder.py), written whole."""
    return _state("mesh", "folders", f"{folder_key}.records", home=home)


def mesh_folder_log(folder_key: str, home: str | None = None) -> str:
    """The changes to :func:`mesh_folder_index` since it was written whole (JSON lines)."""
    return _state("mesh", "folders", f"{folder_key}.log", home=home)
