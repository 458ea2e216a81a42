"""Recall: a prompt → the few past excerpts worth injecting before the agent answers.

Gates, in order (each one says no more often than it says yes — injected text costs tokens
on every prompt, and a wrong memory is worse than none; the agent can always search):

1. the prompt is at least 10 characters, not a trivial reply ("ok", "thanks", "go on"),
   and has at least one searchable term;
2. a hit is *strong* only if its anchor line covers at least half of the query's weight
   (the idf of its distinct terms over the idf of all query terms) and at least two distinct
   terms when the query has two or more — one shared common word is not a memory — and
   scores at least half of the best hit;
3. never a hit from the live session (its own file, or its subagents'), never an excerpt
   that overlaps one already injected in this session (``state/recall/``);
4. whole hits, best first, while they fit the character budget of the preset
   (small 2,000 · medium 6,000 · large 9,000 — under Claude Code's 10,000-character cap).

The block is fenced and labelled so neither the model nor chrollo's own capture mistakes it
for the conversation: the first line is :data:`chrollo.fileformat.RECALL_HEADER`.
"""
from __future__ import annotations

import json
import os
import re

from . import vault as _vault
from .fileformat import HEADER_RE, RECALL_HEADER
from .sanitize import clean, name

PRESETS = {"small": (2000, 2), "medium": (6000, 4), "large": (9000, 6)}
DEFAULT_PRESET = "medium"
MIN_PROMPT = 10
MIN_COVERAGE = 0.5
MIN_RELATIVE = 0.5
MAX_QUERY = 1000           # characters of the prompt searched (a pasted log is not a query)
LINE_CHARS = 400           # one injected line at most
MAX_LINES = 24             # lines of one excerpt at most
SEARCH_TIMEOUT = 10.0
MAX_REMEMBERED = 500       # injected excerpts remembered per session
TRIVIAL = {
    "ok", "okay", "k", "yes", "yep", "yeah", "no", "nope", "thanks", "thank you", "thx", "ty",
    "go on", "continue", "go ahead", "proceed", "do it", "sounds good", "looks good", "lgtm",
    "great", "nice", "cool", "perfect", "done", "sure", "please continue", "keep going",
    "next", "retry", "try again", "again", "stop", "commit", "push", "commit and push",
}


def budget_of(value: str | int | None) -> tuple[int, int]:
    """``small|medium|large`` or a character count → (characters, max hits)."""
    if value is None or value == "":
        value = os.environ.get("CHROLLO_RECALL_BUDGET", DEFAULT_PRESET)
    if isinstance(value, str) and value.strip().lower() in PRESETS:
        return PRESETS[value.strip().lower()]
    try:
        chars = int(value)
    except (TypeError, ValueError):
        return PRESETS[DEFAULT_PRESET]
    chars = max(500, min(chars, 9500))
    return chars, max(1, min(8, chars // 1500))


def worth_searching(prompt) -> str | None:
    """The query to search for ``prompt``, or None when the prompt should not trigger recall."""
    if not isinstance(prompt, str):
        return None
    text = prompt.strip()
    if len(text) < MIN_PROMPT:
        return None
    if " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split()) in TRIVIAL:
        return None
    return text[:MAX_QUERY]


def recall(prompt, session_id: str, cwd: str | None = None, budget=None,
           vault: str | None = None) -> str:
    """The recall block for ``prompt`` in session ``session_id`` ("" when nothing is worth it)."""
    query = worth_searching(prompt)
    if query is None:
        return ""
    from .retrieval import search

    chars, max_hits = budget_of(budget)
    try:
        result = search(query, limit=max_hits + 3, context=3, dir=vault, cwd=cwd,
                        timeout=SEARCH_TIMEOUT)
    except Exception as e:  # no vault yet, rg missing…: no memory, but the prompt goes on
        from .errors import ChrolloError

        if isinstance(e, ChrolloError) and e.kind in ("vault_not_found", "not_a_directory"):
            return ""
        raise
    seen_path = _state_path(session_id)
    injected = _load(seen_path)
    hits = strong_hits(_recallable(result), session_id)
    from .privacy import excluded_file

    hits = [h for h in hits if not excluded_file(h.path)]  # captured before its project was excluded
    root = result.vault
    blocks, used, taken = [], len(RECALL_HEADER) + 200, []
    for h in hits:
        if len(blocks) >= max_hits:
            break
        rel = os.path.relpath(h.path, root) if root else h.path
        lines = [c["line"] for c in h.context] or [h.line]
        span = (rel, min(lines), max(lines))
        if any(p == rel and a <= span[2] and span[1] <= b for p, a, b in injected + taken):
            continue
        block = _block(h, rel)
        if used + len(block) > chars:
            if blocks:
                continue  # a smaller later hit may still fit
            block = block[: chars - used - 10].rsplit("\n", 1)[0] + "\n" + _fence(block) + "\n"
        blocks.append(block)
        used += len(block)
        taken.append(span)
    if not blocks:
        return ""
    try:
        _save(seen_path, injected + taken)
    except OSError:
        pass  # (state/ not writable: the memory still goes in; only the dedup is lost)
    where = clean(root.replace(os.path.expanduser("~"), "~", 1)) if root else ""
    head = (f"{RECALL_HEADER}\n"
            f"Quoted from earlier conversations (files under {where}); they may be outdated. "
            "`chrollo read FILE:LINE --turn` or the read_memory tool shows more.\n")
    return head + "\n" + "\n".join(blocks)


def _recallable(result):
    """Peer hits only from peers whose recall switch is on (off by default: see the README's
    mesh section), removed before the gates so a peer's line never sets the bar for ours."""
    if any(h.peer for h in result.hits):
        from .mesh.config import peer_settings

        on = {name for name, s in peer_settings().items() if s["recall"]}
        result.hits = [h for h in result.hits if not h.peer or h.peer in on]
    return result


def strong_hits(result, session_id: str) -> list:
    """The hits that pass gate 2 and 3a (see the module doc), best first."""
    weights = result.weights
    exact = [t for t in result.terms if weights.get(t, 0) > 0]
    total = sum(weights[t] for t in exact)
    if not total:
        return []
    need = min(2, len(exact))
    own = (session_id, session_id + ":")
    out = []
    best = None
    for h in result.hits:
        if h.session_id and (h.session_id == session_id or h.session_id.startswith(own[1])):
            continue
        covered = [t for t in h.terms if weights.get(t, 0) > 0]
        distinct = len({t for t in covered if t in exact})
        if sum(weights[t] for t in covered) < MIN_COVERAGE * total or distinct < need:
            continue
        best = best or h.score
        if h.score < MIN_RELATIVE * best:
            continue
        out.append(h)
    return out


def _block(h, rel: str) -> str:
    # (the label is outside the fence: one sanitized line, names only if they are names)
    label = clean(" · ".join(x for x in ((h.date or "")[:16], name(h.harness, ""),
                                         f"peer {name(h.peer)}" if h.peer else "", f"{rel}:{h.line}") if x))
    lines = [_clean(t) for t in excerpt_lines(h)]
    fence = _fence("\n".join(lines))
    return f"{label}\n{fence}\n" + "\n".join(lines) + f"\n{fence}\n"


def excerpt_lines(h) -> list:
    """The lines worth injecting for a hit: its turn from the header, and the answer to it.

    A hit on a question is only useful with its answer, so a hit in a user turn runs on
    through the agent turn that follows; at most MAX_LINES lines, blank runs squeezed.
    Falls back to the hit's ±3-line window if the file cannot be read.
    """
    try:
        with _vault.open_regular(h.path) as fh:
            lines = fh.read().decode("utf-8", "replace").split("\n")
    except OSError:
        return [c["text"] for c in h.context]
    i = h.line - 1
    head = i
    while head >= 0 and not HEADER_RE.match(lines[head]):
        head -= 1
    if head < 0 or i - head > 6:
        start = max(0, i - 3)
    else:
        start = head
    m = HEADER_RE.match(lines[head]) if head >= 0 else None
    follow = 2 if m and m.group(3) == "User" else 1  # turns to read through
    end = i + 1
    while end < len(lines) and end - start < MAX_LINES:
        if HEADER_RE.match(lines[end]):
            follow -= 1
            if follow == 0:
                break
        end += 1
    out: list = []
    for ln in lines[start:end]:
        if ln.strip() or (out and out[-1].strip()):
            out.append(ln)
    while out and not out[-1].strip():
        out.pop()
    return out


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _clean(line: str) -> str:
    line = clean(line)
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"


def _state_path(session_id: str) -> str:
    return os.path.join(_vault.home_path(), "state", "recall", _vault.state_key(session_id) + ".json")


def _load(path: str) -> list:
    spans = _vault.read_json(path).get("injected")
    return [tuple(x) for x in spans if isinstance(x, list) and len(x) == 3] if isinstance(spans, list) else []


def _save(path: str, injected: list) -> None:
    _vault.write_private(path, json.dumps({"injected": [list(x) for x in injected[-MAX_REMEMBERED:]]}))
