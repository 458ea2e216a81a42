"""Text in any script, searched as its readers expect (docs/design.md §5, "Any language").

One home for the rules every side shares — the query's terms (:mod:`chrollo.terms`), ripgrep's
regex (:mod:`chrollo.rg`), the collector that maps rg's matches back to terms, the recall
hook's matcher and the index's terms:

* **Folding.** Text is compared after NFKC (full width ``ＡＰＩ`` is ``API``), case folding
  and the removal of accents (``café`` is ``cafe``, ``München`` is ``munchen``): :func:`fold`.
  The exact spelling still ranks first (``rank.by_spelling``).
* **CJK.** Chinese, Japanese and Korean are written without spaces between words (Korean
  attaches particles), so a word cannot be told by word boundaries. As Lucene's
  CJKBigramFilter and SQLite's trigram tokenizer do — no dictionary, nothing to load on the
  hook's path — a CJK run is taken as its overlapping character bigrams (a lone character
  as itself): ``连接池`` is ``连接`` + ``接池``, found inside ``数据库连接池在高并发下耗尽了``.
  A query's CJK run is split into its bigrams (each a term: the ranking's idf weighs a
  common one like ``什么`` low); ripgrep reports every CJK run holding one of them, and the
  run credits each query bigram it holds (:func:`grams_in`).
* **Script boundaries** split a word: ``请整理userInfo`` is ``请整理`` and ``userInfo``.

Why no segmenter (jieba, MeCab): a 20 MB dictionary and ~1 s of import on a hook that must
answer in 0.4 s, and a second tokenisation the index would have to agree with; bigrams find
every word a segmenter would, at the cost of some false neighbours, which the ranking (a
line holding all of a word's bigrams scores above one holding one) keeps down.
Stdlib only (``unicodedata``, a C module).
"""
from __future__ import annotations

import re
import unicodedata

# Han (with extensions and compatibility ideographs), Hiragana, Katakana (and its phonetic
# extensions, half width), Hangul syllables and jamo. The prolonged sound mark ー and the
# iteration marks 々〆 are part of words.
CJK_CLASS = ("\u1100-\u11ff\u3005\u3006\u3041-\u309f\u30a0-\u30ff\u3130-\u318f\u31f0-\u31ff"
             "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f")
_cjk_run = None


def _runs():
    """The compiled CJK-run regex, made on first need (Python compiles a class of these ranges
    in ~5 ms: never for ASCII text, so never on an English prompt's path)."""
    global _cjk_run
    if _cjk_run is None:
        _cjk_run = re.compile(f"[{CJK_CLASS}]+")
    return _cjk_run


def has_cjk(text: str) -> bool:
    return not text.isascii() and _runs().search(text) is not None


def fold(text: str) -> str:
    """``text`` as it is compared: NFKC, case folded, accents removed (ASCII text: lowercased)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    # (accents go; kana's voicing marks stay — デ is not テ — and NFKC composes them again)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c) or c in "\u3099\u309a")
    return unicodedata.normalize("NFKC", bare).casefold()


def script_runs(word: str) -> list:
    """``word`` cut where CJK meets other letters: ``请整理userInfo`` → ``请整理``, ``userInfo``."""
    if not has_cjk(word):
        return [word]
    out, at = [], 0
    for m in _runs().finditer(word):
        out += [word[at:m.start()], m.group()]
        at = m.end()
    return [p for p in out + [word[at:]] if p]


def is_cjk(run: str) -> bool:
    return bool(run) and not run.isascii() and _runs().fullmatch(run) is not None


def has_hiragana(term: str) -> bool:
    """Whether ``term`` (a CJK bigram or character) holds hiragana — in Japanese, mostly its
    grammar: particles, endings, auxiliaries (rank.idf_of weighs such a term less)."""
    return not term.isascii() and any("\u3041" <= c <= "\u309f" for c in term)


def grams(run: str) -> list:
    """A CJK run's terms: its overlapping bigrams, in order, each once (a lone character: itself)."""
    if len(run) < 2:
        return [run] if run else []
    return list(dict.fromkeys(run[i:i + 2] for i in range(len(run) - 1)))


def cjk_spaced(text: str) -> str:
    """``text`` with each CJK run a space."""
    return _runs().sub(" ", text)


def cjk_runs(text: str) -> list:
    return _runs().findall(text) if not text.isascii() else []


def grams_in(text: str, wanted) -> set:
    """The members of ``wanted`` (CJK bigrams or single characters) that ``text`` holds."""
    return {g for g in wanted if g in text}


# ----------------------------------------------------------------------------- ripgrep's side

# ASCII letter or digit → every other character that folds to it (textnorm.fold): the accented
# Latin letters of U+00C0–U+024F and U+1E00–U+1EFF, both cases, and the full-width forms. What
# an ASCII form must also match in the text. A literal, because making it from unicodedata
# costs ~9 ms, on the hook's path; tests/test_unicode_text.py makes it again and compares.
VARIANTS = {
    '0': '０',
    '1': '１',
    '2': '２',
    '3': '３',
    '4': '４',
    '5': '５',
    '6': '６',
    '7': '７',
    '8': '８',
    '9': '９',
    'a': 'ÀÁÂÃÄÅàáâãäåĀāĂăĄąǍǎǞǟǠǡǺǻȀȁȂȃȦȧḀḁẠạẢảẤấẦầẨẩẪẫẬậẮắẰằẲẳẴẵẶặＡａ',
    'b': 'ḂḃḄḅḆḇＢｂ',
    'c': 'ÇçĆćĈĉĊċČčḈḉＣｃ',
    'd': 'ĎďḊḋḌḍḎḏḐḑḒḓＤｄ',
    'e': 'ÈÉÊËèéêëĒēĔĕĖėĘęĚěȄȅȆȇȨȩḔḕḖḗḘḙḚḛḜḝẸẹẺẻẼẽẾếỀềỂểỄễỆệＥｅ',
    'f': 'ḞḟＦｆ',
    'g': 'ĜĝĞğĠġĢģǦǧǴǵḠḡＧｇ',
    'h': 'ĤĥȞȟḢḣḤḥḦḧḨḩḪḫẖＨｈ',
    'i': 'ÌÍÎÏìíîïĨĩĪīĬĭĮįİǏǐȈȉȊȋḬḭḮḯỈỉỊịＩｉ',
    'j': 'ĴĵǰＪｊ',
    'k': 'ĶķǨǩḰḱḲḳḴḵＫｋ',
    'l': 'ĹĺĻļĽľḶḷḸḹḺḻḼḽＬｌ',
    'm': 'ḾḿṀṁṂṃＭｍ',
    'n': 'ÑñŃńŅņŇňǸǹṄṅṆṇṈṉṊṋＮｎ',
    'o': 'ÒÓÔÕÖòóôõöŌōŎŏŐőƠơǑǒǪǫǬǭȌȍȎȏȪȫȬȭȮȯȰȱṌṍṎṏṐṑṒṓỌọỎỏỐốỒồỔổỖỗỘộỚớỜờỞởỠỡỢợＯｏ',
    'p': 'ṔṕṖṗＰｐ',
    'q': 'Ｑｑ',
    'r': 'ŔŕŖŗŘřȐȑȒȓṘṙṚṛṜṝṞṟＲｒ',
    's': 'ŚśŜŝŞşŠšſȘșṠṡṢṣṤṥṦṧṨṩẛＳｓ',
    't': 'ŢţŤťȚțṪṫṬṭṮṯṰṱẗＴｔ',
    'u': 'ÙÚÛÜùúûüŨũŪūŬŭŮůŰűŲųƯưǓǔǕǖǗǘǙǚǛǜȔȕȖȗṲṳṴṵṶṷṸṹṺṻỤụỦủỨứỪừỬửỮữỰựＵｕ',
    'v': 'ṼṽṾṿＶｖ',
    'w': 'ŴŵẀẁẂẃẄẅẆẇẈẉẘＷｗ',
    'x': 'ẊẋẌẍＸｘ',
    'y': 'ÝýÿŶŷŸȲȳẎẏẙỲỳỴỵỶỷỸỹＹｙ',
    'z': 'ŹźŻżŽžẐẑẒẓẔẕＺｚ',
}


def variants_from_unicodedata() -> dict:
    """:data:`VARIANTS` as this Python's unicodedata makes it (the test's reference)."""
    out: dict = {}
    for cp in list(range(0xC0, 0x250)) + list(range(0x1E00, 0x1F00)):
        ch = chr(cp)
        if ch.isalpha():
            base = fold(ch)
            if len(base) == 1 and base.isascii() and base.isalnum():
                out.setdefault(base, set()).add(ch)
    for i in range(26):
        out.setdefault(chr(97 + i), set()).update({chr(0xFF41 + i), chr(0xFF21 + i)})
    for i in range(10):
        out.setdefault(chr(48 + i), set()).add(chr(0xFF10 + i))
    return {k: "".join(sorted(v)) for k, v in out.items()}


_ALTS: dict = {}


def _byte_alternation(chars: str) -> str:
    """``chars`` as ASCII-mode byte classes, grouped by their UTF-8 lead bytes (``é`` and ``è``:
    ``\xC3[\xA8\xA9]``): a fifth of the regex the characters spelled out make, so a long
    query's regex compiles as fast as before (rg compiles every alternative of every form)."""
    got = _ALTS.get(chars)
    if got is None:
        groups: dict = {}
        for ch in chars:
            b = ch.encode("utf-8")
            groups.setdefault(b[:-1], []).append(b[-1])
        got = _ALTS[chars] = "|".join("".join(f"\\x{x:02X}" for x in lead) + _byte_class(sorted(last))
                                      for lead, last in sorted(groups.items()))
    return got


def _byte_class(xs: list) -> str:
    """Sorted bytes as a regex class of ranges (``[\x80-\x85\xA0-\xA5]``)."""
    out, i = [], 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(f"\\x{xs[i]:02X}" + (f"-\\x{xs[j]:02X}" if j > i else ""))
        i = j + 1
    return "[" + "".join(out) + "]"


def folded_regex(form: str) -> str | None:
    """A regex (ripgrep's ASCII mode, ``(?-u:…)`` around it) matching ``form`` — a lowercase
    ASCII word — spelled with accents or in full width, as a whole word; None if no letter
    of it has another spelling. Each end is bounded by ``\\b`` where the text's letter is
    ASCII and by ``\\B`` where it is not (in ASCII mode the bytes of ``é`` are not word
    characters: ``\\B`` between them and a space or punctuation is the word's edge)."""
    table = VARIANTS
    chars = list(form)
    if not form.isascii() or not form.isalnum():
        return None  # (identifiers, paths and commands are not spelled with accents)

    def alts(c: str) -> str:
        return _byte_alternation(table.get(c, ""))

    def plain(c: str) -> str:
        return f"[{c}{c.upper()}]" if c.isalpha() else c

    def one(c: str) -> str:
        return f"(?:{plain(c)}|{alts(c)})" if alts(c) else plain(c)

    if len(chars) == 1:
        return rf"(?:\B(?:{alts(chars[0])})\B)" if alts(chars[0]) else None
    first, last = chars[0], chars[-1]
    head = rf"(?:\b{plain(first)}|\B(?:{alts(first)}))" if alts(first) else rf"\b{plain(first)}"
    tail = rf"(?:{plain(last)}\b|(?:{alts(last)})\B)" if alts(last) else rf"{plain(last)}\b"
    return head + "".join(map(one, chars[1:-1])) + tail
