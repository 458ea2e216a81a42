"""Recall: a prompt → the few past excerpts worth injecting before the agent answers.

Gates, in order (each one says no more often than it says yes — injected text costs tokens
on every prompt, and a wrong memory is worse than none; the agent can always search):

1. the prompt is at least 10 characters, not a trivial reply ("ok", "thanks", "go on"),
   and has at least one searchable term;
2. the prompt is *about* a memory (:func:`about_prompt`). Each of the user's own query terms
   (not the thesaurus' synonyms) weighs its idf, ln(1 + N/df) over the N sessions searched; a
   term found nowhere keeps the weight of one found in half a session, ln(1 + 2N) — an
   unknown word is the strongest sign that nothing there is about the prompt. A hit is a
   candidate if its line holds at least two distinct query terms (the one term of a one-term
   query), not all of them common (in more than 67% of a vault's sessions, once it has 5),
   and at least a tenth of the query's weight. Something is injected only if some candidate's passage — the
   lines the model would read — holds at least min(0.5, 0.9/√n) of the weight of the n
   query terms (3 terms 0.5, 4 → 0.45, 6 → 0.37, 9 → 0.30);
3. then every candidate, in search order, as a *passage*: its turn, with the answer it got
   (a user turn) or the message it answers (a reply, when that message holds a query term
   too), at most 24 lines placed to keep the most matched lines, each cut at 400 characters;
4. never a hit from the live session (its own file, or its subagents'); lines already
   injected in this session (``state/recall/``) are cut from a passage, and a passage whose
   hit line was already shown is dropped — no passage twice;
5. the evidence is specific (:func:`signals`): nothing is injected when TIE_SESSIONS or more
   sessions score within TIE_RATIO of the best candidate *and* the best line's terms are
   common enough together to be expected in CHANCE_MAX sessions by chance — a prompt many
   sessions answer alike is not about one memory — nor when the prompt names someone no
   session searched mentions (:func:`unknown_names`);
6. whole passages, best first, while they fit the character budget of the preset
   (small 2,000 / 2 · medium 6,000 / 4 · large 9,000 / 6 — under Claude Code's 10,000 cap).

The receipt (``recall log``, ``recall why``) keeps the signals that decided: coverage and the
share needed, sessions tying, chance, the runner-up session's score relative to the best, the
count of names found nowhere.

The block is fenced and labelled so neither the model nor chrollo's own capture mistakes it
for the conversation: the first line is :data:`chrollo.fileformat.RECALL_HEADER`.
"""
from __future__ import annotations

import json
import math
import os
import re
import time

from . import vault as _vault
from .fileformat import HEADER_RE, RECALL_HEADER, parse_frontmatter
from .sanitize import clean, name

PRESETS = {"small": (2000, 2), "medium": (6000, 4), "large": (9000, 6)}
DEFAULT_PRESET = "medium"
MIN_PROMPT = 10
MIN_COVERAGE = 0.5         # share of the query's weight a passage must hold (short queries)
SHARE_SCALE = 0.9          # … and longer ones: SHARE_SCALE / √terms (see needed_share)
MIN_TERMS = 2              # distinct query terms (the user's own words) on the hit's line
MIN_LINE_SHARE = 0.1       # share of the query's weight on an injected hit's line
UNSEEN_DF = 0.5            # a term found nowhere weighs as if half a session held it
COMMON_SHARE = 0.67        # a term in more than 67% of the sessions is common: never a match alone
COMMON_MIN_SESSIONS = 5    # … in a vault of at least this many (in 1 or 2 sessions every word is in most)
TIE_RATIO = 0.9            # a session ties with the best candidate when its best hit scores this share of it
TIE_SESSIONS = 7           # … this many sessions tying (the best's own included): every one the recall
                           # search returned (its limit is at least this) — nothing singles one out (docs/pooled.md)
CHANCE_MAX = 1.0           # … and silent only when the best line's terms are expected in this many sessions by chance
UNKNOWN_NAMES = True       # silent when the prompt names someone the vault never mentions (see unknown_names)
MAX_QUERY = 1000           # characters of the prompt searched (a pasted log is not a query)
LINE_CHARS = 400           # one injected line at most
MAX_LINES = 24             # lines of one excerpt at most
SEARCH_TIMEOUT = 10.0
DEADLINE = 0.4             # seconds from the hook's start: the search answers from the newest
                           # sessions by then, however large the vault (docs/design.md §10: ≤ 0.4 s at 100 MB)
MIN_DEADLINE = 0.05        # (a hook slow to start still searches; the newest sessions always are)
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


def check_budget(value: str) -> str:
    """``value`` if :func:`budget_of` takes it as given (a preset, or 500..9500 characters);
    else a usage error — the hook falls back quietly, a command the user typed must not."""
    if value.strip().lower() in PRESETS:
        return value
    try:
        chars = int(value)
    except ValueError:
        chars = None
    if chars is None or budget_of(chars)[0] != chars:
        from .errors import UsageError

        raise UsageError(f"--budget takes {', '.join(PRESETS)} or 500 to 9500 characters, got {value!r}",
                         kind="bad_usage")
    return value


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
           vault: str | None = None, started: float | None = None, trace: dict | None = None,
           dry: bool = False) -> str:
    """The recall block for ``prompt`` in session ``session_id`` ("" when nothing is worth it).

    ``started`` (a time.monotonic()): when the hook started; the search's deadline is what is
    left of DEADLINE since then (now if not given). ``trace``: a dict filled with why — the
    terms and weights, each hit's verdict, the decision and the excerpts injected (``file``,
    ``line``, ``start``, ``end``, ``chars``): the receipt and ``chrollo recall why``. ``dry``:
    change nothing (the session's already-injected lines are read, not written)."""
    trace = {} if trace is None else trace
    trace.update(decision="", excerpts=[])
    query = worth_searching(prompt)
    if query is None:
        trace["decision"] = "not searched: the prompt is too short or a trivial reply"
        return ""
    from .retrieval import SearchOptions, search

    chars, max_hits = budget_of(budget)
    trace.update(query=query, budget={"chars": chars, "excerpts": max_hits})
    spent = time.monotonic() - started if started is not None else 0.0
    try:
        result = search(query, SearchOptions(limit=max(max_hits + 3, TIE_SESSIONS), context=3, dir=vault, cwd=cwd, timeout=SEARCH_TIMEOUT,
                                             deadline=max(MIN_DEADLINE, DEADLINE - spent)))
    except Exception as e:  # no vault yet, rg missing…: no memory, but the prompt goes on
        from .errors import ChrolloError

        if isinstance(e, ChrolloError) and e.kind in ("vault_not_found", "not_a_directory"):
            trace["decision"] = f"nothing injected: {e.message}"
            return ""
        raise
    from .privacy import excluded_file

    result.hits = [h for h in result.hits if not excluded_file(h.path)]  # captured before its project was excluded
    trace["vault"] = result.vault
    if result.unindexed:
        trace["unindexed"] = result.unindexed  # (the hook has it indexed, in the background)
    passages = about_prompt(_recallable(result), session_id, trace)
    if not passages:
        return ""
    seen_path = _state_path(session_id)
    injected = _load(seen_path)
    root = result.vault
    blocks, used, taken = [], len(RECALL_HEADER) + 200, []
    for p in passages:
        if len(blocks) >= max_hits:
            break
        rel = os.path.relpath(p.path, root) if root else p.path
        if not p.trim([(a, b) for r, a, b in injected + taken if r == rel]):
            _verdict(trace, p.hit, "its line is already in an excerpt (this one or one shown earlier in the session)")
            continue  # its matched line is already in front of the model
        block = _block(p, rel)
        if used + len(block) > chars:
            if blocks:
                _verdict(trace, p.hit, "over the character budget")
                continue  # a smaller later passage may still fit
            block = block[: chars - used - 10].rsplit("\n", 1)[0] + "\n" + _fence(block) + "\n"
        blocks.append(block)
        used += len(block)
        taken.append((rel, p.start, p.end))
        _verdict(trace, p.hit, "injected")
        trace["excerpts"].append({"path": p.path, "line": p.hit.line, "start": p.start, "end": p.end,
                                  "chars": len(block)})
    if not blocks:
        trace["decision"] = "nothing injected: every passage was already shown in this session"
        return ""
    if not dry:
        try:
            _save(seen_path, injected + taken)
        except OSError:
            pass  # (state/ not writable: the memory still goes in; only the dedup is lost)
    where = clean(root.replace(os.path.expanduser("~"), "~", 1)) if root else ""
    head = (f"{RECALL_HEADER}\n"
            f"Quoted from files under {where}; may be outdated. "
            "`chrollo read FILE:LINE --turn` (or read_memory) shows more.\n")
    text = head + "\n" + "\n".join(blocks)
    trace["decision"] = f"injected {len(blocks)} excerpt{'s' * (len(blocks) != 1)}, {len(text)} characters"
    trace["chars"] = len(text)
    return text


def _verdict(trace: dict, hit, why: str) -> None:
    for c in trace.get("hits", ()):
        if c["path"] == hit.path and c["line"] == hit.line:
            c["verdict"] = why


def _recallable(result):
    """Peer hits only from peers whose recall switch is on (off by default: see docs/mesh.md's
    per-peer switches), removed before the gates so a peer's line never sets the bar for ours."""
    if any(h.peer for h in result.hits):
        on = {name for name, s in _vault.peer_switches().items() if s["recall"]}
        result.hits = [h for h in result.hits if not h.peer or h.peer in on]
    return result


def term_weights(result) -> dict:
    """The weight of each of the user's own query terms (synonyms are not the user's words).

    A term's weight is its idf in the search; a term found nowhere in the vault keeps the
    idf it would have if UNSEEN_DF sessions held it — the strongest sign that nothing there
    is about the prompt, not a term to ignore.
    """
    unseen = math.log(1 + max(1, result.sessions) / UNSEEN_DF)
    return {t: result.weights.get(t) or unseen for t in result.terms}


def needed_share(n_terms: int) -> float:
    """The share of the query's weight a passage must hold: ≤ 3 terms 0.5, then 0.9/√n
    (4 → 0.45, 6 → 0.37, 9 → 0.30): a long question is rarely answered word for word."""
    return min(MIN_COVERAGE, SHARE_SCALE / math.sqrt(max(1, n_terms)))


def about_prompt(result, session_id: str, trace: dict | None = None) -> list:
    """The passages worth injecting for ``result`` (best first), or [] when none is about it.

    A hit is a candidate when its line holds at least MIN_TERMS distinct query terms (all of
    them for a shorter query), one that is not common (in at most COMMON_SHARE of the
    sessions, in a vault of COMMON_MIN_SESSIONS or more) and MIN_LINE_SHARE of the query's weight. The prompt is about memory when some
    candidate's passage — the lines the model would read — holds at least needed_share() of
    the query's weight; then all candidates are injected, in search order.
    """
    trace = {} if trace is None else trace
    w = term_weights(result)
    total = sum(w.values())
    trace.update(terms=w, searched=result.sessions, hits=[])
    if not total:
        trace["decision"] = "not searched: the prompt has no searchable words"
        return []
    common = {t for t, x in w.items() if result.sessions >= COMMON_MIN_SESSIONS
              and result.weights.get(t) and x < math.log(1 + 1 / COMMON_SHARE)}
    need_terms = min(MIN_TERMS, len(w))
    forms = _forms(result)
    files: dict = {}
    cands, best = [], 0.0
    trace.update(common=sorted(common), needed=round(needed_share(len(w)), 3))
    for h in result.hits:
        own = [t for t in h.terms if t in w]
        row = {"path": h.path, "line": h.line, "terms": own, "line_share": round(sum(w[t] for t in own) / total, 3)}
        trace["hits"].append(row)
        if h.session_id and (h.session_id == session_id or h.session_id.startswith(session_id + ":")):
            row["verdict"] = "from this very session"
            continue
        if len(own) < need_terms:
            row["verdict"] = f"fewer than {need_terms} of the prompt's terms on the line"
        elif all(t in common for t in own):
            row["verdict"] = "only common terms on the line"
        elif sum(w[t] for t in own) < MIN_LINE_SHARE * total:
            row["verdict"] = f"under {MIN_LINE_SHARE:.0%} of the prompt's weight on the line"
        else:
            p = Passage.around(h, files, forms)
            share = sum(w[t] for t in p.terms) / total
            best = max(best, share)
            row.update(passage_share=round(share, 3), verdict="candidate")
            cands.append(p)
    trace["best"] = round(best, 3)
    sig = trace["signals"] = signals(result, w, cands, session_id)
    names = trace["unknown_names"] = [n for n in unknown_names(result.query, w, result.weights)
                                      if not any(p.spells(n) for p in cands)]
    sig.update(coverage=round(best, 3), needed=round(needed_share(len(w)), 3), unknown=len(names))
    if not cands or best < needed_share(len(w)):
        trace["decision"] = ("nothing injected: no hit holds enough of the prompt's terms" if not cands else
                             f"nothing injected: the best passage holds {best:.0%} of the prompt's weight, "
                             f"{needed_share(len(w)):.0%} needed")
    elif UNKNOWN_NAMES and sig["unknown"]:
        trace["decision"] = (f"nothing injected: the prompt names {', '.join(names)}, found in none of "
                             f"the {result.sessions} sessions searched (the memory is not about it)")
    elif sig["tying"] >= TIE_SESSIONS and sig["chance"] >= CHANCE_MAX:
        trace["decision"] = (f"nothing injected: {sig['tying']} sessions tie for the best hit and its words are "
                             f"expected together in {sig['chance']:.3g} sessions by chance (not specific)")
    else:
        return cands
    for row in trace["hits"]:
        if row["verdict"] == "candidate":
            row["verdict"] = "candidate (the prompt is not about it)"
    return []


_WORD = re.compile(r"[^\W\d_]+")
_SENTENCE_END = ".!?:;\"'“‘(*#>-"


def unknown_names(query: str, w: dict, weights: dict) -> list:
    """The names in ``query`` that no session searched holds: a capitalized word (not all
    capitals, not a sentence's first word, not a month or weekday) among the user's terms
    ``w`` with no weight in the search. A prompt about someone or something the memory has
    never seen is not about any memory, however well its other words match (a question about
    Joanna in a vault of Tim's and John's sessions: docs/pooled.md)."""
    from .retrieval.dates import calendar_word
    from .textnorm import fold

    out = []
    for m in _WORD.finditer(query):
        word = m.group()
        if len(word) < 2 or not word[0].isupper() or word.isupper() or calendar_word(word):
            continue
        before = query[:m.start()].rstrip()
        if not before or before[-1] in _SENTENCE_END:
            continue
        t = fold(word)  # (as the search's terms are: "Zoë" is zoe)
        if t in w and not weights.get(t) and word not in out:
            out.append(word)
    return out


def signals(result, w: dict, cands: list, session_id: str) -> dict:
    """How specific the best candidate (the first in search order) is to the prompt.

    ``tying``: sessions (the live one left out) whose best hit scores at least TIE_RATIO of
    the best candidate's; ``chance``: the sessions expected to hold all of its line's terms
    if words fell independently, N × Π df/N (df from each term's weight, ln(1 + N/df));
    ``runner_up``: the best other session's score ÷ the candidate's. Zeros without one."""
    if not cands:
        return {"tying": 0, "chance": 0.0, "runner_up": 0.0}
    top = cands[0].hit
    n = max(1, result.sessions)
    chance = float(n)
    for t in {t for t in top.terms if t in w}:
        x = result.weights.get(t) or w[t]
        chance *= min(1.0, 1 / math.expm1(x)) if x > 0 else 1.0
    best: dict = {}
    for h in result.hits:
        if h.session_id and (h.session_id == session_id or h.session_id.startswith(session_id + ":")):
            continue
        best.setdefault(h.path, h.score)
    other = max((sc for p, sc in best.items() if p != top.path), default=0.0)
    return {"tying": sum(1 for sc in best.values() if sc >= TIE_RATIO * top.score),
            "chance": round(chance, 4), "runner_up": round(other / top.score, 3) if top.score else 0.0}


def _forms(result):
    """A matcher for the user's terms as the search matched them (any case, whole words, with
    their inflections and identifier spellings) and each spelling → the terms it stands for."""
    from .terms import Forms, identifiers

    forms = Forms(result.terms, identifiers(result.query, result.terms))
    return forms.matcher(), forms.about()


class Passage:
    """What is injected for a hit: contiguous file lines [start, end] (1-based) around it.

    The hit's turn, with the turn it pairs with: a user turn with the answer it got, a reply
    with the message it answers when that message holds a query term too. At most MAX_LINES
    lines: a longer pair is cut to the window around the hit that holds the most lines with
    query terms (so the matched lines win over a long turn's opening).
    """

    __slots__ = ("hit", "path", "lines", "start", "end", "terms", "matched")

    @classmethod
    def around(cls, h, files: dict, forms: tuple) -> "Passage":
        p = cls()
        p.hit, p.path = h, h.path
        lines = files.get(h.path)
        if lines is None:
            try:
                with _vault.open_regular(h.path) as fh:
                    lines = fh.read().decode("utf-8", "replace").split("\n")
            except OSError:  # vanished since the search: its ±context window
                lines = {c["line"]: c["text"] for c in h.context}
                lines = [lines.get(i, "") for i in range(1, max(lines, default=h.line) + 1)]
            files[h.path] = lines
        p.lines = lines
        i = min(h.line, len(lines)) - 1
        p.matched = {}
        lo, hi = _turn_start(lines, i), _turn_end(lines, i)
        m = HEADER_RE.match(lines[lo])
        role = m.group(3) if m else None
        if lo > 0 and role == "Agent":  # the message a reply answers
            a = _turn_start(lines, lo - 1)
            if any(p._terms_of(j, forms) for j in range(max(a, lo - MAX_LINES), lo)):
                lo = a
        if hi + 1 < len(lines) and role == "User":  # the answer a message got
            hi = _turn_end(lines, hi + 1)
        lo = max(lo, min(parse_frontmatter(lines)[1], i))  # never quote the frontmatter
        if hi - lo + 1 > MAX_LINES:
            lo, hi = p._window(lo, hi, i, forms)
        p.start, p.end = lo + 1, hi + 1
        p.terms = set()
        for j in range(lo, hi + 1):
            p.terms.update(p._terms_of(j, forms))
        return p

    def spells(self, name: str) -> bool:
        """Whether the passage holds ``name`` misspelled: a word with its first letter, in
        any case, one edit away from a name of 5 to 7 letters, two from a longer one ("Elisa"
        for elise, "Tennesee"): still the one the prompt names. Not a shorter name's: too
        many words are one edit from one (Tim → time, Nate → note)."""
        from .textnorm import fold

        most, name = (len(name) >= 5) + (len(name) >= 8), fold(name)
        if not most:
            return False
        for line in self.lines[self.start - 1:self.end]:
            for word in _WORD.findall(fold(line[:LINE_CHARS])):
                if word[0] == name[0] and abs(len(word) - len(name)) <= most and _edits(word, name, most) <= most:
                    return True
        return False

    def _terms_of(self, j: int, forms: tuple) -> set:
        got = self.matched.get(j)
        if got is None:
            rx, spelling = forms
            got = self.matched[j] = {t for f in (rx.findall(self.lines[j][:LINE_CHARS]) if rx else ())
                                     for t in spelling.get(f.lower(), ())}
        return got

    def _window(self, lo: int, hi: int, anchor: int, forms: tuple) -> tuple:
        """The MAX_LINES lines of [lo, hi] around ``anchor`` holding the most matched lines."""
        best = None
        for s in range(max(lo, anchor - MAX_LINES + 1), min(anchor, hi - MAX_LINES + 1) + 1):
            n = sum(1 for j in range(s, s + MAX_LINES) if self._terms_of(j, forms))
            key = (n, -abs(s - (anchor - 3)))
            if best is None or key > best[0]:
                best = (key, s)
        s = best[1] if best else max(lo, anchor - 3)
        return s, min(hi, s + MAX_LINES - 1)

    def trim(self, shown: list) -> bool:
        """Drop the lines already shown (spans [a, b] of the same file); False if the hit's
        own line was among them."""
        for a, b in shown:
            if b < self.start or a > self.end:
                continue
            if a <= self.hit.line <= b:
                return False
            if self.hit.line < a:
                self.end = a - 1
            else:
                self.start = b + 1
        return self.start <= self.end

    def text(self) -> list:
        """The passage's lines, blank runs squeezed, cleaned for the prompt."""
        out: list = []
        for ln in self.lines[self.start - 1:self.end]:
            if ln.strip() or (out and out[-1].strip()):
                out.append(_clean(ln))
        while out and not out[-1].strip():
            out.pop()
        return out


def _edits(a: str, b: str, most: int) -> int:
    """Levenshtein distance of ``a`` and ``b``, or most + 1 once it is surely beyond ``most``."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        if min(cur) > most:
            return most + 1
        prev = cur
    return prev[-1]


def _turn_start(lines: list, i: int) -> int:
    """The header line of the turn holding line ``i`` (0-based; the line itself if none above)."""
    j = i
    while j >= 0 and not HEADER_RE.match(lines[j]):
        j -= 1
    return j if j >= 0 else i


def _turn_end(lines: list, i: int) -> int:
    """The last line of the turn holding line ``i`` (0-based)."""
    j = i + 1
    while j < len(lines) and not HEADER_RE.match(lines[j]):
        j += 1
    return j - 1


def _block(p, rel: str) -> str:
    h = p.hit
    # (the label is outside the fence: one sanitized line, names only if they are names)
    label = clean(" · ".join(x for x in ((h.date or "")[:16], name(h.harness, ""),
                                         f"peer {name(h.peer)}" if h.peer else "", f"{rel}:{h.line}") if x))
    lines = p.text()
    fence = _fence("\n".join(lines))
    return f"{label}\n{fence}\n" + "\n".join(lines) + f"\n{fence}\n"


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text``."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _clean(line: str) -> str:
    line = clean(line)
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"


def _state_path(session_id: str) -> str:
    from .layout import recall_record

    return recall_record(session_id)


def _load(path: str) -> list:
    spans = _vault.read_json(path).get("injected")
    return [tuple(x) for x in spans if isinstance(x, list) and len(x) == 3] if isinstance(spans, list) else []


def _save(path: str, injected: list) -> None:
    _vault.write_private(path, json.dumps({"injected": [list(x) for x in injected[-MAX_REMEMBERED:]]}))
