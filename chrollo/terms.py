"""Query terms: code-aware tokenising, folding, stopwords.

``parseConfig`` → ``parseconfig``, ``parse``, ``config``; ``snake_case`` and ``kebab-case``
likewise keep the whole identifier and its parts. Stopwords (NLTK's English list plus a few
question words) and one-character tokens are dropped. Terms are folded (:func:`textnorm.fold`:
``ＡＰＩ`` is ``api``, ``Café`` is ``cafe``); a word is cut where CJK meets other letters, and a
CJK run's terms are its bigrams (see :mod:`chrollo.textnorm`).
"""
from __future__ import annotations

import re

from .textnorm import cjk_runs, fold, grams, grams_in, is_cjk, script_runs

STOPWORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom this
that these those am is are was were be been being have has had having do does did doing a an
the and but if or because as until while of at by for with about against between into through
during before after above below to from up down in out on off over under again further then
once here there when where why how all any both each few more most other some such no nor not
only own same so than too very s t can will just don should now d ll m o re ve y ain aren
couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
would could also get got let us yes ok okay please thanks thank hi hello hey
""".split())

MIN_LEN = 2
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _parts(ident: str) -> list[str]:
    out = []
    for chunk in re.split(r"[_\-./]+", ident):
        # camelCase splitting only where case is ASCII; other scripts stay whole
        out.extend(_CAMEL.findall(chunk) if chunk.isascii() else [chunk])
    return [p for p in out if p]


def _words(query: str):
    if not query.isascii():  # (NFKC first: ``ＡＰＩ`` is a word, ``¾`` is 3⁄4, no word)
        import unicodedata

        query = unicodedata.normalize("NFKC", query)
    for m in re.finditer(r"[\w.\-/]+", query, re.UNICODE):
        for run in script_runs(m.group()):
            word = run.strip(".-/_")
            if not word:
                continue
            if is_cjk(word):  # (its bigrams, each a word of its own)
                for g in grams(word):
                    yield g, [g]
            else:
                yield word, _parts(word)


def identifiers(query: str, terms: list | None = None) -> dict[str, tuple[list[str], list[str]]]:
    """For each multi-part identifier term: (other spellings, its part terms).

    ``parseConfig`` → ``{"parseconfig": (["parse_config", "parse-config"], ["parse", "config"])}``,
    so a query in one naming convention finds the identifier written in another.
    ``terms``: the terms searched (a long query is cut to its first ones); only those are
    identifiers or parts (default: all of ``query_terms(query)``).
    """
    terms = set(query_terms(query) if terms is None else terms)
    out = {}
    for word, pieces in _words(query):
        whole = fold(word)
        if len(pieces) < 2 or whole not in terms:
            continue
        low = [fold(p) for p in pieces]
        forms = ["".join(low), "_".join(low), "-".join(low)]
        if re.fullmatch(r"[\w\-]+", whole):
            aliases = [f for f in dict.fromkeys(forms) if f != whole]
        else:
            aliases = []  # paths and dotted names keep their exact spelling
        out[whole] = (aliases, [p for p in dict.fromkeys(low) if p in terms and p != whole])
    # a word of another script keeps the spelling the user gave it too (rg matches it as
    # written; folding strips Greek tonos or Cyrillic ё, which the text may well keep)
    for term, typed in spellings(query).items():
        if not term.isascii() and term in terms:
            aliases, parts = out.get(term, ([], []))
            out[term] = (aliases + sorted(typed - set(aliases)), parts)
    return out


def query_terms(query: str) -> list[str]:
    """Distinct lowercase search terms of ``query`` in first-seen order."""
    seen: dict[str, None] = {}

    def add(tok: str) -> None:
        t = fold(tok)
        if (len(t) >= MIN_LEN or is_cjk(t)) and t not in STOPWORDS and t not in seen:
            seen[t] = None

    for word, pieces in _words(query):
        if len(pieces) > 1:  # keep the whole identifier (``parse_config``) too
            add(word)
        for p in pieces:
            add(p)
    return list(seen)


def spellings(query: str) -> dict:
    """Term → the spellings the user gave it where they differ from the term by more than
    case and width (``café`` for the term ``cafe``): the exact spelling ranks first
    (rank.by_spelling)."""
    import unicodedata

    out: dict = {}
    for word, _pieces in _words(query):
        if word.isascii() or is_cjk(word):
            continue
        typed = unicodedata.normalize("NFKC", word).casefold()
        term = fold(word)
        if typed != term:
            out.setdefault(term, set()).add(typed)
    return out


def beyond_ascii(query: str) -> bool:
    """Whether a word of ``query`` is written beyond ASCII (after NFKC: full width ``ＡＰＩ`` is
    ASCII, a curly apostrophe is no word): the queries whose ranking has the rules of
    docs/design.md §5 "Ranking beyond ASCII" — an ASCII query's ranking never sees them."""
    return not query.isascii() and any(not w.isascii() for w, _p in _words(query))


_VOWELS = set("aeiou")


def _doubles(b: str) -> bool:
    """Whether ``b`` may double its last consonant before -ed/-ing (stop → stopped, commit →
    committed): one vowel before one final consonant that is not w, x or y. English doubles
    only under a stressed last syllable (visit → visited), which spelling cannot tell: both
    forms are matched, the wrong one is no word and matches nothing."""
    return (len(b) >= 3 and b[-1] not in _VOWELS and b[-1] not in "wxy" and b[-2] in _VOWELS
            and b[-3] not in _VOWELS)


# Irregular English verbs (and a few nouns), one group a line, its forms separated by
# spaces: a question asks in the base form ("When did Nate win …", "What did Elise buy …")
# and the session tells in the past ("I won", "I bought"), which the regular rule cannot
# reach (the pooled dev's misses, docs/pooled.md). Every form of a group reaches the others;
# a form in brackets is a word of its own as often (``left``, ``found``, ``bit``, ``saw``; a
# past participle is as often an adjective: "given name", "known issue", "broken build"): it
# is reached, it reaches nothing. Verbs whose past is their base (cut, put, read) need none.
# (``go went gone`` measured and left out: "going" and "go" are everywhere, 3 questions lost for 1.)
_IRREGULAR = """
arise arose (arisen) arises arising; awake awoke (awoken) awakes awaking; beat (beaten) beats beating
become became becomes becoming; begin began (begun) begins beginning; bend bent bends bending
bite (bitten) bites biting (bit); bleed bled bleeds bleeding; blow blew (blown) blows blowing
break broke (broken) breaks breaking; breed bred breeds breeding; bring brought brings bringing
build built builds building; buy bought buys buying; catch caught catches catching
choose chose (chosen) chooses choosing; come came comes coming; creep crept creeps creeping
deal dealt deals dealing; dig dug digs digging; draw drew (drawn) draws drawing
drink drank (drunk) drinks drinking; drive drove (driven) drives driving; eat ate (eaten) eats eating
fall (fallen) falls falling (fell); feed feeds feeding (fed); feel feels feeling (felt)
fight fought fights fighting; find finds finding (found); flee fled flees fleeing
fly flew (flown) flies flying; forget forgot (forgotten) forgets forgetting
forgive forgave (forgiven) forgives forgiving; freeze froze (frozen) freezes freezing
give gave (given) gives giving; grow grew (grown) grows growing
hang hung hangs hanging; hear heard hears hearing; hide hid (hidden) hides hiding
hold held holds holding; keep kept keeps keeping; know knew (known) knows knowing
lead leads leading (led); leave leaves leaving (left); lend lent lends lending; lose lost loses losing
make made makes making; mean meant means meaning; meet met meets meeting
overcome overcame overcomes overcoming; pay paid pays paying; ride rode (ridden) rides riding
ring rang (rung) rings ringing; rise (risen) rises rising (rose); run ran runs running
say said says saying; see (seen) sees seeing (saw); seek sought seeks seeking; sell sold sells selling
send sent sends sending; shake shook (shaken) shakes shaking; shine shone shines shining
shoot shoots shooting (shot); shrink shrank (shrunk) shrinks shrinking; sing sang (sung) sings singing
sink sank (sunk) sinks sinking; sit sits sitting (sat); sleep slept sleeps sleeping
slide slid slides sliding; speak spoke (spoken) speaks speaking; spend spent spends spending
spin spun spins spinning; stand stood stands standing; steal stole (stolen) steals stealing
stick stuck sticks sticking; strike struck strikes striking; swear swore (sworn) swears swearing
sweep swept sweeps sweeping; swim swam (swum) swims swimming; swing swung swings swinging
take took (taken) takes taking; teach taught teaches teaching; tear tore (torn) tears tearing
tell told tells telling; think thought thinks thinking; throw threw (thrown) throws throwing
undergo underwent (undergone) undergoes undergoing; understand understood understands understanding
wake woke (woken) wakes waking; wear wore (worn) wears wearing; weep wept weeps weeping
win won wins winning; write wrote (written) writes writing
child children; man men; woman women; foot feet; tooth teeth; mouse mice; wife wives; knife knives
"""


def _irregular() -> dict:
    """Form -> the other forms of its group (see _IRREGULAR); a bracketed form reaches none."""
    out: dict = {}
    for group in _IRREGULAR.replace("\n", ";").split(";"):
        forms = [f.strip("()") for f in group.split()]
        for f in group.split():
            if not f.startswith("("):
                out[f] = [x for x in forms if x != f]
    return out


IRREGULAR = _irregular()


def inflections(term: str) -> list:
    """Other inflected forms of an English word (plural, -ed, -ing; irregular forms).

    Deliberately shallow — no stemmer: "adopt" → adopts, adopted, adopting; "stories" →
    story, storied; "stop" → stopped, stopping; "travel" → travelled and traveled; "potato" →
    potatoes; "win" → won, "buy" → bought, "child" → children (_IRREGULAR, any length). Only
    alphabetic ASCII terms of 4+ letters get regular forms; identifiers and short words stay
    exact.
    """
    if term in IRREGULAR:
        return IRREGULAR[term]
    if len(term) < 4 or not term.isalpha() or not term.isascii():
        return []
    bases = set()
    if term.endswith("ies"):
        bases.add(term[:-3] + "y")
    elif term.endswith(("ses", "xes", "zes", "ches", "shes")):
        bases.add(term[:-2])
    elif term.endswith("oes") and term[-4] not in _VOWELS:
        bases.add(term[:-2])  # potatoes -> potato
    elif term.endswith("s") and not term.endswith(("ss", "us", "is")):
        bases.add(term[:-1])
    elif term.endswith("ing") and len(term) > 5:
        bases.update(_stems(term[:-3]))
    elif term.endswith("ied"):
        bases.add(term[:-3] + "y")
    elif term.endswith("ed") and len(term) > 4:
        bases.update(_stems(term[:-2]))
    bases = {b for b in bases if len(b) >= 3} or {term}
    out = []
    for b in sorted(bases):
        out.append(b)
        if b.endswith("y") and b[-2] not in _VOWELS:
            out += [b[:-1] + "ies", b[:-1] + "ied", b + "ing"]
        elif b.endswith("ee"):
            out += [b + "s", b + "d", b + "ing"]
        elif b.endswith("e"):
            out += [b + "s", b + "d", b[:-1] + "ing"]
        elif b.endswith(("s", "x", "z", "ch", "sh")) or (b.endswith("o") and b[-2] not in _VOWELS):
            out += [b + "es", b + "ed", b + "ing"]
        else:
            out += [b + "s", b + "ed", b + "ing"]
        if _doubles(b) or (b.endswith("l") and len(b) >= 5 and b[-2] in _VOWELS and b[-3] not in _VOWELS):
            out += [b + b[-1] + "ed", b + b[-1] + "ing"]  # stopped; British travelled
    return [f for f in dict.fromkeys(out) if f != term]


def _stems(stem: str) -> set:
    """The bases of an -ed/-ing form's ``stem``: bake(d), paint(ed), stopp(ed) → stop, and
    travell(ed) → travel as well as call(ed) → call."""
    if len(stem) >= 2 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS:
        if stem[-1] not in "lsz":
            return {stem[:-1]}  # running -> run
        return {stem, stem[:-1]} if stem[-1] == "l" and len(stem) >= 6 else {stem}
    return {stem, stem + "e"}


class Forms:
    """Every spelling ("form") a query's terms are matched in, and what a match of each says:
    the one matcher search (chrollo.retrieval) and recall share.

    A term's forms are itself, an identifier's other spellings (``parse_config``: parseconfig,
    parse-config) and, with ``inflect``, its inflections. ``mask[form]``: the terms a match
    credits, as bits (bit i: ``terms[i]``; an identifier's forms credit its parts too, and a
    form two terms share belongs to the first). ``part[form]``: the forms that also match
    inside identifiers (plain ASCII words of ``part_min`` letters or more, not identifiers
    themselves), as bit 2n+i of n terms. ``synonyms``: the terms that are synonyms of others,
    with their weight. Matching is whole words, case-insensitive: :meth:`matcher` is Python's
    reading of it, ``rg.words_regex`` ripgrep's.
    """

    def __init__(self, terms: list, idents: dict, synonyms: dict | None = None, *,
                 inflect: bool = True, part_min: int = 3):
        index = {t: i for i, t in enumerate(terms)}
        self.terms = terms
        self.idents = idents
        self.synonyms = synonyms or {}
        self.mask: dict[str, int] = {}
        self.inflected: set = set()  # forms that are only an inflection of their term
        for t, i in index.items():
            aliases, parts = idents.get(t, ([], []))
            m = (1 << i) | sum(1 << index[p] for p in parts)
            for form in (t, *aliases):
                self.mask.setdefault(form, m)
            for form in inflections(t) if inflect else ():
                if form not in self.mask:
                    self.mask[form] = m
                    self.inflected.add(form)
        self.cjk = {f: m for f, m in self.mask.items() if is_cjk(f)}  # (bigrams: found inside runs)
        # (the parts of an identifier the query spelled out are query terms of their own already)
        n = len(terms)
        self.part: dict[str, int] = {}
        for t, i in index.items():
            if len(t) >= part_min and t.isascii() and t.isalnum() and t not in idents:
                for form in [t, *(inflections(t) if inflect else ())]:
                    self.part.setdefault(form, 1 << (2 * n + i))

    def forms(self, terms_mask: int = -1) -> list:
        """The spellings of the terms in ``terms_mask`` (by their own term bit)."""
        return [f for f, m in self.mask.items() if (m & -m) & terms_mask]

    def part_forms(self, terms_mask: int = -1) -> list:
        """The spellings of the terms in ``terms_mask`` that also match inside identifiers."""
        n2 = 2 * len(self.terms)
        return [f for f, m in self.part.items() if (m >> n2) & terms_mask]

    def about(self) -> dict:
        """Each form → the terms a line holding it is about: its term, and an identifier's
        parts for the identifier's own spellings (not for an inflection of it)."""
        terms = self.terms
        return {f: (terms[(m & -m).bit_length() - 1],) if f in self.inflected
                else tuple(t for i, t in enumerate(terms) if m >> i & 1) for f, m in self.mask.items()}

    def matcher(self, forms: list | None = None) -> "Matcher | None":
        """What finds ``forms`` (default: every form) in a line, as ripgrep's regex does
        (rg.words_regex): whole words in any case, longest first, in the folded line; CJK
        bigrams inside CJK runs. None when there are none."""
        forms = list(self.mask) if forms is None else forms
        if not forms:
            return None
        return Matcher(forms)

    def credit(self, text: str) -> int:
        """The mask a match's text (as rg reported it) credits: its form's, or for a CJK run
        every query bigram it holds; 0 if it is none of them."""
        t = fold(text)
        m = self.mask.get(t, 0)
        if not m and self.cjk and not t.isascii():
            for g in grams_in(t, self.cjk):
                m |= self.cjk[g]
        return m


def whole_words(words: list) -> "re.Pattern | None":
    """The one whole-word matcher: any of ``words``, longest first, in any case; ASCII words
    bounded by ASCII word characters (as rg's ASCII mode reads them), others by any."""
    ascii_words = [w for w in words if w.isascii()]
    other = [w for w in words if not w.isascii()]
    alt = []
    if ascii_words:
        alt.append(r"(?<![A-Za-z0-9_])(?:" + "|".join(map(re.escape, sorted(set(ascii_words), key=len, reverse=True)))
                   + r")(?![A-Za-z0-9_])")
    if other:
        alt.append(r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(set(other), key=len, reverse=True))) + r")(?!\w)")
    return re.compile("|".join(alt), re.I) if alt else None


class Matcher:
    """Python's reading of rg.words_regex: ``findall(line)`` gives the forms found in the
    folded line (textnorm.fold), as whole words — ASCII words by ASCII word boundaries, as
    ripgrep's ASCII mode reads them (``请整理userInfo`` holds ``userinfo``) — and every CJK
    bigram held by one of its CJK runs."""

    def __init__(self, forms: list):
        words = [f for f in forms if not is_cjk(f)]
        self.cjk = frozenset(f for f in forms if is_cjk(f))
        self.words = whole_words(words)

    def findall(self, text: str) -> list:
        t = fold(text)
        out = self.words.findall(t) if self.words is not None else []
        if self.cjk and not t.isascii():
            for run in cjk_runs(t):
                out += grams_in(run, self.cjk)
        return out
