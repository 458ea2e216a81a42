"""JSON with comments, as harnesses read their settings: Gemini CLI 0.61 loads ``settings.json``
with ``JSON.parse(stripJsonComments(text))`` (the npm ``strip-json-comments``): ``//`` and
``/* */`` comments are allowed, anything else (trailing commas…) is not.

:func:`loads` reads such a file; :func:`dumps_into` writes new contents back into the user's
text changing only the top-level members whose value changed, so their comments and layout
elsewhere stay as they were.
"""
from __future__ import annotations

import json
import re

_WS = re.compile(r"\s*")


def strip(text: str) -> str:
    """``text`` with every comment replaced by spaces (outside strings; newlines kept), so
    each character keeps its offset — what strip-json-comments does with ``whitespace: true``."""
    out, i, n, start = [], 0, len(text), 0
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
            continue
        if c == '"':
            in_string = True
            i += 1
            continue
        two = text[i:i + 2]
        if two in ("//", "/*"):
            end = text.find("\n", i) if two == "//" else text.find("*/", i + 2)
            end = n if end < 0 else (end if two == "//" else end + 2)
            out.append(text[start:i])
            out.append(re.sub(r"\S", " ", text[i:end]))
            i = start = end
            continue
        i += 1
    out.append(text[start:])
    return "".join(out)


def has_comments(text: str) -> bool:
    return strip(text) != text


def loads(text: str):
    """Parse JSON that may hold comments (ValueError if it is not that)."""
    return json.loads(strip(text))


def _members(clean: str, i: int = 0) -> tuple[list, int, int]:
    """The object that starts at (or after whitespace from) ``i`` in ``clean`` (a comment-free
    text): its members [(key, start of the value, end of the value, offset of the comma after
    it or None)], the offset of its opening and of its closing brace."""
    dec = json.JSONDecoder()
    i = _WS.match(clean, i).end()
    if clean[i:i + 1] != "{":
        raise ValueError("not a JSON object")
    opening, i = i, i + 1
    out = []
    while True:
        i = _WS.match(clean, i).end()
        if clean[i:i + 1] == "}":
            return out, opening, i
        key, j = dec.raw_decode(clean, i)
        j = _WS.match(clean, j).end()
        if clean[j:j + 1] != ":":
            raise ValueError("':' expected")
        v_start = _WS.match(clean, j + 1).end()
        _value, v_end = dec.raw_decode(clean, v_start)
        i = _WS.match(clean, v_end).end()
        comma = i if clean[i:i + 1] == "," else None
        out.append((key, v_start, v_end, comma))
        if comma is not None:
            i += 1
        elif clean[i:i + 1] != "}":
            raise ValueError("',' or '}' expected")


def dumps_into(text: str | None, data: dict) -> str:
    """``data`` written over ``text``: a file without comments is written afresh (2-space JSON);
    one with comments keeps every byte outside the members that changed (objects in both are
    edited member by member, so a comment inside one survives a change beside it)."""
    if not text or not has_comments(text):
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    clean = strip(text)
    return _apply(text, _edits(text, clean, 0, json.loads(clean), data, 1), 0, len(text))


def _apply(text: str, edits: list, start: int, end: int) -> str:
    """``text[start:end]`` with ``edits`` ((start, end, replacement), inside it) made."""
    out, at = [], start
    for s, e, new in sorted(edits):
        out += [text[at:s], new]
        at = e
    return "".join(out) + text[at:end]


def _edits(text: str, clean: str, at: int, old: dict, new: dict, depth: int) -> list:
    """(start, end, replacement) edits turning the object at ``at`` from ``old`` into ``new``.

    Values that changed are replaced (objects in both: member by member). When members go or
    come, the object's inside is rebuilt from its members' own stretches of text — each from
    after the comma before it to the comma after it, comments and all — joined by commas."""
    members, opening, closing = _members(clean, at)
    inner: dict = {}  # member index -> edits inside its value
    for n, (key, v_start, v_end, _comma) in enumerate(members):
        if key in new and new[key] != old.get(key):
            inner[n] = (_edits(text, clean, v_start, old[key], new[key], depth + 1)
                        if isinstance(new[key], dict) and isinstance(old.get(key), dict)
                        else [(v_start, v_end, _value(new[key], depth))])
    added = [k for k in new if k not in old]
    if not added and all(m[0] in new for m in members):
        return [e for n in inner for e in inner[n]]
    pieces: list = []  # [value part, rest up to its comma, what follows that comma] per member kept
    for n, (key, v_start, v_end, comma) in enumerate(members):
        start = opening + 1 if n == 0 else members[n - 1][3] + 1
        end = closing if comma is None else comma
        if key in new:
            pieces.append([_apply(text, inner.get(n, []), start, v_end), text[v_end:end], ""])
            continue
        if pieces:  # a gone member: the comment ending the line before it stays on that line
            first = text[start:v_start].split("\n", 1)[0]
            if first.strip():
                pieces[-1][2] += first
            if comma is None:  # and the last one leaves the object's end as it was
                pieces[-1][2] += "\n" + "  " * (depth - 1) if "//" in pieces[-1][2] else ""
                pieces[-1][2] = pieces[-1][2].rstrip(" \t") + text[len(text[:closing].rstrip()):closing] \
                    if not pieces[-1][2].endswith("\n" + "  " * (depth - 1)) else pieces[-1][2]
    body = ",\n".join(f"{'  ' * depth}{json.dumps(k, ensure_ascii=False)}: {_value(new[k], depth)}" for k in added)
    close = f"\n{'  ' * (depth - 1)}"
    if not pieces:
        return [(opening + 1, closing, f"\n{body}{close}" if body else "")]
    out = []
    for i, (value, rest, after) in enumerate(pieces):
        last = i == len(pieces) - 1
        if not last or body:  # a comma right after the value (before its comment)
            out.append(value + "," + rest + after)
        else:
            out.append(value + rest + after)
    inside = "".join(out)
    if body:
        inside = inside.rstrip() + f"\n{body}{close}"
    return [(opening + 1, closing, inside)]


def _value(v, depth: int) -> str:
    """A member's value as 2-space JSON indented to sit ``depth`` levels in."""
    return json.dumps(v, indent=2, ensure_ascii=False).replace("\n", "\n" + "  " * depth)
