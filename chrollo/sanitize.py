"""The one sanitizer for text that comes out of a session file (DESIGN §3, §5, §6).

A session file may have come from a peer or a cloned repository, so its text, its
frontmatter values and even its file name are untrusted data. Everything chrollo prints or
injects from one — recall labels and excerpts, ``search`` and ``read`` output, the MCP
tools' text — goes through :func:`clean` first:

* C0 control characters (all but tab), DEL and the C1 controls (8-bit CSI/OSC) become
  visible stand-ins (ESC → ``␛``, newline → ``␊``, C1 → ``�``): no escape sequence (OSC 52
  clipboard writes, window titles, clear-screen, CSI colours or hidden text) can reach a
  terminal, and no newline or carriage return can start a line of its own — a label cannot
  break out of its fence.
* Unicode tag characters (U+E0000–E007F: invisible text a model still reads) and the bidi
  embedding/override/isolate controls (U+202A–202E, U+2066–2069: "Trojan Source") are
  dropped; U+2028/2029 (line and paragraph separators) become a space.

:func:`json_text` keeps ``--json`` output lossless but terminal-safe (the same characters as
JSON ``\\u`` escapes). :func:`name` is the full-string check for the short names shown in
labels. Stdlib ``re`` only: this module is on the per-prompt recall path.
"""
from __future__ import annotations

import re

_CONTROL = "\x00-\x08\x0a-\x1f\x7f-\x9f"
_INVISIBLE = "\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f"
_SEPARATORS = "\u2028\u2029"
_UNSAFE = re.compile(f"[{_CONTROL}{_INVISIBLE}{_SEPARATORS}]")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}")


def _stand_in(m: re.Match) -> str:
    c = ord(m.group())
    if c < 0x20:
        return chr(0x2400 + c)     # the Unicode "control pictures": ␀ ␇ ␊ ␍ ␛ …
    if c == 0x7f:
        return "\u2421"            # ␡
    if c <= 0x9f:
        return "\ufffd"
    if c in (0x2028, 0x2029):
        return " "
    return ""                      # tag characters and bidi controls: invisible, dropped


def clean(text) -> str:
    """``text`` made inert for a terminal or a prompt (see the module doc); never raises."""
    if text is None:
        return ""
    text = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_stand_in, text) if _UNSAFE.search(text) else text


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
    """``value`` if it is a plain short name (letters, digits, ``._@+-``; the whole string
    must match), else ``fallback``: a harness or peer name in a label is never free text."""
    return value if isinstance(value, str) and _NAME.fullmatch(value) else fallback


_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_INVISIBLE}{_SEPARATORS}]")


def _json_escape(m: re.Match) -> str:
    c = ord(m.group())
    if c > 0xFFFF:  # JSON spells astral characters as a surrogate pair
        c -= 0x10000
        return "\\u%04x\\u%04x" % (0xD800 + (c >> 10), 0xDC00 + (c & 0x3FF))
    return "\\u%04x" % c


def json_text(dumped: str) -> str:
    """A ``json.dumps(..., ensure_ascii=False)`` string with DEL, C1, bidi, tag and separator
    characters written as ``\\u`` escapes: the same JSON value, inert on a terminal. (json
    already escapes the C0 controls; these characters can only occur inside strings.)"""
    return _JSON_UNSAFE.sub(_json_escape, dumped) if _JSON_UNSAFE.search(dumped) else dumped
