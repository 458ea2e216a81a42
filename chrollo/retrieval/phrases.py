"""A query's "quoted phrases": each must occur as written (its words adjacent, in order, any
case, punctuation between them allowed), the terms still ranked as usual.

A file is searched only if it holds every phrase (one ``rg -l`` per phrase, before the
scan), and a hit's line must hold one of them.
"""
from __future__ import annotations

import re
import subprocess

from .. import rg as _rg

_QUOTED = re.compile(r'"([^"]*)"')


class Phrases:
    """``files``: the session files holding every phrase (rg's paths, bytes); ``line``: a
    regex any line holding one of them matches."""

    __slots__ = ("phrases", "files", "line")

    def __init__(self, phrases: list, files: set, line: re.Pattern):
        self.phrases, self.files, self.line = phrases, files, line


def pattern(phrase: str) -> str | None:
    """The phrase as a regex both ripgrep and Python read alike (None: no words in it)."""
    words = re.findall(r"\w+", phrase)
    return r"\b" + r"\W+".join(map(re.escape, words)) + r"\b" if words else None


def quoted(query: str) -> list:
    """The phrases quoted in ``query``, as regexes."""
    return [p for p in (pattern(m) for m in _QUOTED.findall(query)) if p]


def find(query: str, folder: str, globs, timeout: float) -> Phrases | None:
    """The query's phrases and the files under ``folder`` holding them all (None: no phrase)."""
    pats = quoted(query)
    if not pats:
        return None
    files: set | None = None
    for p in pats:
        cmd = [_rg.rg_path(), "-l", "-i", "--text", "--no-messages", "--no-config", "--no-ignore", "--color", "never",
               *(a for g in globs for a in ("-g", g)), "-e", p, "--", folder]
        try:
            out = subprocess.run(cmd, capture_output=True, timeout=timeout).stdout
        except (OSError, subprocess.TimeoutExpired):
            out = b""
        got = {ln for ln in out.split(b"\n") if ln}
        files = got if files is None else files & got
        if not files:
            break
    return Phrases(pats, files or set(), re.compile("|".join(f"(?:{p})" for p in pats), re.I))



