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

import re
import sys
from contextlib import contextmanager

from .fileformat import HEADER_RE
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
        bits = [b for b in (f"{h.vault} vault" if h.vault else None, h.date, h.harness,
                            f"peer {h.peer}" if h.peer else None, f"score {h.score:.2f}", ", ".join(h.terms)) if b]
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
         "untrusted": ("bold red", "NOT TRUSTED"), "stale": ("yellow", "STALE"),
         "duplicate": ("yellow", "TWICE"), "mismatch": ("yellow", "VERSIONS")}


def doctor_lines(report: dict) -> list:
    """`chrollo doctor`'s report: general checks, then one block per harness."""
    out = []
    for c in report["checks"]:
        style, word = _MARK[c["status"]]
        out.append((style, f"{word:>13}  {c['name']}: {c['detail']}"))
        if c["fix"]:
            out += _fix_lines(c["fix"])
    for h, r in [*report["harnesses"].items(), *((r["harness"], r) for r in report.get("configs", []))]:
        style, word = _MARK[r["status"]]
        out.append((style, f"{word:>13}  {h} ({r['config']})"))
        if r.get("package"):
            p = r["package"]
            out.append(("dim", f"{'':>13}    package {p['id']} {p['version']}"
                               + ("" if p["enabled"] else " (disabled)") + f", CLI {p['cli_version']}"))
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
            out += _fix_lines(r["fix"])
    out.append(("bold", "all installed hooks work" if report["ok"] else "some checks failed (see above)"))
    return out


def _fix_lines(fix: str) -> list:
    """A fix, one output line per line of it: lines to paste into a file (Codex's trust
    entries) stay lines (each still sanitized), never joined by a visible ␊."""
    first, *rest = fix.split("\n")
    return [("", f"{'':>13}  fix: {first}")] + [("", f"{'':>13}       {line}") for line in rest]


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
    problems = summary.problems()
    for r in problems[:50]:
        out.append(("red" if r.status == "failed" else "yellow", f"{r.status}: {r.path}: {r.reason}"))
    if len(problems) > 50:
        out.append(("dim", f"… and {len(problems) - 50} more (see --json)"))
    if not summary.results:
        out.append(("dim", "nothing to import: no transcripts found there"))
    return out


def index_line(summary: dict) -> str:
    """`chrollo index`'s summary: files indexed, what was read now and how long, the index's size."""
    return clean(f"indexed {plural(summary['files'], 'file')} of {summary['vault']} "
                 f"({summary['read']} read now, {size(summary['bytes_read'])} in "
                 f"{summary['seconds']:.1f} s); index {size(summary['index_bytes'])}")


@contextmanager
def progress_bar(label: str, show: bool = True, named: bool = False):
    """A transient progress bar while the body runs, when ``show`` and stderr is a terminal
    (`chrollo index`, `chrollo import`): yields the callback the library reports to —
    ``(done, total)``, or ``(done, total, path)`` with ``named`` (the file's name shown) — or
    None when there is no bar."""
    if not (show and sys.stderr.isatty()):
        yield None
        return
    import os

    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    bar = Progress(TextColumn(label), BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                   *([TextColumn("{task.fields[name]}")] if named else []), transient=True)
    task = bar.add_task(label, total=None, **({"name": ""} if named else {}))
    bar.start()
    try:
        if named:
            yield lambda done, total, path: bar.update(task, completed=done, total=total,
                                                       name=os.path.basename(path)[:40])
        else:
            yield lambda done, total: bar.update(task, completed=done, total=total)
    finally:
        bar.stop()


def forget_question(preview) -> str:
    """What `chrollo forget` asks on a terminal before removing whole sessions: which ones
    (the first twenty named), then how many."""
    n = len(preview.sessions)
    names = [f"  {clean(s['path'])}" for s in preview.sessions[:20]] + ([f"  … and {n - 20} more"] if n > 20 else [])
    return "\n".join(names + [f"Forget {plural(n, 'session file')} for good?"])


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
    for p in report.relinked:
        out.append(("dim", f"link updated  {p}"))
    n_lines = sum(len(f["lines"]) for f in report.lines)
    kept = report.repository
    if kept and kept["files"]:
        out.append(("yellow", f"kept  {plural(len(kept['files']), 'other session file')} recording the repository "
                              f"{clean(kept['repository'])} this folder claims (other machines or folders); "
                              f"`chrollo forget --project {clean(kept['repository'])}` forgets them too"))
    if report.sessions:
        out.append(("bold", f"{plural(len(report.sessions), 'session file')} {'would be ' if would else ''}forgotten"))
    elif not (report.lines or report.pattern is not None):
        out.append(("bold", "nothing (more) to forget"))
    if report.lines or report.pattern is not None:
        renamed = f" ({len(report.renamed)} renamed: the title's words left the name)" if report.renamed else ""
        out.append(("bold", f"{plural(n_lines, 'line')} in {plural(len(report.lines), 'file')} "
                            f"{'would be ' if would else ''}scrubbed{renamed}"
                    + ("; later captures scrub the pattern too" if report.pattern is not None else "")))
    return out


def sessions_lines(listing) -> list:
    """`chrollo sessions`: one line per session, newest first (like `git log --oneline`):
    started, id, harness, project, turns, size, origin, title."""
    rows = listing.rows
    cols = [(r.started[:16] if r.started else "-", r.id or "-", r.harness or "-", r.project or "-",
             f"{r.turns}", size(r.bytes), r.peer or "local", r.title or "") for r in rows]
    cols = [tuple(clean(c) for c in row) for row in cols]
    widths = [max((len(c[i]) for c in cols), default=0) for i in range(7)]
    styles = ("yellow", "cyan", "green", "magenta", "", "dim", "blue", "")
    out = []
    for r, c in zip(rows, cols):
        parts = []
        for i, (text, style) in enumerate(zip(c, styles)):
            w = widths[i] if i < 7 else 0
            if i == 7 and r.parent:
                text = "↳ " + text  # a subagent's file (its parent's id, listed next to it)
            parts += [("", "  " if i else ""), (style, text.rjust(w) if i in (4, 5) else text.ljust(w))]
        out.append(parts)
    return out


def sessions_notes(listing, filtered: bool, limit: int) -> list:
    """`chrollo sessions`' note on stderr: none found (none ``match`` when ``filtered``), or
    how to see the rest."""
    if not listing.rows:
        return [f"no sessions{' match' if filtered else ''} in {listing.vault}"]
    return [f"(more: -n {2 * limit}, or -n 0 for all)"] if listing.more else []


def emit_rows(rows: list, stream=None) -> None:
    """Lines made of styled parts [(style, text), …]: coloured on a terminal, plain when
    piped. Every part is already sanitized."""
    stream = stream or sys.stdout
    if stream.isatty():
        from rich.console import Console
        from rich.text import Text

        console = Console(file=stream, highlight=False, soft_wrap=True)
        for parts in rows:
            t = Text()
            for style, text in parts:
                t.append(text, style=style or None)
            console.print(t)
    else:
        stream.write("".join("".join(text for _s, text in parts).rstrip() + "\n" for parts in rows))


_TOOL = re.compile(r"^\s*<tool>(.*)</tool>\s*$")


def conversation_lines(conv) -> list:
    """`chrollo read SESSION`: a heading (title; started · harness · project · id · turns;
    the file), then each turn under a rule with its number, role, time and line; agent text
    unquoted, tool calls as dim ``⏺`` lines."""
    bits = [b for b in (conv.started and str(conv.started).replace("T", " "), conv.harness, conv.project,
                        f"peer {conv.peer}" if conv.peer else None, conv.session_id,
                        f"{conv.total_turns} turn{'s' * (conv.total_turns != 1)}") if b]
    out = [("bold", conv.title or "(untitled)"), ("dim", " · ".join(bits)), ("dim", conv.path)]
    if len(conv.turns) < conv.total_turns:
        out.append(("dim", f"turns {conv.turns[0]['n']}-{conv.turns[-1]['n']} of {conv.total_turns}"
                    if len(conv.turns) > 1 else f"turn {conv.turns[0]['n']} of {conv.total_turns}"))
    for t in conv.turns:
        who = "User" if t["role"] == "user" else "Agent"
        out += [("", ""), ("bold green" if who == "User" else "bold blue",
                           f"── {t['n']} · {who} · {t['timestamp']} · line {t['line']} ──")]
        body = conv.lines[t["line"]:t["last_line"]]
        if t.get("inline"):  # (a legacy header holding the user's text)
            out.append(("", t["inline"]))
        for ln in body:
            if who == "Agent":
                ln = ln[2:] if ln.startswith("> ") else ln[1:] if ln.startswith(">") else ln
            elif ln.startswith("\\") and HEADER_RE.match(ln[1:]):
                ln = ln[1:]
            m = _TOOL.match(ln)
            out.append(("dim", f"  ⏺ {m.group(1)}") if m else ("", ln))
    return out


_ANSI = {"bold": "1", "dim": "2", "green": "32", "blue": "34", "cyan": "36", "yellow": "33",
         "magenta": "35", "red": "31"}


def _ansi(style: str) -> str:
    codes = [_ANSI[w] for w in style.split() if w in _ANSI]
    return f"\x1b[{';'.join(codes)}m" if codes else ""


def page(lines: list, stream=None, pager: bool = True) -> None:
    """Like :func:`emit` (sanitized; coloured on a terminal, plain when piped), through a
    pager when on a terminal and longer than the screen, as git does: ``$CHROLLO_PAGER``,
    else ``$PAGER``, else ``less`` (with ``LESS=FRX`` unless set); "" or ``cat``: none.
    Built for megabytes: one sanitizing pass, colours as plain ANSI codes (``NO_COLOR``
    honoured), no per-line rendering objects."""
    from .sanitize import clean_lines

    stream = stream or sys.stdout
    text = clean_lines([t for _s, t in lines])
    if not stream.isatty():
        stream.write(text + "\n")
        return
    import os
    import shutil

    if not os.environ.get("NO_COLOR"):
        out = []
        for (style, _t), line in zip(lines, text.split("\n")):
            code = _ansi(style) if style and line else ""
            out.append(f"{code}{line}\x1b[0m" if code else line)
        text = "\n".join(out)
    rendered = text + "\n"
    height = shutil.get_terminal_size((100, 24)).lines
    cmd = os.environ.get("CHROLLO_PAGER", os.environ.get("PAGER", "less"))
    if not pager or len(lines) < height or not cmd.strip() or cmd.strip() == "cat":
        stream.write(rendered)
        stream.flush()
        return
    import subprocess

    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    stream.flush()
    try:
        proc = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        stream.write(rendered)
        return
    try:
        proc.stdin.write(rendered.encode("utf-8", "replace"))
        proc.stdin.close()
    except BrokenPipeError:
        pass  # (the reader quit the pager early)
    proc.wait()


def _home_short(path: str) -> str:
    import os

    home = os.path.expanduser("~")
    return "~" + path[len(home):] if home and path.startswith(home + "/") else path


def receipt_lines(rows: list) -> list:
    """`chrollo recall log`: one entry per prompt, newest first, its excerpts below it."""
    out = []
    for e in rows:
        n = len(e.get("excerpts") or [])
        head = " · ".join(str(x) for x in (str(e.get("time", ""))[:19].replace("T", " "), e.get("harness"),
                                           str(e.get("session") or "")[:8]) if x)
        what = (f"{n} excerpt{'s' * (n != 1)}, {e.get('chars', 0)} chars" if n else "nothing injected")
        prompt = f"  “{e['prompt']}”" if e.get("prompt") else ""
        out.append(("bold", f"{head} · {what}{prompt}"))
        if isinstance(e.get("signals"), dict):
            out.append(("dim", "    " + signal_text(e["signals"])))
        for x in e.get("excerpts") or []:
            if isinstance(x, dict):
                out.append(("", f"    {_home_short(str(x.get('path')))}:{x.get('line')}  "
                                f"(lines {x.get('start')}-{x.get('end')}, {x.get('chars')} chars)"))
    return out


def signal_text(s: dict) -> str:
    """The recall gate's signals in one line (recall.signals): what decided an injection."""
    try:
        tying = int(s.get("tying", 0))
        return (f"coverage {float(s.get('coverage', 0)):.0%} ({float(s.get('needed', 0)):.0%} needed) · "
                f"{plural(tying, 'session')} tying · expected in {float(s.get('chance', 0)):.3g} by chance · "
                f"runner-up {float(s.get('runner_up', 0)):.0%}"
                + (f" · {plural(int(s['unknown']), 'name')} found nowhere" if s.get("unknown") else ""))
    except (TypeError, ValueError):  # (a hand-edited log: say so, do not fail)
        return "signals unreadable"


def receipt_notes(enabled: bool, rows: list, log: str) -> list:
    """`chrollo recall log`'s note on stderr: the log is off, or nothing was injected yet."""
    if not enabled:
        return ["the recall log is off (chrollo config recall-log on)"]
    return [] if rows else [f"nothing injected yet ({log})"]


def why_lines(trace: dict) -> list:
    """`chrollo recall why`: the terms and their weights, each hit's verdict, the decision,
    then the block as it would be injected."""
    out = []
    terms = trace.get("terms") or {}
    if trace.get("query") is not None:
        common = set(trace.get("common") or ())
        out.append(("bold", f"terms ({plural(trace.get('searched', 0), 'session')} searched in "
                            f"{_home_short(str(trace.get('vault') or '-'))}):"))
        out += [("", f"  {t:<20} weight {w:5.2f}" + ("  (common)" if t in common else ""))
                for t, w in sorted(terms.items(), key=lambda kv: -kv[1])]
        if trace.get("needed") is not None:
            out.append(("dim", f"a passage must hold {trace['needed']:.0%} of the weight; the best holds "
                               f"{trace.get('best', 0):.0%}"))
        if trace.get("signals"):
            out.append(("dim", "signals: " + signal_text(trace["signals"])))
    hits = trace.get("hits") or []
    if hits:
        out.append(("bold", "hits, in search order:"))
    for h in hits:
        style = "green" if h.get("verdict") == "injected" else "dim" if h.get("verdict", "").startswith(
            ("fewer", "only", "under", "from this")) else ""
        share = f" · passage {h['passage_share']:.0%}" if "passage_share" in h else ""
        out.append((style, f"  {_rel(h['path'], trace.get('vault'))}:{h['line']}  [{', '.join(h['terms'])}] "
                           f"line {h['line_share']:.0%}{share} → {h.get('verdict', '')}"))
    out.append(("bold", f"decision: {trace.get('decision') or 'nothing injected'}"))
    if trace.get("block"):
        out += [("", "")] + [("dim", ln) for ln in trace["block"].rstrip("\n").split("\n")]
    return out


PALETTE = ("cyan", "magenta", "green", "yellow", "blue", "red")
BAR = 40


def activity_rows(activity: dict, recall: dict | None = None) -> list:
    """`chrollo stats`' chart: one bar per day or week, split by project or harness in
    colours (the first six keys; the rest as "other"), the count and, per key, the numbers."""
    series = activity.get("series") or []
    by = activity.get("by")
    totals: dict = {}
    for r in series:
        for k, n in (r.get("by") or {}).items():
            totals[k] = totals.get(k, 0) + n
    keys = [k for k, _n in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))]
    shown = keys[:len(PALETTE)] if len(keys) <= len(PALETTE) else keys[:len(PALETTE) - 1]
    colour = {k: PALETTE[i] for i, k in enumerate(shown)}
    per = activity.get("per", "day")
    top = max((r["turns"] for r in series), default=0)
    out = [[("bold", f"turns per {per}, {activity.get('since')} .. {activity.get('until')}"
             f"{f' by {by}' if by else ''}: {activity.get('turns', 0)}")]]
    if by and keys:
        legend = [("", "  ")]
        for k in shown:
            legend += [(colour[k], "█ "), ("", clean(k) + "  ")]
        if len(keys) > len(shown):
            legend += [("dim", "█ "), ("", "other")]
        out.append(legend)
    label = "week of" if per == "week" else "day"
    out.append([("dim", f"  {label:<10}")])
    for r in series:
        n = r["turns"]
        width = 0 if not top else max(1 if n else 0, round(BAR * n / top))
        parts = [("yellow", f"  {r['start']}  ")]
        if by and n:
            split = r.get("by") or {}
            segs, used = [], 0
            for k in shown:
                if split.get(k):
                    segs.append((colour[k], split[k]))
            rest = n - sum(c for _k, c in segs)
            if rest:
                segs.append(("dim", rest))
            for i, (style, c) in enumerate(segs):
                w = round(width * (used + c) / n) - round(width * used / n)
                used += c
                parts.append((style, "█" * w))
        else:
            parts.append(("cyan", "█" * width))
        parts.append(("", " " * (BAR - width) + f"  {n:>5}"))
        if by and n:
            parts.append(("dim", "  " + ", ".join(f"{clean(k)} {c}" for k, c in (r.get("by") or {}).items())))
        out.append(parts)
    if recall is not None:
        share = "-" if recall.get("share") is None else f"{recall['share']:.0%}"
        out += [[("", "")], [("bold", "recall: "), ("", f"{plural(recall.get('prompts', 0), 'prompt')} seen · "
                                                       f"{recall.get('injections', 0)} with an injection ({share}) · "
                                                       f"{plural(recall.get('chars', 0), 'character')} injected"
                                                       + ("" if recall.get("enabled", True) else " · the log is off"))]]
    return out


# ----------------------------------------------------------------------------- command reports
# (each returns what a command prints: lines for stdout, and notes for stderr where it has any;
# cli.py only prints them)

def search_notes(result) -> list:
    """`chrollo search`'s closing lines on stderr: synonyms used, then the hit count (or why none)."""
    out = [f"chrollo: also searched {', '.join(syns)} for {term}" for term, syns in result.expanded.items()]
    n = len(result.hits)
    if not result.terms:
        out.append("chrollo: the query has no searchable terms (only stopwords or 1-letter words).")
    elif n == 0:
        out.append(f"chrollo: no matches for {', '.join(result.terms)} in {result.vault}")
    else:
        m = result.total_matches
        out.append(f"chrollo: {n} hit{'s' * (n != 1)} · {m} occurrence{'s' * (m != 1)} · "
                   f"terms: {', '.join(result.terms)}")
    return out


def indexing_note(vault: str, behind: bool = False) -> str:
    """`chrollo search`'s note when it started a background build of a large vault's index
    (``behind``: there is one, but many files are not in it as they are now)."""
    if behind:
        return (f"chrollo: the search index of {vault} is behind its files (written by another program "
                "or since it was built; or unusable): it is being brought up to date in the background")
    return (f"chrollo: {vault} is large and has no search index yet: it is being built in the background "
            "(`chrollo index` shows it done); later searches read only the best sessions")


def stats_rows(st) -> tuple:
    """`chrollo stats`: (rows for emit_rows, warnings): the totals, per harness and per origin,
    the hooks' last captures, then the activity chart."""
    warnings = [f"unreadable: {u}" for u in st.unreadable]
    out = [f"vault     {st.vault}",
           f"sessions  {st.sessions}",
           f"turns     {st.turns}",
           f"size      {size(st.bytes)}",
           f"dates     {st.first or '-'} .. {st.last or '-'}",
           f"indexed   {st.index['indexed']} of {plural(st.index['files'], 'file')} ({size(st.index['index_bytes'])})"
           if st.index.get("usable") else "indexed   no search index (`chrollo index` builds one)"]
    for title, table in (("harness", st.harnesses), ("origin", st.peers)):
        if table:
            out.append("")
            out.append(f"{title:<14}{'sessions':>10}{'turns':>10}{'size':>11}")
            for k, v in table.items():
                out.append(f"{k:<14}{v['sessions']:>10}{v['turns']:>10}{size(v['bytes']):>11}")
    hooks = {h: c for h, c in st.hooks.items() if c["last_capture"] or c["last_activity"]}
    if hooks:
        out += ["", f"{'hooks':<14}{'last capture':<21}last session activity"]
        for h, c in hooks.items():
            out.append(f"{h:<14}{c['last_capture'] or 'never':<21}{c['last_activity'] or '-'}"
                       + ("   STALE" if c["stale"] else ""))
        warnings += [c["message"] for c in hooks.values() if c["stale"]]
    # (harness names come from frontmatter: untrusted)
    rows = [[("", clean(line))] for line in out] + [[("", "")]] + activity_rows(st.activity, st.recall)
    return rows, warnings


def trusted_lines(rows: list) -> tuple:
    """`chrollo init --list`: (stdout lines, stderr notes)."""
    out = [clean(f"{r['status']:<10} {r['vault']}" + (f"  ({r['detail']})" if r["detail"] else "")) for r in rows]
    return out, [] if rows else ["no trusted projects: run `chrollo init` inside one"]


def untrust_lines(r: dict) -> tuple:
    """`chrollo init --untrust`: (stdout lines, stderr notes)."""
    if r["was_trusted"]:
        return [clean(f"untrusted {r['project']}: its sessions go to the global vault again "
                      "(files already in .chrollo/memories stay there)")], []
    return [], [clean(f"{r['project']} was not trusted: nothing to do")]


def trust_lines(r: dict) -> tuple:
    """`chrollo init`: (stdout lines, stderr notes)."""
    out = [clean(f"trusted {r['vault']}: sessions started in {r['project']} are kept and recalled there"
                 + (" (created, with a .gitignore keeping it out of git)" if r["created"] else ""))]
    n = r["existing_files"]
    notes = [f"note: it already held {n} session file{'' if n == 1 else 's'} chrollo did not write "
             "there, now searched and recalled too. If they came with a cloned repository, check "
             f"them (chrollo stats --dir {r['vault']}), and if you do not trust them: "
             "chrollo init --untrust"] if n else []
    return out, [clean(x) for x in notes]


# (settings: `chrollo config`, `exclude`, install's --vault)

def settings_files_lines(rows: list) -> list:
    """`chrollo config --files`: each settings file (and whether it is written yet), then what
    it holds and the command that changes it."""
    return [f"{r['file']}{'' if r['exists'] else ' (not yet written)'}\n    {r['holds']} — {r['changed_by']}"
            for r in rows]


def settings_lines(shown: dict) -> list:
    """`chrollo config [KEY]`: one ``name value`` line per setting."""
    return [f"{k} {v}" for k, v in shown.items()]


def recall_log_removed(n: int) -> str:
    """`chrollo config recall-log off`'s note when it removed a log."""
    return f"removed the recall log ({n} receipts)"


def obsidian_line(v: dict) -> str:
    """Whether Obsidian shows a vault (obsidian.visibility's answer), in words."""
    if v["visible"]:
        return f"Obsidian shows it: vault {v['obsidian_vault']}, folder {v['relative']}"
    if v["obsidian_vault"]:
        return (f"inside the Obsidian vault {v['obsidian_vault']}, but hidden by the dot-folder "
                f"{v['hidden_by'][0]} (Obsidian never shows those)")
    return "not inside an Obsidian vault (open this folder as a vault, or pick a folder inside yours)"


def vault_lines(report: dict) -> tuple:
    """`chrollo config vault [PATH]`: (stdout: the vault, stderr: whether Obsidian shows it and
    what stayed in the previous one)."""
    notes = [obsidian_line(report["obsidian"])]
    if report.get("left_behind"):
        notes.append(f"{plural(report['left_behind'], 'session')} stay in {report['previous_vault']}; "
                     f"move the *.md files to {report['vault']} to keep them together.")
    return [report["vault"]], notes


def install_vault_notes(moved: dict) -> list:
    """`chrollo install --vault PATH`'s notes (stderr): where memory lives now, whether Obsidian
    shows it."""
    return [f"memory: {moved['vault']}", obsidian_line(moved["obsidian"])]


def exclude_lines(current: list) -> list:
    """`chrollo exclude [list]`: one excluded project a line (a folder's name may hold an escape)."""
    return [clean(x) for x in current] if current else ["no excluded projects"]


# (`chrollo install`, `uninstall`)

def _part_name(part: str, harness: str) -> str:
    from .harness import adapter

    return ("MCP server (read_memory)" if part == "mcp" else
            f"{harness} {getattr(adapter(harness), 'EXTENSION_NOUN', 'extension')}"
            if adapter(harness).HOOKS == "extension" else "hooks")


def install_lines(command: str, harness: str, changes: list) -> list:
    """`chrollo install|uninstall HARNESS`: [(stream, text)], stream "out" or "err", in order."""
    out = []
    for c in changes:
        out.append(("out", f"{harness}: {_part_name(c['part'], harness)} {c['action']} ({c['config']})"))
        if c["action"] == "skipped":
            out.append(("err", f"--config names the hooks' file; the tool lives in {c['config']}: "
                               f"`chrollo {command} {harness} --mcp` for it (or `--mcp --config FILE`)"))
        if c.get("note"):
            out.append(("err", c["note"]))
    if command == "install" and any(c["action"] not in ("unchanged", "skipped") for c in changes):
        out.append(("err", "Check them with `chrollo doctor`."))
    return out


def install_all_lines(command: str, done: dict) -> list:
    """`chrollo install|uninstall --all`: [(stream, text)] for every harness found."""
    out = []
    if not done:
        from .harness import profiles

        binaries = [m.BINARY for m in profiles()]
        out.append(("err", f"no harness found on this machine ({', '.join(binaries[:-1])} or {binaries[-1]} "
                           "on PATH, or its folder)"))
    for h, r in done.items():
        if "skipped" in r:
            out.append(("out", f"{h}: skipped ({r['skipped']})"))
        for c in r.get("changes", []):
            out.append(("out", f"{h}: {_part_name(c['part'], h)} {c['action']} ({c['config']})"))
    if command == "install" and any(c["action"] != "unchanged" for r in done.values() for c in r.get("changes", [])):
        out.append(("err", "Check them with `chrollo doctor`."))
    return out


# (the mesh: `chrollo mesh …`)

def mesh_init_lines(name: str, node_id: str) -> tuple:
    """`chrollo mesh init`: (stdout: the node ID, stderr: what each peer runs to pair it)."""
    return [node_id], [f"node {name!r} ready. On each peer: chrollo mesh peers add [HOST:PORT] --id {node_id} "
                       f"--name {name}"]


def serving_line(host: str, port: int, node_id: str) -> str:
    """`chrollo mesh serve`'s line on stderr once it listens."""
    return f"chrollo mesh: serving on {host}:{port} as {node_id}"


def _switches(p: dict) -> str:
    return (f"search {'on' if p['searchable'] else 'off'} · recall {'on' if p['recall'] else 'off'} "
            f"· quota {p['quota_mb']} MB")


def peers_lines(peers: list) -> tuple:
    """`chrollo mesh peers list`: (stdout lines, stderr notes)."""
    out = [f"{p['name']}\t{p['id']}\t{p.get('address') or '-'}\t{_switches(p)}" for p in peers]
    return out, [] if peers else ["no peers yet: chrollo mesh peers add [HOST:PORT] --id ID --name NAME"]


def peer_added_line(peer: dict) -> str:
    """`chrollo mesh peers add`."""
    return f"peer {peer['name']} ({peer['id']}) paired"


def peer_set_line(peer: dict) -> str:
    """`chrollo mesh peers set`: the peer's switches as they are now."""
    return f"peer {peer['name']}: {_switches(peer)}"


def peer_removed_line(gone: dict, keep_files: bool) -> str:
    """`chrollo mesh peers remove`: the peer, and how many of its files went with it."""
    return f"peer {gone['name']} removed" + ("" if keep_files else
                                             f"; {plural(gone['files_removed'], 'file')} received from it deleted")


def discover_lines(found: list) -> tuple:
    """`chrollo mesh peers discover`: (stdout: each node found — address, name, ID, whether it
    is paired and its address recorded; stderr: a note when none was). ``found`` is sanitized."""
    out = [f"{f['address']}\t{f['node']}\t{f.get('id')}\t" + (
        "not paired" if not f["paired"] else "paired" if "verified" not in f else
        "paired, address recorded" if f["verified"] else "paired ID, but another node answers there: not recorded")
        for f in found]
    return out, [] if found else ["no chrollo node announced itself (start one with `chrollo mesh serve --announce`)"]


def sync_lines(result: dict, where: str) -> list:
    """`chrollo mesh sync`: [(stream, text)] — what was published, then each peer's take and
    errors (sanitized: errors may quote what a peer sent)."""
    out = []
    if result["published"] is not None:
        out.append(("out", _published_line(result, where)))
    for r in result["peers"]:
        out.append(("out", f"{r['peer']}: {plural(r['files'], 'file')} · {r['downloaded']} new or grown "
                           f"· {size(r['bytes'])}"))
        out += [("err", f"  error: {clean(e)}") for e in r["errors"]]
    out += [("err", f"error: {clean(e)}") for e in result["errors"]]
    return out


def _published_line(result: dict, where: str) -> str:
    """What publishing did, in words (`published` is a count for a folder, a bool for git)."""
    pub, sealed = result["published"], result.get("sealed_for") or []
    if pub is False or pub == 0:
        line = f"{result['transport']}: nothing new to publish ({where} already has this node's sessions)"
    elif pub is True:
        line = f"{result['transport']}: pushed this node's sessions to {where}"
    else:
        line = f"{result['transport']}: published {plural(pub, 'file')} to {where}"
    if sealed:
        return f"{line}, sealed for {', '.join(sealed)}"
    return (f"{line}; no paired peer can open them yet: run `chrollo mesh sync` again after each "
            "peer has synced once (its certificate is then known)")


def mesh_status_lines(st: dict) -> list:
    """`chrollo mesh status`: this node, then per peer its last sync, files, bytes and errors
    (sanitized: errors quote what a peer sent)."""
    out = [f"this node: {st['name']}"]
    for p in st["peers"]:
        got = (f"{size(p['bytes'])} received in all ({p.get('downloaded', 0)} new in the last sync)"
               if p.get("bytes") else "nothing received")  # (bytes: every sync's, summed)
        line = (f"{p['name']} ({p['id']}): last sync {p.get('last_sync') or 'never'} · "
                f"{plural(p.get('files', 0), 'file')} · {got}")
        if p.get("last_failure"):
            line += f" · last attempt failed at {p['last_failure']}: {p.get('last_error')}"
        else:
            line += f" · {plural(p.get('errors', 0), 'error')}" + (f" (last: {p['last_error']})" if p.get("last_error") else "")
        out.append(clean(line))
    return out
