"""The candidate files a search reads (once each): their lines, frontmatter and turn headers."""
from __future__ import annotations

import bisect
import os

from .. import vault as _vault
from ..fileformat import HEADER_RE, TOOL_LINE_RE, file_date, parse_frontmatter
from . import tuning


class FileView:
    """A candidate file read once: lines, frontmatter, turn headers."""

    def __init__(self, path: str, lines: list | None = None):
        self.lines = lines if lines is not None else read_lines(path)
        self.meta, body = parse_frontmatter(self.lines)
        self.body_start = body + 1  # 1-based first line after the frontmatter
        default_date = str(self.meta.get("date") or "") or file_date(path) or ""
        self.headers: list[int] = []
        self.stamps: list[str] = []
        self.inline: set = set()  # legacy headers with the user's text on the same line
        for i in range(body, len(self.lines)):
            ln = self.lines[i]
            if ln.startswith(("[", "## [")) and (m := HEADER_RE.match(ln)):
                self.headers.append(i + 1)
                self.stamps.append(f"{m.group(1) or default_date} {m.group(2)}".strip())
                if m.group(4):
                    self.inline.add(i + 1)

    def can_anchor(self, line: int) -> bool:
        if line < self.body_start or line > len(self.lines):
            return False
        text = self.lines[line - 1]
        if line in self.inline:
            return True
        return not (HEADER_RE.match(text) or TOOL_LINE_RE.match(text) or not text.strip())

    def turn_lines(self, line: int) -> int:
        """How many lines the turn holding ``line`` spans (header to the next header)."""
        i = bisect.bisect_right(self.headers, line) - 1
        start = self.headers[i] if i >= 0 else self.body_start
        end = self.headers[i + 1] if i + 1 < len(self.headers) else len(self.lines) + 1
        return end - start

    def stamp(self, line: int) -> str | None:
        i = bisect.bisect_right(self.headers, line) - 1
        return self.stamps[i] if i >= 0 else (str(self.meta.get("date")) if self.meta.get("date") else None)

    def span(self, line: int, context: int) -> tuple[int, int]:
        """The lines [lo, hi] shown around ``line``: ``context`` lines of text each side —
        blank lines (the separators between turns) are shown but not counted — never into
        the frontmatter (a hit shows the conversation, not the properties)."""
        lines, n = self.lines, len(self.lines)
        lo, left = line, context
        while left and lo > self.body_start:
            lo -= 1
            left -= bool(lines[lo - 1].strip())
        hi, left = line, context
        while left and hi < n:
            hi += 1
            left -= bool(lines[hi - 1].strip())
        return lo, hi

    def window(self, line: int, context: int) -> list[dict]:
        lo, hi = self.span(line, context)
        return [{"line": n, "text": clip(self.lines[n - 1]), "match": n == line} for n in range(lo, hi + 1)]


def clip(text: str) -> str:
    """A context line of reasonable length (a pasted log can be megabytes on one line)."""
    limit = tuning.MAX_LINE_CHARS
    if len(text) <= limit:
        return text
    return f"{text[:limit]} …[{len(text) - limit} more characters; chrollo read shows all]"


def read_lines(path) -> list:
    with _vault.open_regular(path) as fh:
        lines = fh.read().decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def lines_of(views: dict, path: bytes) -> list | None:
    """A candidate file's lines, read once per search (None if it vanished)."""
    got = views.get(path, False)
    if got is False:
        try:
            got = views[path] = read_lines(path)
        except OSError:
            got = views[path] = None
    return got.lines if isinstance(got, FileView) else got


def view_of(views: dict, path: bytes) -> FileView | None:
    """The file behind a hit, parsed (headers, frontmatter) once per search."""
    got = views.get(path, False)
    if not isinstance(got, FileView):
        lines = lines_of(views, path)
        got = views[path] = None if lines is None else FileView(os.fsdecode(path), lines)
    return got
