"""Aider: the ``.aider.chat.history.md`` it keeps in each project (import only).

The file is markdown, appended to by every run in that folder: ``# aider chat started at
2026-12-02 05:55:51`` opens a session (local time: the only time the file records); ``#### ``
lines are what the user typed (one prompt may span several); ``> `` lines, and everything
before a session's first prompt, are aider's own output (the command line, token counts,
"Applied edit to app.py") and are not turns; every other line is the model's answer. Slash
commands are not prompts, but ``/ask``, ``/code`` and ``/architect`` carry one. A session's id
is ``aider-<its start>-<8 hex of its project folder's name>`` (a copy of the file elsewhere, a
backup, is the same session), its folder the file's. Keys are byte offsets (the file only grows).
"""
from __future__ import annotations

import datetime as dt
import os
import re

from .common import MAX_LINE, Transcript, Unit, is_injected

NAME = "aider"
HISTORY = ".aider.chat.history.md"
TRANSCRIPTS = ("", [HISTORY])  # (the default place is every project under the home: find())
IMPORT_HELP = f"~/**/{HISTORY} (projects up to 4 folders deep)"
MAX_DEPTH = 4
MAX_DIRS = 20000     # folders looked into under one root: a home is searched, not crawled
MAX_SESSIONS = 1000  # per file: each is read in its own pass
_NOT_PROJECTS = {"node_modules", "site-packages", "__pycache__", "venv", "env", "target", "dist", "build",
                 "Library", "snap"}
_HEADER = re.compile(rb"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
_CARRY = ("/ask ", "/code ", "/architect ")


def home_dir() -> str:
    return os.path.expanduser("~")


def find(root) -> list:
    """Every ``.aider.chat.history.md`` under ``root``, up to :data:`MAX_DEPTH` folders down
    (hidden folders and dependency trees left out; links not followed)."""
    from pathlib import Path

    out, stack, seen = [], [(os.fspath(root), 0)], 0
    while stack and seen < MAX_DIRS:
        folder, depth = stack.pop()
        seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            try:
                if e.name == HISTORY:
                    out.append(Path(e.path))
                elif depth < MAX_DEPTH and not e.name.startswith(".") and e.name not in _NOT_PROJECTS \
                        and e.is_dir(follow_symlinks=False):
                    stack.append((e.path, depth + 1))
            except OSError:
                continue
    return out


def _sid(path: str, started: bytes) -> str:
    from ..sha256 import hexdigest

    stamp = started.decode().replace("-", "").replace(":", "").replace(" ", "T")
    project = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return f"aider-{stamp}-{hexdigest(project.encode('utf-8', 'surrogateescape'))[:8]}"


def _lines(path: str, offset: int):
    """``(offset, line)`` from ``offset``; a line over MAX_LINE (no newline in 64 MiB) is passed
    over in pieces, never held whole."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        pos, long = offset, False
        while True:
            line = fh.readline(MAX_LINE)
            if not line:
                return
            start, pos = pos, pos + len(line)
            if long or not line.endswith(b"\n") and len(line) >= MAX_LINE:
                long = not line.endswith(b"\n")
                continue
            yield start, line


def read_transcript(path: str, offset: int = 0, agent_id: str | None = None) -> Transcript:
    """The units of one session of the file (``agent_id``; None: the first)."""
    want = agent_id or session_of(path)["session_id"]
    tr = Transcript([], offset)
    current = want if offset else None  # (a resume point is inside the session it was saved for)
    when: dt.datetime | None = None
    prompt: list = []
    answer: list = []
    at = 0
    started = bool(offset)  # (past the start-up lines: the first prompt is behind)

    def flush():
        nonlocal prompt, answer
        if current == want:
            if prompt:
                text = "\n".join(prompt).strip()
                for c in _CARRY:
                    text = text[len(c):].strip() if text.startswith(c) else text
                if text and not text.startswith("/") and not is_injected(text):
                    tr.add(Unit("user", when, [text], f"ai:{at}"), at)
            elif answer and "\n".join(answer).strip():
                tr.add(Unit("agent", when, ["\n".join(answer).strip()], f"aa:{at}"), at)
        prompt, answer = [], []

    for off, raw in _lines(path, offset):
        m = _HEADER.match(raw)
        if m:
            flush()
            current = _sid(path, m.group(1))
            when, started = _local(m.group(1)), False
            continue
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("####"):
            started = True
            if not prompt:
                flush()
                at = off
            prompt.append(line[5:].rstrip() if line.startswith("#### ") else "")
        elif line.startswith("> ") or line == ">" or not started:
            continue  # aider's own output (its start-up lines too, until the first prompt)
        else:
            if prompt:
                flush()
            if not answer and not line.strip():
                continue
            if not answer:
                at = off
            answer.append(line.rstrip())
    flush()
    return tr


def _local(stamp: bytes) -> dt.datetime | None:
    try:
        return dt.datetime.strptime(stamp.decode(), "%Y-%m-%d %H:%M:%S").astimezone()
    except ValueError:
        return None


def session_of(path: str) -> dict:
    """Every session the file holds, in order (at most :data:`MAX_SESSIONS`), all in its folder."""
    sessions: list = []
    more = 0
    for _off, raw in _lines(path, 0):
        m = _HEADER.match(raw)
        if m:
            if len(sessions) < MAX_SESSIONS:
                sessions.append(_sid(path, m.group(1)))
            else:
                more += 1
    if not sessions:
        raise ValueError(f"no '# aider chat started at' line: not an {HISTORY}")
    sessions = list(dict.fromkeys(sessions))
    cwd = os.path.dirname(os.path.abspath(path))
    return {"session_id": sessions[0], "sessions": sessions, "more": more, "cwd": cwd}
