"""Human-readable rendering for the terminal: plain text, coloured with rich on a TTY.

Every line goes through :func:`chrollo.sanitize.clean` on its way out — on a terminal and
piped alike — unless the caller asks for ``raw`` bytes (``--raw``).

Layout (the Chrollo layout)::

    --- /path/to/2026-06-10_142536_019eb1a9.md:12 ---
    2026-06-10 14:25:36 · claude-code · score 3.10 · auth, token
       9  [2026-06-10 14:25:36] [User]
    → 12  the line that matched
"""
from __future__ import annotations

import sys

from .sanitize import clean


def _width(lines: list) -> int:
    return max((len(str(c["line"])) for c in lines), default=1)


def _block(path: str, line, meta: str, rows: list) -> list:
    """[(style, text)] lines for one excerpt; style is a rich style name or ''."""
    out = [("bold cyan", f"--- {path}:{line} ---" if line else f"--- {path} ---")]
    if meta:
        out.append(("dim", meta))
    w = _width(rows)
    for c in rows:
        mark = "→" if c["match"] else " "
        out.append(("bold" if c["match"] else "", f"{mark} {c['line']:>{w}}  {c['text']}"))
    return out


def search_lines(result) -> list:
    lines = []
    for h in result.hits:
        bits = [b for b in (h.date, h.harness, f"peer {h.peer}" if h.peer else None,
                            f"score {h.score:.2f}", ", ".join(h.terms)) if b]
        lines += _block(h.path, h.line, " · ".join(bits), h.context)
        lines.append(("", ""))
    return lines


def _rel(path: str, base) -> str:
    """``path`` relative to the folder ``base`` when inside it (shorter; read accepts both)."""
    base = str(base or "").rstrip("/")
    return path[len(base) + 1:] if base and path.startswith(base + "/") else path


def compact_search(result) -> str:
    """The hits as an agent gets them, sanitized (MCP read_memory, pi, ``search --compact``): the seed's
    layout with file paths relative to the vault, date · harness, no score — about half the
    characters of ``--json``. No hits reads as advice to search again."""
    if not result.hits:
        if not result.terms:
            return "The query has no searchable words (only stopwords or 1-letter words). Use distinctive terms.\n"
        return plain_text([("", f"No past conversation matches {', '.join(result.terms)}. "
                                "Search again with other words, synonyms or exact identifiers.")])
    lines = []
    for h in result.hits:
        meta = " · ".join(b for b in (h.date, h.harness, f"peer {h.peer}" if h.peer else None) if b)
        lines += _block(_rel(h.path, result.vault), h.line, meta, h.context)
        lines.append(("", ""))
    lines += [("", f"note: {w}") for w in result.warnings]
    if result.expanded:
        lines.append(("", "also searched: " + "; ".join(f"{t} → {', '.join(s)}" for t, s in result.expanded.items())))
    return plain_text(lines)


def compact_read(ex, base=None) -> str:
    """``read``'s window as an agent gets it (MCP read_memory_file): numbered lines."""
    return plain_text(read_lines(ex, base))


def read_lines(ex, base=None) -> list:
    """``base``: show the path relative to this folder."""
    bits = [b for b in (ex.date, ex.harness, f"peer {ex.peer}" if ex.peer else None,
                        f"lines {ex.start}-{ex.end} of {ex.total_lines}") if b]
    return _block(_rel(ex.path, base), ex.line, " · ".join(bits), ex.lines)


def plain_text(lines: list) -> str:
    """Styled lines as sanitized plain text (what the MCP tools return)."""
    return "\n".join(clean(text) for _style, text in lines).rstrip() + "\n"


def emit(lines: list, stream=None, raw: bool = False) -> None:
    """Write styled lines, sanitized (unless ``raw``): rich colours on a terminal, plain
    text when piped."""
    stream = stream or sys.stdout
    if not raw:
        lines = [(style, clean(text)) for style, text in lines]
    if stream.isatty():
        from rich.console import Console  # lazily: rich costs ~50 ms to import
        from rich.text import Text

        console = Console(file=stream, highlight=False, soft_wrap=True)
        for style, text in lines:
            console.print(Text(text, style=style or None))
    else:
        stream.write("".join(text + "\n" for _style, text in lines))


_MARK = {"ok": ("green", "ok"), "warn": ("yellow", "warn"), "partial": ("yellow", "partial"),
         "missing": ("dim", "not installed"), "failed": ("bold red", "FAILED"), "broken": ("bold red", "BROKEN"),
         "untrusted": ("bold red", "NOT TRUSTED"), "stale": ("yellow", "STALE")}


def doctor_lines(report: dict) -> list:
    """`chrollo doctor`'s report: general checks, then one block per harness."""
    out = []
    for c in report["checks"]:
        style, word = _MARK[c["status"]]
        out.append((style, f"{word:>13}  {c['name']}: {c['detail']}"))
        if c["fix"]:
            out.append(("", f"{'':>13}  fix: {c['fix']}"))
    for h, r in report["harnesses"].items():
        style, word = _MARK[r["status"]]
        out.append((style, f"{word:>13}  {h} ({r['config']})"))
        for f in r["fired"]:
            mark = "ok" if f["ok"] else "FAILED"
            out.append(("" if f["ok"] else "red", f"{'':>13}    {f['event']}: {mark} in {f['ms']} ms"
                        + ("" if f["ok"] else f" — {f['detail']}")))
        tool = r.get("mcp")
        if tool and tool["registered"]:
            out.append(("" if tool["ok"] else "red", f"{'':>13}    read_memory tool: "
                        + (f"ok in {tool['ms']} ms" if tool["ok"] else f"FAILED — {tool['detail']}")))
        cap = r.get("capture")
        if r["installed"] and cap:
            out.append(("dim", f"{'':>13}    last capture: {cap['last_capture'] or 'never'}; "
                               f"last session activity: {cap['last_activity'] or 'none found'}"))
        if r["fix"]:
            out.append(("", f"{'':>13}  fix: {r['fix']}"))
    out.append(("bold", "all installed hooks work" if report["ok"] else "some checks failed (see above)"))
    return out


def plural(n: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def size(n: float) -> str:
    """A byte count for people: ``512 B``, ``3.4 KB``, ``1.2 MB`` (never ``0.0 MB``)."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def import_lines(summary) -> list:
    """`chrollo import`'s summary: a table of outcomes, then each problem with its reason."""
    out = []
    head = "would import" if summary.dry_run else "import"
    for h, root in summary.roots.items():
        out.append(("dim", f"{head} {h} from {root}"))
    rows = [(s, summary.count(s)) for s in summary.STATUSES]
    turns = sum(r.turns for r in summary.results)
    nbytes = sum(r.bytes for r in summary.results)
    out.append(("bold", f"{'files':>10}  {len(summary.results)}  ({size(nbytes)} in {summary.seconds:.1f} s)"))
    for status, n in rows:
        style = "red" if status == "failed" and n else "yellow" if status == "skipped" and n else ""
        out.append((style, f"{status:>10}  {n}"))
    out.append(("bold", f"{'turns':>10}  {turns}" + (" (dry run: nothing written)" if summary.dry_run else "")))
    problems = [r for r in summary.results if r.status in ("skipped", "failed")]
    for r in problems[:50]:
        out.append(("yellow" if r.status == "skipped" else "red", f"{r.status}: {r.path}: {r.reason}"))
    if len(problems) > 50:
        out.append(("dim", f"… and {len(problems) - 50} more (see --json)"))
    if not summary.results:
        out.append(("dim", "nothing to import: no transcripts found there"))
    return out


def forget_lines(report) -> list:
    """`chrollo forget`'s report: what went (or would go), then a one-line total."""
    would = report.dry_run
    out = []
    for s in report.sessions:
        out.append(("", f"{'would remove' if would else 'removed'}  {s['path']}"))
    for t in report.already:
        out.append(("dim", f"already forgotten  {t}"))
    for f in report.lines:
        out.append(("", f"{'would scrub' if would else 'scrubbed'}  {f['path']}: "
                        f"line{'s' * (len(f['lines']) != 1)} {', '.join(map(str, f['lines']))}"))
    n_lines = sum(len(f["lines"]) for f in report.lines)
    if report.sessions:
        out.append(("bold", f"{plural(len(report.sessions), 'session file')} {'would be ' if would else ''}forgotten"))
    elif not (report.lines or report.pattern is not None):
        out.append(("bold", "nothing (more) to forget"))
    if report.lines or report.pattern is not None:
        out.append(("bold", f"{plural(n_lines, 'line')} in {plural(len(report.lines), 'file')} "
                            f"{'would be ' if would else ''}scrubbed"
                    + ("; later captures scrub the pattern too" if report.pattern is not None else "")))
    return out
