"""Collect: ripgrep's per-file rows folded into document counts and bounded candidate lists.

On a 100 MB vault a name or a common word matches 100,000 lines, and handling each of them in
Python costs more than ripgrep's whole scan: so a file's rows are folded into per-line term
masks with C-level bytes operations, and candidates are kept in one bounded list per mask
(memory stays flat however much matches).

Frontmatter rows never count (not in a document frequency, a mask, a neighbourhood, a total,
a hit or an excerpt): the properties (a title repeating the first prompt, tags, the project,
another session's title slug in a `previous` link, format 1's cwd and date) are not the
conversation. rg's rows carry no hint of where a file's frontmatter ends, so a file whose
first row lies within fileformat.FRONTMATTER_LINES has its head read once per search and its rows
up to the closing ``---`` dropped.
"""
from __future__ import annotations

import bisect
import os
from functools import reduce
from itertools import filterfalse, repeat
from operator import or_

from ..fileformat import FRONTMATTER_LINES, file_key, frontmatter_end
from ..rg import rows_after
from ..terms import Forms, _parts
from ..textnorm import fold
from . import tuning
from .query import present


class Collector:
    """Folds ripgrep's per-file rows into document counts and bounded candidate lists.

    This is the hot loop of a search (once per matching file, 10⁴–10⁵ times on a large
    vault), so it sticks to C-level bytes operations: the rows of a file's most frequent
    form become bare line numbers through one ``replace``, and only the rows of the other
    forms are looked at one by one.
    """

    def __init__(self, q: Forms, fm_ends: dict | None = None):
        self.q = q
        self.fm_ends = {} if fm_ends is None else fm_ends  # path -> frontmatter_end, once per search
        self.n = len(q.terms)
        self.masks = {f.encode(): m for f, m in q.mask.items()}
        self.total = 0                       # term occurrences listed
        self.files = 0                       # files with a match
        self.doc_masks: dict[int, int] = {}  # terms present in a file -> number of files
        self.buckets: dict[int, list] = {}   # mask -> [(file key, path, line)]
        self.cut: dict[int, bytes] = {}      # mask -> the oldest file key kept once full
        self.sampled: set = set()            # files of the sample (their masks are exact)
        self.common = 0                      # mask of the terms the main scan leaves out
        self.rows: list | None = None        # occurrences per term, while sampling
        self.idents: dict[bytes, int] = {}   # identifier seen -> the part bits it holds
        # file -> (its forms' (suffix, mask)s, their counts in its body): the session score's
        # input (tuning.SESSION_WEIGHT), kept for the files that have a candidate (memory
        # stays flat however many files match)
        self.tf: dict[bytes, tuple] = {}
        self.counted: tuple = ()             # the file being added
        self.use(q.forms())

    def ident_mask(self, ident: bytes) -> int:
        """The part bits of an identifier rg reported (``loadSettings`` -> "settings")."""
        m = self.idents.get(ident)
        if m is None:
            part = self.q.part
            m = 0
            for p in _parts(ident.decode("ascii", "replace")):
                m |= part.get(p.lower(), 0)
            self.idents[ident] = m
        return m

    def use(self, forms: list) -> None:
        """The forms the next scan lists."""
        self.all_suffixes = [(b":" + f.encode() + b"\n", self.masks[f.encode()]) for f in forms]
        self.seen(b"".join(s for s, _m in self.all_suffixes))

    def seen(self, buffer: bytes) -> None:
        """Narrow the per-file work to the forms in this buffer of rg output (most inflected
        forms and synonyms occur nowhere: counting them in every file is wasted time)."""
        self.suffixes = [(s, m) for s, m in self.all_suffixes if s in buffer]
        self.sfxs = [s for s, _m in self.suffixes]

    def df(self) -> list:
        """Per term: the number of files it occurs in."""
        out = [0] * self.n
        for m, k in self.doc_masks.items():
            m = present(m, self.n)
            for i in range(self.n):
                if m >> i & 1:
                    out[i] += k
        return out

    def fold(self, rows: bytes) -> bytes:
        """Rows as forms are spelled (textnorm.fold: lowercase — the ASCII fast path —, and for
        other text NFKC, case folded, accents removed: what rg's folded alternatives found)."""
        if rows.isascii():
            return rows.lower()
        return fold(rows.decode("utf-8", "replace")).encode("utf-8")

    def add(self, path: bytes, rows: bytes) -> None:
        """One file's rows (``LINE:match`` lines, in line order)."""
        c = rows.find(b":")
        if 0 < c and (first := int(rows[:c])) <= FRONTMATTER_LINES:  # (see frontmatter_end)
            end = self.fm_ends.get(path)
            if end is None:
                end = self.fm_ends[path] = frontmatter_end(path)
            if end >= first and not (rows := rows_after(rows, end)):
                return
        low = self.fold(rows)
        counts = list(map(low.count, self.sfxs))
        n_big = max(counts, default=0)
        if n_big == 0:
            if not self.q.part and not self.q.cjk:
                return  # only case variants we do not map (e.g. "ß" vs "SS"): ignore
            sfx_big, big = b"\n", 0  # identifiers only (or nothing we map, see below)
        else:
            sfx_big, big = self.suffixes[counts.index(n_big)]
        if self.rows is not None:
            for c, (_s, m) in zip(counts, self.suffixes):
                self.rows[(m & -m).bit_length() - 1] += c
        self.files += 1
        self.total += sum(counts)
        self.counted = (self.suffixes, counts)  # (no frontmatter row is left to count)
        rows_l = low.replace(sfx_big, b"\n").split(b"\n")  # big rows become bare b"LINE"
        big_lines = set(filter(bytes.isdigit, rows_l))
        masks: dict[bytes, int] = {}
        if n_big != len(rows_l) - 1:  # other forms too: their rows one by one
            masks = self._other_forms(rows, rows_l)
            if not (big_lines or masks):
                return
        key = file_key(path)
        alone = big_lines.difference(masks) if masks else big_lines
        if tuning.NEIGHBOR_WEIGHT and masks:  # (one form alone: no line has a neighbour of another term)
            self._add_with_neighbors(key, path, big, alone, masks, big_lines)
            found = big if big_lines else 0
            for m in masks.values():
                found |= m
        else:
            found = self._add_alone(key, path, big, alone, masks, big_lines)
        self.doc_masks[found] = self.doc_masks.get(found, 0) + 1

    def _other_forms(self, rows: bytes, rows_l: list) -> dict:
        """LINE -> mask of the rows of other forms than the most frequent one, and of the
        identifiers holding a part (split as written: ``rows`` is not lowercased)."""
        masks: dict[bytes, int] = {}
        get = self.masks.get
        idents = False
        cjk = self.q.cjk
        for r in filterfalse(bytes.isdigit, rows_l):
            ln, _, text = r.partition(b":")
            m = get(text)
            if not m and cjk and not text.isascii():  # (a CJK run: each query bigram it holds)
                m = self.q.credit(text.decode("utf-8", "replace"))
            if m:
                masks[ln] = masks.get(ln, 0) | m
            elif text:
                idents = True
        if idents and self.q.part:
            for r in rows.split(b"\n"):
                ln, _, text = r.partition(b":")
                if text and text.lower() not in self.masks and (m := self.ident_mask(text)):
                    masks[ln] = masks.get(ln, 0) | m
                    self.total += 1
        return masks

    def _add_alone(self, key, path, big, alone, masks, big_lines) -> int:
        """Bucket each line by its own terms (no neighbours); returns the file's terms."""
        found = big if big_lines else 0
        if alone:
            self._push(big, key, path, sorted(map(int, alone))[:tuning.LINES_PER_FILE_MASK])
        by_mask: dict[int, list] = {}
        for ln, m in masks.items():
            if ln in big_lines:
                m |= big
            found |= m
            by_mask.setdefault(m, []).append(int(ln))
        for m, lns in by_mask.items():
            lns.sort()
            self._push(m, key, path, lns[:tuning.LINES_PER_FILE_MASK])
        return found

    def _add_with_neighbors(self, key, path, big, alone, masks, big_lines) -> None:
        """Bucket each line by (its terms, the other terms within NEIGHBOR_LINES lines).

        Most matched lines of a file hold only its most frequent form ("big", e.g. a name):
        they keep their plain key and go in bulk unless another form is near. Only the few
        lines with other forms are visited one by one (this is the per-file hot loop).
        """
        n, w, per_mask = self.n, tuning.NEIGHBOR_LINES, tuning.LINES_PER_FILE_MASK
        other = {int(ln): (m | big if ln in big_lines else m) for ln, m in masks.items()}
        ol, al = sorted(other), sorted(map(int, alone))
        lo, hi = bisect.bisect_left, bisect.bisect_right
        by_key: dict[int, list] = {}
        near: dict[int, int] = {}  # big-only line near another form -> the terms near it
        of, low = other.__getitem__, (1 << n) - 1
        for ln, m in other.items():
            # the terms of the other-form lines in the window, its own included (they drop
            # out with ~pm below), OR-ed in C; then the big-only lines in it, one by one
            nm = reduce(or_, map(of, ol[lo(ol, ln - w):hi(ol, ln + w)]))
            a, b = lo(al, ln - w), hi(al, ln + w)
            if a < b:
                nm |= big
                for x in al[a:b]:
                    near[x] = near.get(x, 0) | m
            pm = m | m >> 2 * n
            by_key.setdefault(m | (((nm | nm >> 2 * n) & ~pm & low) << n), []).append(ln)
        if al:
            plain = [x for x in al if x not in near] if near else al
            if plain:
                by_key.setdefault(big, []).extend(plain[:per_mask])
            for x, nm in near.items():
                by_key.setdefault(big | ((present(nm, n) & ~big) << n), []).append(x)
        for k, lns in by_key.items():
            lns.sort()
            self._push(k, key, path, lns[:per_mask])

    def _push(self, mask: int, key: bytes, path: bytes, lines: list) -> None:
        b = self.buckets.get(mask)
        if b is None:
            b = self.buckets[mask] = []
        elif key > self.cut.get(mask, b"\xff"):
            return  # older than everything this mask keeps
        self.tf[path] = self.counted
        b.extend(zip(repeat(key), repeat(path), lines))
        if len(b) > 2 * tuning.BUCKET_KEEP:
            b.sort()
            del b[tuning.BUCKET_KEEP:]
            self.cut[mask] = b[-1][0]
