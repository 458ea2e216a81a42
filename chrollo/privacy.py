"""Privacy: what chrollo must not keep, and must never bring back (docs/design.md §3).

Rules, all consulted by capture (live hooks and import alike) before anything is written:

* **Tombstones** — ``$CHROLLO_HOME/state/forgotten.json``: session ids ``chrollo forget``
  removed (a session's subagents ``<id>:…`` go with it) and line patterns it scrubbed. A
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
        self.files = {v.get("file") for v in self.sessions.values() if isinstance(v, dict)} - {None}
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
            self._compiled = [compile_pattern(x["pattern"], bool(x.get("regex"))) for x in self.lines]
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
    """The rules in force (read once per process; ``reload`` after changing them)."""
    global _rules
    if _rules is None or reload:
        _rules = Rules(_vault.read_json(tombstones_path()), _vault.read_json(settings_path()))
    return _rules


def compile_pattern(pattern: str, regex: bool = False):
    from .errors import UsageError

    if not pattern:
        raise UsageError("the pattern is empty", kind="bad_pattern")
    if not regex:
        return re.compile(re.escape(pattern))
    try:
        return re.compile(pattern)
    except re.error as e:
        raise UsageError(f"not a valid regular expression: {e}", "Drop --regex to match the text literally.",
                         kind="bad_pattern") from None


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
    if name in r.files:
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
    """Remember ``{session_id: {"file": name, "when": iso}}`` as forgotten."""
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
