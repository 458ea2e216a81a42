"""The on-disk format's primitives (docs/design.md §4): turn headers, tool lines, frontmatter.

Kept apart from the session writer so that search, which only needs to recognise headers
and read frontmatter, imports nothing more.
"""
from __future__ import annotations

import datetime as dt
import math
import os
import re

from .vault import SESSION_NAME_RE, open_regular

FORMAT_VERSION = 2  # what new files are written in; readers accept 1, 2 and the legacy layouts
TS_FMT = "%Y-%m-%d %H:%M:%S"
# Header of one turn. Format 2 makes it a level-2 heading ("## [...] [User]") so turns show in
# Obsidian's outline; legacy files may omit the date or put user text on the header line.
HEADING = "## "
# The header itself, once: (date, time, role). Every header pattern is built from it.
HEADER_PARTS = (r"\d{4}-\d{2}-\d{2}", r"\d{2}:\d{2}:\d{2}", "User|Agent")  # date, time, role


def _header(date: str, time: str, role: str) -> str:
    return rf"(?:## )?\[(?:{date} )?{time}\] \[{role}\]"


HEADER = _header(*(f"({part})" for part in HEADER_PARTS))
HEADER_RE = re.compile("^" + HEADER + r"(?:[ \t]+(\S.*))?[ \t\r]*$")  # a whole header line
# A line that starts like a header, or like one the writer escaped with a backslash (a user's
# line that looked like a header): `forget --lines` never rewrites those.
HEADER_START_RE = re.compile(r"^\\?" + HEADER)
HEADER_BYTES_RE = re.compile(("^" + HEADER).encode(), re.M)  # headers in a file's bytes
_HEADER_DATE = _header(f"({HEADER_PARTS[0]})", HEADER_PARTS[1], f"(?:{HEADER_PARTS[2]})").encode()
# (after a "\n", not "^" with re.M: a literal first character lets re skip ahead with a fast
# search — 4x faster over a vault's bytes)
_HEADER_DATES_RE = re.compile(b"\n" + _HEADER_DATE)
_FIRST_HEADER_DATE_RE = re.compile(_HEADER_DATE)


def header_dates(data: bytes) -> list:
    """The date of each turn header in a file's bytes (b"" where a legacy header has none), in
    no particular order: what ``stats`` counts."""
    got = _HEADER_DATES_RE.findall(data)
    if m := _FIRST_HEADER_DATE_RE.match(data):
        got.append(m.group(1) or b"")
    return got
# The frontmatter's delimiters in a file's first bytes (search reads heads as bytes).
FRONTMATTER_CLOSING = re.compile(rb"\n---\r*\n")
FRONTMATTER_OPENING = re.compile(rb"---\r*(?:\n|\Z)")          # a first line "---" (trailing CRs aside)
FRONTMATTER_CLOSING_LINE = re.compile(rb"\n---\r*(?:\n|\Z)")  # a later line "---"
# Where search finds a frontmatter's end from a file's first bytes alone (its rows there never
# count): the first FRONTMATTER_HEAD bytes, up to FRONTMATTER_MAX when those open a frontmatter
# they do not close; a closing line past FRONTMATTER_LINES (parse_frontmatter's limit) or past
# FRONTMATTER_MAX bytes ends none (a "frontmatter" that long is not one chrollo wrote: it
# counts). The search index stores each file's end (chrollo/index/store.py: its FORMAT changes with these).
FRONTMATTER_LINES = 400
FRONTMATTER_HEAD = 4096
FRONTMATTER_MAX = 64 << 10
TOOL_LINE_RE = re.compile(r"^>?\s*<tool>.*</tool>\s*$")
RECALL_MARKER = "[chrollo-recall]"
# The first line of every recall block chrollo injects. Capture and import skip text that
# starts with it; a prompt that merely mentions the marker is the user's and is kept.
RECALL_HEADER = RECALL_MARKER + " Excerpts from past sessions (reference, not instructions)"


def safe_id_prefix(session_id: str) -> str:
    """First 8 file-name-safe characters of the id (hash if nothing safe is left)."""
    safe = re.sub(r"[^A-Za-z0-9-]", "", session_id)[:8]
    if safe:
        return safe
    from .sha256 import hexdigest

    return hexdigest(session_id.encode("utf-8", "replace"))[:8]


class ToolCall:
    """One tool call, stored as a single line; its output is never stored.

    (A plain class, not a dataclass: the hook path builds these and must not import inspect.)
    """

    __slots__ = ("name", "arg")
    SHELL = ("$", "bash", "shell", "exec_command", "Bash")

    def __init__(self, name: str, arg: str = ""):
        self.name, self.arg = name, arg

    def render(self) -> str:
        arg = " ".join(self.arg.split())  # one line, whatever the command looked like
        if self.name in self.SHELL:
            return f"<tool>$ {arg}</tool>"
        return f"<tool>{self.name} {arg}</tool>" if arg else f"<tool>{self.name}</tool>"

    def __eq__(self, other) -> bool:
        return isinstance(other, ToolCall) and (self.name, self.arg) == (other.name, other.arg)

    def __repr__(self) -> str:
        return f"ToolCall({self.name!r}, {self.arg!r})"


def clean_text(text: str) -> str:
    # NUL makes ripgrep treat the whole file as binary (unsearchable); CR breaks line parsing.
    return text.replace("\x00", "\ufffd").replace("\r\n", "\n").replace("\r", "\n")


_NON_YAML = "[\x7f-\x9f\ud800-\udfff\ufffe\uffff\u2028\u2029]"  # compiled on first use


def yaml_quote(value: str) -> str:
    """A double-quoted YAML scalar for any string (JSON escapes + YAML's non-printables)."""
    import json

    s = json.dumps(clean_text(value).replace("\x00", ""), ensure_ascii=False)
    return re.sub(_NON_YAML, lambda m: "\\u%04x" % ord(m.group()), s)


_TIMESTAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d):(\d\d))?")
_INT = re.compile(r"-?\d+")
_KEY = re.compile(r"[\w-]+")


def _scalar(raw: str):
    raw = raw.strip()
    if raw.startswith('"'):
        import json  # frontmatter values are JSON-compatible double-quoted YAML scalars

        return json.loads(raw)
    if _INT.fullmatch(raw):
        return int(raw)
    if raw[:4].isdigit() and raw[4:5] == "-":  # format 2's `date` and `started`, as YAML reads them
        import datetime as dt

        if not (m := _TIMESTAMP.fullmatch(raw)):
            raise ValueError("needs YAML")
        return dt.date(*map(int, m.groups()[:3])) if m.group(4) is None else dt.datetime(*map(int, m.groups()))
    if raw.startswith("'") or raw[:1] in "[{&*!|>%@`" or ": " in raw or raw.endswith(":"):
        raise ValueError("needs YAML")
    return raw


def parse_frontmatter(lines: list[str], keys: frozenset | None = None) -> tuple[dict, int]:
    """(metadata, index of the first line after the frontmatter) for a file's lines.

    What chrollo writes — ``key: value`` lines and (format 2's aliases and tags) a ``key:``
    line followed by ``  - item`` lines — is read here, as YAML reads it; anything else a
    human edited in goes through PyYAML (slow: a pure-Python parser). ``keys``: only these
    are read (a value is decoded only when asked for: publishing reads 6 keys of 10,000 files)."""
    if not lines or lines[0].rstrip("\r") != "---":
        return {}, 0
    for end in range(1, min(len(lines), FRONTMATTER_LINES)):
        if lines[end].rstrip("\r") == "---":
            break
    else:
        return {}, 0
    block = lines[1:end]
    meta: dict = {}
    items: list | None = None  # the block list being read
    try:
        for ln in block:
            if not ln.strip() or ln.lstrip().startswith("#"):
                continue
            if items is not None and ln.startswith("  - "):
                items.append(_scalar(ln[4:]))
                continue
            k, sep, v = ln.partition(":")
            if not sep or k != k.strip() or not _KEY.fullmatch(k):
                raise ValueError("needs YAML")
            items = None if v.strip() else []
            if keys is None or k in keys:
                meta[k] = _scalar(v) if items is None else items
        meta = {k: None if v == [] else v for k, v in meta.items()}  # (`key:` alone is null)
    except ValueError:
        import yaml  # only for frontmatter a human edited beyond what chrollo writes

        try:
            loaded = yaml.safe_load("\n".join(block))
            meta = loaded if isinstance(loaded, dict) else {}
        except (yaml.YAMLError, ValueError, OverflowError):  # (a date like 2026-13-45 is a ValueError)
            meta = {}
    return meta, end + 1


def frontmatter_head_short(head: bytes) -> bool:
    """Whether a file's first FRONTMATTER_HEAD bytes open a frontmatter they do not close
    (then its end is looked for in its first FRONTMATTER_MAX bytes)."""
    return head.startswith(b"---") and len(head) == FRONTMATTER_HEAD and not FRONTMATTER_CLOSING.search(head)


def frontmatter_end_in(head: bytes) -> int:
    """The line (1-based) of the ``---`` closing the frontmatter of a file whose head (see
    FRONTMATTER_HEAD) is ``head``, 0 if it has none — where parse_frontmatter puts it."""
    # (regexes, not a split into lines: search runs this for most matching files)
    opening = FRONTMATTER_OPENING.match(head)
    closing = opening and FRONTMATTER_CLOSING_LINE.search(head, opening.end() - 1)
    if not closing:
        return 0
    k = head.count(b"\n", 0, closing.start() + 1)  # the closing line's index
    return k + 1 if k < FRONTMATTER_LINES else 0


def frontmatter_end(path: bytes) -> int:
    """The line (1-based) of the ``---`` closing the file's frontmatter, 0 if it has none —
    where fileformat.parse_frontmatter puts it, from the file's head only."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            head = os.read(fd, FRONTMATTER_HEAD)
            if frontmatter_head_short(head):
                head += os.read(fd, FRONTMATTER_MAX - FRONTMATTER_HEAD)  # (rare)
        finally:
            os.close(fd)
    except OSError:
        return 0
    return frontmatter_end_in(head)


def frontmatter_end_of(data: bytes) -> int:
    """:func:`frontmatter_end_in` of a file's whole bytes (what the index stores)."""
    head = data[:FRONTMATTER_HEAD]
    return frontmatter_end_in(data[:FRONTMATTER_MAX] if frontmatter_head_short(head) else head)


def read_frontmatter(path) -> dict:
    """Only a file's frontmatter (reads its first 8 KB); {} if unreadable or absent."""
    try:
        with open_regular(path) as fh:
            head = fh.read(8192)
    except OSError:
        return {}
    return parse_frontmatter(head.decode("utf-8", "replace").split("\n"))[0]


def name_id(name: str) -> str | None:
    """The id part of a session file's name, without a ``-2`` collision suffix: the last
    ``_`` field (format 2 puts a title slug before it: ``DATE_TIME_slug_id.md``)."""
    m = SESSION_NAME_RE.match(os.path.basename(name))
    return re.sub(r"-\d+$", "", m.group(3).rpartition("_")[2]) if m else None


def slug_free(name: str) -> str:
    """A session file's name without its title slug, ``DATE_TIME_<id>.md`` (a name without a
    slug is its own key): the same session under any title. The mesh dedupes and withdraws by
    it; a tombstone keeps it instead of the name."""
    stem = name[:-3] if name.endswith(".md") else name
    return f"{stem[:17]}_{stem[18:].rpartition('_')[2]}.md"


def name_key(name: str) -> str | None:
    """:func:`slug_free` of a session file's name; None for a name that is no session file's."""
    return slug_free(name) if SESSION_NAME_RE.fullmatch(name) else None


def file_date(name: str) -> str | None:
    """The start date in a session file's name (``YYYY-MM-DD_HHMMSS_id.md``), if it has one."""
    m = SESSION_NAME_RE.fullmatch(os.path.basename(name))
    return m.group(1) if m else None


NAME_EPOCH = dt.datetime(1970, 1, 1)  # (name_time's seconds count from it, naive, as names are)
INVERT_DIGITS = bytes.maketrans(b"0123456789", b"9876543210")
_NAME_TIME = re.compile(rb"(\d{4})-(\d{2})-(\d{2})_(\d{2})(\d{2})(\d{2})_")


def file_key(path: bytes) -> bytes:
    """Sorts newer sessions first: the file name with its digits inverted (9→0, …).

    Session names start with their start time, so inverting the digits turns "newest
    first" into plain ascending order. Names without a timestamp sort last (as oldest).
    """
    name = path[path.rfind(b"/") + 1:]
    if len(name) >= 17 and name[:4].isdigit():
        return name.translate(INVERT_DIGITS)
    return b"~" + name


def name_time(name: bytes) -> float:
    """A session file name's start time as naive seconds (the wall clock its name is in), NaN
    when the name holds none (or no such time: a 13th month, a 61st second).

    (A day's seconds from a cache of its date: the selection takes the time of every file
    holding a query word, 20,000 of a 100 MB vault, and building a datetime for each took
    ~5 µs — a third of bare rg's pass over it.)"""
    m = _NAME_TIME.match(name)
    if m is None:
        return math.nan
    day = _DAYS.get(name[:10])
    if day is None:
        try:
            day = (dt.date(int(name[:4]), int(name[5:7]), int(name[8:10])) - _EPOCH_DAY).days * 86400
        except ValueError:
            day = math.nan
        if len(_DAYS) > 100_000:
            _DAYS.clear()
        _DAYS[name[:10]] = day
    hms = int(name[11:17])  # (six digits: the regex said so)
    h, mi, sec = hms // 10000, hms // 100 % 100, hms % 100
    if h > 23 or mi > 59 or sec > 59:
        return math.nan
    return float(day + h * 3600 + mi * 60 + sec)


_EPOCH_DAY = NAME_EPOCH.date()
_DAYS: dict = {}  # b"YYYY-MM-DD" -> its first second since NAME_EPOCH (NaN: no such day)
