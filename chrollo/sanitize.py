"""The one sanitizer for text that comes out of a session file (docs/design.md §3, §5, §6).

A session file may have come from a peer or a cloned repository, so its text, its
frontmatter values and even its file name are untrusted data. Everything chrollo prints or
injects from one — recall labels and excerpts, ``search`` and ``read`` output, the MCP
tools' text — goes through :func:`clean` first:

* C0 control characters (all but tab), DEL and the C1 controls (8-bit CSI/OSC) become
  visible stand-ins (ESC → ``␛``, newline → ``␊``, C1 → ``�``): no escape sequence (OSC 52
  clipboard writes, window titles, clear-screen, CSI colours or hidden text) can reach a
  terminal, and no newline or carriage return can start a line of its own — a label cannot
  break out of its fence.
* Unicode tag characters (U+E0000–E007F: invisible text a model still reads), variation
  selectors (U+FE00–FE0F, U+E0100–E01EF: after an emoji, one per byte, they hide a whole
  message; an emoji without its U+FE0F only loses its presentation hint) and the bidi
  embedding/override/isolate controls (U+202A–202E, U+2066–2069: "Trojan Source") are
  dropped; U+2028/2029 (line and paragraph separators) become a space.

:func:`json_text` keeps ``--json`` output lossless but terminal-safe (the same characters as
JSON ``\\u`` escapes). :func:`name` is the full-string check for the short names shown in
labels. Nothing imported: this module is on the per-prompt recall path.
"""
from __future__ import annotations

# One str.translate table, built at import (~50 µs): no regex to compile on the hook path
# (a character class spanning the tag block costs ~0.5 ms to compile), and translate
# runs at C speed (~5 µs for a 6,000-character recall block).
_INVISIBLE = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), *range(0xE0000, 0xE0080),
              *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]  # (variation selectors: see the module doc)
_SEPARATORS = (0x2028, 0x2029)
_TABLE = {c: chr(0x2400 + c) for c in range(0x20) if c != 0x09}  # control pictures: ␀ ␇ ␊ ␍ ␛
_TABLE[0x7F] = "\u2421"                                           # ␡
_TABLE.update({c: "\ufffd" for c in range(0x80, 0xA0)})
_TABLE.update({c: None for c in _INVISIBLE})                      # dropped
_TABLE.update({c: " " for c in _SEPARATORS})
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@+-")


def clean(text) -> str:
    """``text`` made inert for a terminal or a prompt (see the module doc); never raises."""
    if text is None:
        return ""
    return (text if isinstance(text, str) else str(text)).translate(_TABLE)


_LINES_TABLE = {c: v for c, v in _TABLE.items() if c != 0x0A}


def clean_lines(texts: list) -> str:
    """Lines (none holding a newline) each made inert as :func:`clean` would, joined by
    newlines — one translate over the whole text, for megabytes of a session at once."""
    text = "\n".join(t.replace("\n", "\u240a") if "\n" in t else t for t in texts)
    return _bulk(text, _LINES_TABLE)


def _bulk(text: str, table: dict) -> str:
    """``text.translate(table)`` for megabytes: str.translate looks every character up, a
    regex of the table's characters (as ranges: a class of single characters is slow too)
    finds the rare ones at C speed (5 MB: ~0.05 s instead of ~0.4 s)."""
    import re

    rx = _BULK.get(id(table))
    if rx is None:
        runs: list = []
        for c in sorted(table):
            if runs and runs[-1][1] == c - 1:
                runs[-1][1] = c
            else:
                runs.append([c, c])
        rx = _BULK[id(table)] = re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in runs) + "]")
    return rx.sub(lambda m: table[ord(m.group())] or "", text)


_BULK: dict = {}


def clean_obj(obj):
    """A JSON-like value with :func:`clean` applied to every string in it (keys too)."""
    if isinstance(obj, str):
        return clean(obj)
    if isinstance(obj, dict):
        return {clean(k): clean_obj(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean_obj(v) for v in obj]
    return obj


def name(value, fallback: str = "?") -> str:
    """``value`` if it is a plain short name — 1 to 64 of letters, digits and ``._@+-``,
    starting with a letter or digit, checked over the whole string — else ``fallback``: a
    harness or peer name in a label is never free text."""
    ok = (isinstance(value, str) and 0 < len(value) <= 64 and value[0] not in "._@+-"
          and _NAME_CHARS.issuperset(value))
    return value if ok else fallback


def _json_escape(c: int) -> str:
    if c > 0xFFFF:  # JSON spells astral characters as a surrogate pair
        c -= 0x10000
        return "\\u%04x\\u%04x" % (0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF))
    return "\\u%04x" % c


_JSON_TABLE = {c: _json_escape(c) for c in (*range(0x7F, 0xA0), *_INVISIBLE, *_SEPARATORS)}


def json_text(dumped: str) -> str:
    """A ``json.dumps(..., ensure_ascii=False)`` string with DEL, C1, bidi, tag and separator
    characters written as ``\\u`` escapes: the same JSON value, inert on a terminal. (json
    already escapes the C0 controls; these characters can only occur inside strings.)"""
    return dumped.translate(_JSON_TABLE) if len(dumped) < 65536 else _bulk(dumped, _JSON_TABLE)
