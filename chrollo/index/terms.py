"""The index's terms: what a file holds, and what a query form needs (docs/design.md §13).

Terms are what ripgrep's ASCII-mode regex can match (chrollo's regex for ASCII forms is
``(?-u:…)``: ASCII word boundaries, ASCII case folding): every maximal ``[A-Za-z0-9_]`` run,
lowercased, and every piece of it that rg's identifier-part alternatives can report (see
:func:`pieces`). A form made of several runs (``auth-service``) takes the files holding all
of them. A form that is not ASCII, or longer than MAX_TERM, has no terms: the index cannot
narrow its scan. A file is read as rg reads it (:func:`text_of`: UTF-16 with a BOM transcoded;
rg runs with ``--text``, so a NUL byte is text too). Stdlib only (``re``): capture's update
imports it.
"""
from __future__ import annotations

import re

from ..fileformat import frontmatter_end_of


MAX_TERM = 64                # longer words (hashes, pasted blobs) are not indexed
# A file with more distinct runs than this is left unindexed (ok = -1: read directly by every
# search), so a build's memory is bounded whatever one file holds: a 28 MB session of 3.3 M
# distinct words peaked at 2.1 GB. (A long real session holds tens of thousands.)
MAX_FILE_RUNS = 100_000
SLICE_BYTES = 1 << 20        # a file's runs are split out this much at a time (no list of all its runs)
MIN_TERM = 2                 # (query terms have 2+ letters; identifier parts 3+)


def pieces(run: bytes) -> list:
    """The identifier parts rg's regex (rg.words_regex, ``parts``) can find in ``run``,
    lowercased — a superset: ``_part`` then end/``_``/uppercase, a run starting with the part
    then ``_``/uppercase, and ``…[a-z0-9]Part`` then end/``_``/uppercase (case-sensitive)."""
    out = []
    for s in run.split(b"_"):
        if len(s) < 3:
            continue
        out.append(s)  # the whole segment: "_part" then "_" or the end; "part_" at the start
        ups = [i for i, c in enumerate(s) if 65 <= c <= 90]
        for k, i in enumerate(ups):
            if i >= 3:
                out.append(s[:i])  # "_part" / "part" at the start, then an uppercase letter
            if i and (97 <= s[i - 1] <= 122 or 48 <= s[i - 1] <= 57):
                out.append(s[i:ups[k + 1] if k + 1 < len(ups) else len(s)])  # "…xPart"
    return [p.lower() for p in out if 3 <= len(p) <= MAX_TERM]


def run_terms(run: bytes) -> list:
    """The terms a run gives a file holding it: its lowercase (if MIN_TERM to MAX_TERM long) and,
    for a run with ``_`` in it or a capital after its first character, its :func:`pieces`.
    (:func:`terms_of` is this over a file's runs, in set operations.)"""
    out = [run.lower()] if MIN_TERM <= len(run) <= MAX_TERM else []
    if b"_" in run or run[1:] != run[1:].lower():
        out += pieces(run)
    return out


RUN = re.compile(rb"[A-Za-z0-9_]+")
_RUN_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"
# (every byte that cannot be in a run made a space: a file's runs are then what split() gives,
# at a third of the cost of RUN.findall)
SPACED = bytes(c if c in _RUN_BYTES else 32 for c in range(256))
_ONE_LETTER = frozenset(bytes([c]) for c in _RUN_BYTES.lower())
# (over the distinct runs joined by spaces: those holding "_")
_UNDERSCORED = re.compile(rb"\b[A-Za-z0-9]*_\w*")


def runs_of(data: bytes, most: int | None) -> set | None:
    """The distinct runs of ``data``, or None when there are more than ``most``: split out a
    slice at a time, so what is held is the distinct runs, never a list of every run."""
    spaced, runs, pos, n = data.translate(SPACED), set(), 0, len(data)
    while pos < n:
        end = spaced.find(b" ", pos + SLICE_BYTES) if pos + SLICE_BYTES < n else -1
        end = n if end < 0 else end
        runs.update(spaced[pos:end].split())
        if most is not None and len(runs) > most:
            return None
        pos = end
    return runs


def text_of(data: bytes) -> bytes:
    """A file's bytes as rg reads them: a UTF-16 file with a byte order mark transcoded to
    UTF-8 (rg's default BOM sniffing; a UTF-8 BOM holds no run and is left alone)."""
    if data[:2] == b"\xff\xfe":
        return data[2:].decode("utf-16-le", "replace").encode("utf-8")
    if data[:2] == b"\xfe\xff":
        return data[2:].decode("utf-16-be", "replace").encode("utf-8")
    return data


def body_and_end(data: bytes) -> tuple:
    """(the line a file's frontmatter ends on, its body as rg reads it: see :func:`text_of`)
    — what every reading of a file for its terms starts from. (The frontmatter end is the raw
    bytes', as the search's head reading finds it.)"""
    fm = frontmatter_end_of(data)
    return fm, body_of(text_of(data), fm)


def terms_of(data: bytes, most: int | None = None) -> set | None:
    """Every term a file's bytes hold (see the module doc): :func:`ascii_terms`, and for text
    beyond ASCII :func:`unicode_terms`; None past ``most`` distinct runs (see MAX_FILE_RUNS)."""
    out = ascii_terms(data, most)
    if out is not None and not data.isascii():
        more = unicode_terms(data, most)
        out = None if more is None else out | more
    return out


def ascii_terms(data: bytes, most: int | None = None) -> set | None:
    """The terms of a file's ASCII runs, as ASCII bytes: :func:`run_terms` of each of its runs;
    None when it has more than ``most`` distinct runs (see MAX_FILE_RUNS).
    (The work is done by C — a translate, a split and set operations over the distinct runs;
    Python computes only the pieces of the runs that have some. No cache: a capture's process
    reads one file; a build's workers use _RunPosts.)"""
    runs = runs_of(data, most)
    if runs is None:
        return None
    joined = b" ".join(runs)
    out = set(joined.lower().split())
    upper = runs - out  # (the runs with a capital; those with one past the first character are
    # the ones capitalize() changes)
    pieceful = upper - set(map(bytes.capitalize, upper))
    if b"_" in joined:
        pieceful.update(_UNDERSCORED.findall(joined))
    for run in pieceful:
        out.update(pieces(run))
    out -= _ONE_LETTER
    if max(map(len, out), default=0) > MAX_TERM:
        out = {t for t in out if len(t) <= MAX_TERM}
    return out


_UWORD = re.compile(r"\w*[^\W\x00-\x7f]\w*")  # (a word holding a non-ASCII word character)
_ULETTER = re.compile(r"[^\W\x00-\x7f]")
_WORD_TERMS: dict = {}  # word -> its terms (a build's files share most of their words)


def unicode_terms(data: bytes, most: int | None = None) -> set | None:
    """The terms of a file's text beyond ASCII (textnorm), as UTF-8 bytes: every character of its
    CJK runs; the folded spellings rg's folded alternatives can find in a word with accented or
    full-width letters (:func:`folded_spans`); a word of another script, folded. None past
    ``most`` distinct words (see MAX_FILE_RUNS)."""
    got = unicode_parts(data, most)
    if got is None:
        return None
    cjk, out = got
    if cjk:
        out.update("\n".join(cjk).encode().split(b"\n"))
    return out


def unicode_parts(data: bytes, most: int | None = None) -> tuple | None:
    """:func:`unicode_terms` as (its CJK characters, a str of them each once; its other terms,
    a set of bytes) — a build maps the characters to postings without encoding each."""
    from ..textnorm import cjk_runs, cjk_spaced, fold, is_cjk, script_runs

    text = data.decode("utf-8", "replace")
    # (from the text's distinct characters — set() is C, and a file holds a few thousand:
    # a CJK run's characters, each a term: a file holding a bigram holds both — a superset, as
    # the read plans need, at a fraction of the bigrams' count; the selection, which needs
    # exact terms, does not take CJK forms)
    distinct = "".join(set(text))
    cjk = "".join(cjk_runs(distinct))
    out: set = set()
    # (the words holding a non-ASCII letter that is not CJK — none in most CJK text, then
    # nothing more to read — from the distinct whitespace-split tokens that hold one: str.split
    # and a set are C; a regex over the whole text was a third of the time)
    if not _ULETTER.search(cjk_spaced(distinct) if cjk else distinct):
        return cjk, out
    tokens = {t for t in text.split() if not t.isascii()}
    if cjk:
        tokens = cjk_spaced(" ".join(tokens)).split()
    words = {w for t in tokens for w in _UWORD.findall(t)}
    if most is not None and len(words) > most:
        return None
    for word in words:
        got = _WORD_TERMS.get(word)
        if got is None:
            got = set()
            for part in script_runs(word):
                if is_cjk(part):
                    continue
                f = fold(part)
                if f.isascii():
                    got.update(folded_spans(part))
                elif len(b := f.encode()) <= MAX_TERM:
                    got.add(b)
            if len(_WORD_TERMS) > 100_000:
                _WORD_TERMS.clear()
            _WORD_TERMS[word] = got
        out |= got
    return cjk, out


def folded_spans(word: str) -> set:
    r"""What rg's folded alternative of an ASCII form (textnorm.folded_regex) can match in
    ``word`` (a maximal run of word characters), folded and lowercased — exactly, as the
    selection needs what a file holds, not a superset. In ripgrep's ASCII mode the bytes of a
    non-ASCII letter are not word characters, so a match starts at the word's start or just
    after a non-ASCII letter (``\b`` before an ASCII letter, ``\B`` before another), ends at
    the word's end or just before a non-ASCII letter, and each of its letters folds to one
    ASCII letter or digit."""
    from ..textnorm import fold

    n = len(word)
    starts = [0] + [i for i in range(1, n) if not word[i - 1].isascii()]
    ends = {n, *(i for i in range(1, n) if not word[i].isascii())}
    letters = [fold(c) for c in word]
    ok = [len(c) == 1 and c.isascii() and c.isalnum() for c in letters]
    out = set()
    for s in starts:
        for e in ends:
            if e - s >= MIN_TERM and e - s <= MAX_TERM and all(ok[s:e]):
                out.add("".join(letters[s:e]).encode())
    return out


def body_of(data: bytes, fm: int) -> bytes:
    """A file's bytes after the line ``fm`` its frontmatter ends on (what a file *holds*: its
    properties — a title, tags, the project — are not what was said; the search never counts
    a frontmatter row either)."""
    pos = 0
    for _ in range(fm):
        pos = data.find(b"\n", pos) + 1
        if not pos:
            return b""
    return data[pos:]


def form_terms(form: str) -> list | None:
    """The terms a file must hold all of to match ``form`` (None: the index cannot tell): an
    ASCII form's runs; a CJK bigram itself; another word, folded (textnorm.fold)."""
    if len(form) > MAX_TERM:
        return None
    if not form.isascii():
        from ..textnorm import fold, is_cjk

        if is_cjk(form):  # (its characters: see unicode_terms)
            return list(dict.fromkeys(c.encode() for c in form))
        form = fold(form)
        if not form.isascii():
            return [form.encode()] if len(form.encode()) <= MAX_TERM and form.isalnum() else None
    runs = [r.lower() for r in RUN.findall(form.encode("ascii")) if len(r) >= MIN_TERM]
    return runs or None


def needed_terms(forms) -> list | None:
    """Each form's index terms (:func:`form_terms`), or None when one form has none (then the
    index cannot narrow the scan)."""
    need = []
    for f in forms:
        t = form_terms(f)
        if t is None:
            return None
        need.append(t)
    return need


def holds(terms: set, group: list) -> bool:
    """Whether a file whose terms are ``terms`` holds one of ``group``'s forms (each a list of
    the terms it needs, see :func:`form_terms`)."""
    return any(all(t in terms for t in need) for need in group)


def term_groups(forms_per_term: list) -> list | None:
    """Each query term's forms as the index reads them (lists of terms a file needs all of), or
    None when a form cannot be answered by the index (non-ASCII, too long). A spelling made of
    one-character runs only (``v-4``, an identifier spelling of ``v4``) holds no index term:
    it is left out (the term's other spellings stand for it); a term with no other: None."""
    groups = []
    for forms in forms_per_term:
        if any(not f.isascii() or len(f) > MAX_TERM for f in forms):
            return None
        need = [t for t in map(form_terms, forms) if t is not None]
        if not need:
            return None
        groups.append(need)
    return groups
