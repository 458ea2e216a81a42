"""Privacy: what chrollo must not keep, and must never bring back (docs/design.md §3).

Rules, all consulted by capture (live hooks and import alike) before anything is written:

* **Tombstones** — ``$CHROLLO_HOME/state/forgotten.json``: session ids ``chrollo forget``
  removed (a session's subagents ``<id>:…`` go with it) and line patterns it scrubbed. Of a
  removed file's name only its SHA-256 is kept (a format-2 name holds the first prompt's
  words) and its slug-free key (``DATE_TIME_id.md``, what the mesh withdraws by); names an
  older version kept are rewritten so on first read (:func:`rules`). A
  forgotten session is never written again, by live capture or import, and the mesh stops
  publishing it; a forgotten pattern is replaced by :data:`MARKER` in every line written
  later. This one file in ``state/`` is *not* disposable: delete it and import can bring
  forgotten sessions back from the harness's transcripts.
* **Excluded projects** — ``$CHROLLO_HOME/privacy.json`` ``{"exclude": [path, glob or
  repository, …]}`` (``chrollo exclude``): a session whose working directory is inside one,
  or that ran in an excluded repository (on any machine: :mod:`chrollo.repository`), is never
  captured, gets no recall, and its older files are never injected.
* ``CHROLLO_CAPTURE=off`` in a harness's environment: nothing of that session is captured.
* A ``.chrollo-private`` file in the working directory or a folder above it (up to the git
  root): a repository can turn capture and recall off for itself. It can never turn them on.
* ``<private>…</private>`` in any text is stored as :data:`PRIVATE_MARKER` (an unclosed tag
  runs to the end of the text), so it never reaches the vault or a recall block.
* ``#chrollo-private`` in a prompt makes the whole session private: what was captured of it
  is forgotten and nothing more is kept.

Stdlib only and read once per process: this module is on the hook path.
"""
from __future__ import annotations

import fnmatch
import json
import os
import re

from . import layout as _layout
from . import vault as _vault
from .fileformat import HEADER_START_RE

MARKER = "[forgotten by chrollo]"
PRIVATE_MARKER = "<private>[not stored]</private>"
PRIVATE_PHRASE = "#chrollo-private"
REPO_OPT_OUT = ".chrollo-private"
CAPTURE_ENV = "CHROLLO_CAPTURE"
_OFF = {"0", "off", "no", "false", "never"}
_PRIVATE_SPAN = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)

_rules: "Rules | None" = None


def tombstones_path() -> str:
    return _layout.tombstones_file()


def settings_path() -> str:
    return _layout.privacy_file()


class Rules:
    """The tombstones and settings as loaded (see the module doc)."""

    def __init__(self, tombstones: dict, settings: dict):
        sessions = tombstones.get("sessions")
        self.sessions: dict = sessions if isinstance(sessions, dict) else {}
        # forgotten files: their names' hashes (what import and the mesh check a name against)
        # and keys (what the mesh lists as withdrawn); an older version's names stand for both
        self.file_hashes: set = set()
        self.keys: set = set()
        self.legacy = False  # names kept by an older version: rewritten as hashes (see rules())
        for sid, v in self.sessions.items():
            if not isinstance(v, dict):
                continue
            if isinstance(v.get("file"), str) or (isinstance(sid, str) and sid.startswith("file:")
                                                  and not sid.startswith(_FILE_SID)):
                self.legacy = True
                v = tombstone(v["file"], None) if isinstance(v.get("file"), str) else v
            for attr, key in ((self.file_hashes, "file_sha256"), (self.keys, "key")):
                if isinstance(v.get(key), str):
                    attr.add(v[key])
        lines = tombstones.get("lines")
        self.lines: list = [x for x in lines if isinstance(x, dict) and isinstance(x.get("pattern"), str)] \
            if isinstance(lines, list) else []
        self._compiled = None
        self.settings = settings  # privacy.json as read (the recall log's switches live there too)
        exclude = settings.get("exclude")
        self.exclude: list = [x for x in exclude if isinstance(x, str) and x] \
            if isinstance(exclude, list) else []
        # ``"redact_capture": true``: secrets are redacted before a turn is written (chrollo/redact.py)
        self.redact_capture = settings.get("redact_capture") is True

    # -- sessions ---------------------------------------------------------------
    def forgotten_name(self, name: str) -> bool:
        """Is ``name`` the name of a file ``chrollo forget`` removed (compared by hash)?"""
        return bool(self.file_hashes) and name_hash(name) in self.file_hashes

    def forgotten(self, session_id: str | None) -> bool:
        """True for a forgotten session, and for the subagents (``<id>:…``) of one."""
        if not session_id or not self.sessions:
            return False
        return session_id in self.sessions or session_id.split(":", 1)[0] in self.sessions

    # -- projects ---------------------------------------------------------------
    def excluded(self, cwd: str | None, repository: str | None = None) -> str | None:
        """The exclusion rule a session in ``cwd`` falls under, if any: a folder or glob rule
        (absolute) by ``cwd``, a repository rule (a key, :mod:`chrollo.repository`) by
        ``repository`` — a session file's recorded one; None: found from ``cwd`` (only when
        there are repository rules), "" none."""
        if not self.exclude:
            return None
        if repository is None and cwd and any(not r.startswith("/") for r in self.exclude):
            from .repository import identify

            found = identify(os.path.realpath(cwd))
            repository = found.key if found else ""
        if repository and repository in self.exclude:
            return repository
        if not cwd:
            return None
        real = os.path.realpath(cwd)
        for rule in self.exclude:
            if not rule.startswith("/"):
                continue
            if any(ch in rule for ch in "*?["):
                if fnmatch.fnmatchcase(real, rule) or fnmatch.fnmatchcase(real, rule.rstrip("/") + "/*"):
                    return rule
            elif real == rule or real.startswith(rule.rstrip("/") + "/"):
                return rule
        return None

    # -- lines ------------------------------------------------------------------
    def patterns(self) -> list:
        if self._compiled is None:
            self._compiled = [_kept_pattern(x["pattern"], bool(x.get("regex"))) for x in self.lines if x["pattern"]]
        return self._compiled

    def scrub_lines(self, text: str) -> str:
        """``text`` (rendered session lines) with every line matching a forgotten pattern
        replaced by the marker (turn headers are kept: they carry no conversation)."""
        pats = self.patterns()
        if not pats:
            return text
        out = []
        for line in text.split("\n"):
            out.append(forget_line(line) if not HEADER_START_RE.match(line) and any(p.search(line) for p in pats)
                       else line)
        return "\n".join(out)


def rules(reload: bool = False) -> Rules:
    """The rules in force (read once per process; ``reload`` after changing them). Tombstones
    an older version wrote with file names are rewritten with hashes here, once."""
    global _rules
    if _rules is None or reload:
        _rules = Rules(_vault.read_json(tombstones_path()), _vault.read_json(settings_path()))
        if _rules.legacy:
            try:
                _update_tombstones(_hash_names)
            except OSError:
                pass  # (read-only: the names are compared by hash all the same)
    return _rules


_FILE_SID = "file:sha256:"  # the tombstone key of a forgotten file without a session id


def name_hash(name: str) -> str:
    """What a tombstone keeps of a forgotten file's name: its SHA-256 (hex)."""
    from .sha256 import hexdigest

    return hexdigest(name.encode("utf-8", "surrogateescape"))


def tombstone(name: str | None, when: str | None) -> dict:
    """The tombstone of a forgotten session whose file was called ``name``: the name's hash and
    its slug-free key (:func:`chrollo.fileformat.name_key`), never the name (its title's words)."""
    from .fileformat import name_key

    entry: dict = {}
    if name:
        entry["file_sha256"] = name_hash(name)
        key = name_key(name)
        if key:
            entry["key"] = key
    if when:
        entry["when"] = when
    return entry


def file_session_id(name: str) -> str:
    """The tombstone key of a forgotten file that names no session id."""
    return _FILE_SID + name_hash(name)


def _hash_names(data: dict) -> None:
    """An older version's tombstones (file names) as this one keeps them (hashes)."""
    sessions = data.get("sessions")
    if not isinstance(sessions, dict):
        return
    out = {}
    for sid, v in sessions.items():
        if isinstance(v, dict) and isinstance(v.get("file"), str):
            v = tombstone(v["file"], v.get("when") if isinstance(v.get("when"), str) else None)
        if isinstance(sid, str) and sid.startswith("file:") and not sid.startswith(_FILE_SID):
            sid = file_session_id(sid[len("file:"):])
        out[sid] = v
    data["sessions"] = out


def compile_pattern(pattern: str, regex: bool = False):
    """A ``forget --lines`` pattern, compiled: literal text, or (``regex``) a regular expression
    run by RE2 — linear in the text, so no pattern can hold a capture hook past its deadline
    (Python's engine backtracks: ``(\\w+\\s?)+password`` took minutes on one line). One RE2 does
    not run (a backreference, lookaround) is a usage error. Either has ``.search(text)``."""
    from .errors import UsageError

    if not pattern:
        raise UsageError("the pattern is empty", kind="bad_pattern")
    if not regex:
        return re.compile(re.escape(pattern))
    try:
        return _Linear(pattern)
    except ValueError as e:
        raise UsageError(f"not a regular expression chrollo can run: {e}",
                         "--regex patterns run in RE2, a linear-time engine: no backreferences (\\1) and "
                         "no lookaround ((?=…), (?<=…)). Or drop --regex to match the text literally.",
                         kind="bad_pattern") from None


class _Linear:
    """A regular expression run by RE2 (google-re2) over UTF-8 (lone surrogates — undecodable
    bytes as a file's text keeps them — encoded as they are: never an error). Imported only when
    a ``--regex`` pattern is in use."""

    def __init__(self, pattern: str):
        try:
            import re2
        except ImportError:
            from .errors import ChrolloError

            raise ChrolloError("missing_module", "the Python package 'google-re2' is not installed "
                               "(forget --regex patterns run in it)", "pip install 'google-re2'") from None
        opts = re2.Options()
        opts.log_errors = False  # (its C++ logging would print to stderr)
        try:
            self._rx = re2.compile(pattern.encode("utf-8", "surrogatepass"), opts)
        except re2.error as e:
            msg = e.args[0] if e.args else "invalid"
            raise ValueError(msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)) from None

    def search(self, text: str):
        return self._rx.search(text.encode("utf-8", "surrogatepass"))


BUDGET = 2.0  # seconds a process spends on patterns RE2 refused (kept by an older version)
LINE_BUDGET = 0.1  # of which one line gets at most this


class _Bounded:
    """A pattern an older version kept that RE2 does not run, in Python's engine under a
    deadline (:data:`LINE_BUDGET` a line, :data:`BUDGET` for the whole process, so a hook keeps
    its own): a line not decided in time counts as matching — it is forgotten rather than kept
    unchecked."""

    spent = 0.0

    def __init__(self, rx):
        self.rx = rx

    def search(self, text: str):
        import signal
        import threading
        import time

        left = BUDGET - _Bounded.spent
        if left <= 0:
            return True
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
            return self.rx.search(text)  # (no alarm outside the main thread)

        def out_of_time(*_):
            raise TimeoutError
        old = signal.signal(signal.SIGALRM, out_of_time)
        start = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, min(left, LINE_BUDGET))
        try:
            return self.rx.search(text)
        except TimeoutError:
            return True
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            _Bounded.spent += time.monotonic() - start


def _kept_pattern(pattern: str, regex: bool):
    """A kept tombstone's pattern: as :func:`compile_pattern` makes it; one RE2 refuses (kept by
    an older version) in Python's engine under :class:`_Bounded`'s deadline."""
    from .errors import UsageError

    try:
        return compile_pattern(pattern, regex)
    except UsageError:
        try:
            return _Bounded(re.compile(pattern))
        except re.error:
            return re.compile(re.escape(pattern))


def forget_line(line: str) -> str:
    """The marker in place of ``line``, keeping an agent line's ``> `` quote."""
    return "> " + MARKER if line.startswith(">") else MARKER


def scrub_private(text: str) -> str:
    """``<private>…</private>`` spans replaced by :data:`PRIVATE_MARKER`."""
    if "<" not in text or "private>" not in text.lower():
        return text
    return _PRIVATE_SPAN.sub(PRIVATE_MARKER, text)


def asks_private(text) -> bool:
    """Does a prompt mark its session private (:data:`PRIVATE_PHRASE`)?"""
    return isinstance(text, str) and PRIVATE_PHRASE in text.lower()


def repo_opt_out(cwd: str | None) -> str | None:
    """The ``.chrollo-private`` file that turns capture off for ``cwd``, if there is one."""
    if not cwd:
        return None
    d = _vault.walk_up(os.path.realpath(cwd), lambda d: os.path.lexists(os.path.join(d, REPO_OPT_OUT)),
                       to_git_root=True)
    return os.path.join(d, REPO_OPT_OUT) if d else None


def capture_off(session_id: str | None, cwd: str | None) -> str | None:
    """Why nothing of this session may be captured now (None: capture it)."""
    if os.environ.get(CAPTURE_ENV, "").strip().lower() in _OFF:
        return f"{CAPTURE_ENV}=off"
    r = rules()
    if r.forgotten(session_id):
        return "forgotten session"
    rule = r.excluded(cwd)
    if rule:
        return f"excluded project ({rule})"
    marker = repo_opt_out(cwd)
    if marker:
        return f"opted out by {marker}"
    return None


def recall_off(cwd: str | None) -> str | None:
    """Why no recall may be injected for a prompt in ``cwd`` (None: recall is allowed)."""
    rule = rules().excluded(cwd)
    if rule:
        return f"excluded project ({rule})"
    marker = repo_opt_out(cwd)
    return f"opted out by {marker}" if marker else None


def forgotten_file(name: str, head: bytes | None = None) -> bool:
    """Did the user forget the session a file (from a peer) holds? By its file name, and —
    given its bytes — by the session id in its frontmatter."""
    r = rules()
    if not r.sessions:
        return False
    if r.forgotten_name(name):
        return True
    if head is None:
        return False
    from .fileformat import parse_frontmatter

    sid = parse_frontmatter(head[:8192].decode("utf-8", "replace").split("\n"))[0].get("session_id")
    return isinstance(sid, str) and r.forgotten(sid)


def excluded_file(path: str) -> bool:
    """Was the session file at ``path`` captured in a project that is excluded now?"""
    r = rules()
    if not r.exclude:
        return False
    from .fileformat import read_frontmatter

    meta = read_frontmatter(path)
    cwd, repository = meta.get("cwd"), meta.get("repository")
    return bool(r.excluded(cwd if isinstance(cwd, str) else None,
                           repository if isinstance(repository, str) else ""))


# ----------------------------------------------------------------------------- writing the rules

def writer_scrub():
    """What a turn goes through before it is written (the session writer calls this under its
    lock): lines ``chrollo forget --lines`` removed stay removed, and with redact-capture on,
    secrets are redacted (the detector is imported only then)."""
    scrub = rules(reload=True).scrub_lines
    if rules().redact_capture:
        from .redact import Redactor

        redact = Redactor.from_config(_vault.home_path()).redact
        scrub = (lambda text, s=scrub: redact(s(text))[0])
    return scrub


def _update_tombstones(change) -> None:
    """Apply ``change(dict)`` to the tombstones under a lock (two forgets never lose each other's)."""
    import fcntl

    path = tombstones_path()
    fd = _vault.open_lock(_layout.tombstones_lock())
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = _vault.read_json(path)
        change(data)
        _vault.write_private(path, json.dumps(data, ensure_ascii=False, indent=1))
    finally:
        os.close(fd)
    rules(reload=True)


def add_session_tombstones(entries: dict) -> None:
    """Remember ``{session_id: tombstone(name, when)}`` as forgotten."""
    def change(data):
        sessions = data.get("sessions") if isinstance(data.get("sessions"), dict) else {}
        sessions.update(entries)
        data["sessions"] = sessions
    _update_tombstones(change)


def add_line_tombstone(pattern: str, regex: bool, when: str) -> bool:
    """Remember a forgotten line pattern; False if it was already there."""
    added = []

    def change(data):
        lines = data.get("lines") if isinstance(data.get("lines"), list) else []
        if not any(isinstance(x, dict) and x.get("pattern") == pattern and bool(x.get("regex")) == regex
                   for x in lines):
            lines.append({"pattern": pattern, "regex": regex, "when": when})
            added.append(True)
        data["lines"] = lines
    _update_tombstones(change)
    return bool(added)


def settings() -> dict:
    return _vault.read_json(settings_path())


def set_setting(key: str, value) -> None:
    """Change one setting of ``privacy.json`` (the others are kept)."""
    data = settings()
    data[key] = value
    _vault.write_private(settings_path(), json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    rules(reload=True)


def set_excludes(paths: list) -> None:
    set_setting("exclude", paths)
