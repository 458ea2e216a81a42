#!/usr/bin/env python3
"""Build chrollo's bundled thesaurus: WordNet 3.0 synonyms, filtered for precision, plus the
curated developer overlay.

    apt-get install wordnet-base          # Debian's WordNet 3.0 dict files (/usr/share/wordnet)
    pip install '.[thesaurus]'            # nltk, a build-only dependency
    python thesaurus/build.py             # writes chrollo/data/thesaurus.json

Raw WordNet synonyms hurt search (build → physique, code → encipher, fix → pickle): a word's
rare senses bring rare, off-topic "synonyms". So a synonym is kept only when

* both words are used in that sense: the word's sense is tagged in WordNet's semantic
  concordance (``Lemma.count()``, from ``cntlist.rev``) at least MIN_COUNT times and the
  synonym's at least MIN_SYN_COUNT times, and the sense is one of the word's frequent ones
  (≥ SENSE_SHARE of its most frequent sense's count);
* it is a single lowercase word of at least 3 letters, not a stopword, not an inflection of
  the word itself, and not in ``NOISE`` (known bad pairs);
* the sense is of the word's dominant part of speech (by tagged counts: "state" is a noun
  far more than the verb that would bring "say");
* it is among the MAX_SYNONYMS best by tagged count.

The overlay (``thesaurus/overlay.json``) is merged on top, both ways (deploy → release and
release → deploy), and wins over WordNet. The output is deterministic (sorted keys, stable
tie-breaks): rebuilding gives the same bytes.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "chrollo" / "data" / "thesaurus.json"
OVERLAY = ROOT / "thesaurus" / "overlay.json"
WORDNET = Path(os.environ.get("WORDNET_DIR", "/usr/share/wordnet"))
sys.path.insert(0, str(ROOT))

MIN_COUNT = 2          # tagged occurrences of the word's sense for it to count
MIN_SYN_COUNT = 1      # tagged occurrences of the synonym in that sense
SENSE_SHARE = 0.4      # a sense kept must have ≥ this share of the word's top sense count
MAX_SYNONYMS = 4
MAX_OVERLAY = 8        # links kept for a word the overlay touches (its own entry is kept whole)
NOISE = {  # (word, synonym) pairs that pass the filters but mislead code/dev searches
    ("build", "physique"), ("code", "encipher"), ("fix", "pickle"), ("fix", "jam"), ("bug", "glitch"),
    ("run", "ravel"), ("test", "trial"), ("branch", "limb"), ("commit", "perpetrate"),
    ("master", "victor"), ("master", "maestro"), ("patch", "piece"), ("merge", "unify"),
    ("deploy", "position"), ("log", "logarithm"), ("shell", "carapace"), ("shell", "plate"),
    ("thread", "yarn"), ("root", "beginning"), ("tree", "tree_diagram"), ("kill", "stamp"),
    ("table", "tabular_array"), ("key", "tonality"), ("port", "embrasure"), ("cache", "hoard"),
    ("pipe", "tobacco_pipe"), ("issue", "egress"), ("stack", "flock"), ("type", "character"),
    ("string", "chain"), ("server", "waiter"), ("mouse", "shiner"), ("window", "windowpane"),
    ("file", "single_file"), ("class", "course"), ("object", "aim"), ("function", "office"),
    ("check", "chip"), ("release", "outlet"), ("release", "vent"), ("change", "alteration"),
    ("run", "lam"), ("fix", "prepare"), ("code", "codification"), ("commit", "send"),
    ("commit", "give"), ("branch", "leg"), ("learn", "hear"), ("learn", "see"), ("key", "cardinal"),
    ("take", "bring"), ("get", "catch"), ("test", "screen"),
}
# The 45 lexicographer files of WordNet 3.0: Debian's wordnet-base ships without this index.
LEXNAMES = """adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute
noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group
noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession
noun.process noun.quantity noun.relation noun.shape noun.state noun.substance noun.time
verb.body verb.change verb.cognition verb.communication verb.competition verb.consumption
verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession verb.social
verb.stative verb.weather adj.ppl""".split()
LEX_POS = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


def open_wordnet():
    """nltk's reader on Debian's files: a private copy plus a lexnames file, on nltk.data.path
    (nltk only opens corpus files under its data paths, and refuses symlinks out of them)."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    if not (WORDNET / "data.noun").exists():
        sys.exit(f"WordNet dict files not found in {WORDNET}: apt-get install wordnet-base "
                 "(or set WORDNET_DIR)")
    tmp = Path(tempfile.mkdtemp(prefix="chrollo-wordnet-"))
    for f in WORDNET.iterdir():
        if f.is_file():
            shutil.copyfile(f, tmp / f.name)
    (tmp / "lexnames").write_text("".join(f"{i:02d}\t{n}\t{LEX_POS[n.split('.')[0]]}\n"
                                          for i, n in enumerate(LEXNAMES)))
    nltk.data.path.insert(0, str(tmp))
    import warnings

    class Reader(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            return None  # the files are WordNet 3.0 itself: no mapping (which would download)

    with warnings.catch_warnings():  # "multilingual functions not available": not wanted here
        warnings.simplefilter("ignore")
        return Reader(str(tmp), None)  # no omw reader: nothing is downloaded


def _pos(syn) -> str:
    return "a" if syn.pos() == "s" else syn.pos()  # adjective satellites are adjectives


def wordnet_synonyms(wn) -> dict:
    from chrollo.terms import STOPWORDS

    word_ok = re.compile(r"[a-z]{3,}").fullmatch
    out: dict = defaultdict(dict)
    dominant = {}  # word -> its most used part of speech ("state" is mostly a noun, not "say")
    for syn in wn.all_synsets():
        for lm in syn.lemmas():
            w = lm.name().lower()
            per_pos = dominant.setdefault(w, defaultdict(int))
            per_pos[_pos(syn)] += lm.count()
    dominant = {w: max(sorted(c), key=c.get) for w, c in dominant.items()}
    for syn in wn.all_synsets():
        lemmas = [(lm.name().lower(), lm.count()) for lm in syn.lemmas()]
        for w, wc in lemmas:
            if wc < MIN_COUNT or not word_ok(w) or w in STOPWORDS or dominant.get(w) != _pos(syn):
                continue
            for s, sc in lemmas:
                if s == w or sc < MIN_SYN_COUNT or not word_ok(s) or s in STOPWORDS:
                    continue
                if s.startswith(w) or w.startswith(s) or (w, s) in NOISE:
                    continue  # inflections are not synonyms; known noise
                out[w][s] = max(out[w].get(s, (0, 0)), (wc, sc))  # (word's sense, synonym's)
    # keep only senses that matter for the word: drop synonyms from its minor senses
    top = {w: max(lm.count() for lm in wn.lemmas(w)) for w in out}
    result = {}
    for w, cands in out.items():
        strong = {s: sc for s, (wc, sc) in cands.items() if wc >= SENSE_SHARE * top[w]}
        best = sorted(strong.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_SYNONYMS]
        if best:
            result[w] = [s for s, _c in best]
    return result


def merge_overlay(words: dict, overlay: dict) -> dict:
    """Overlay links both ways. A word with its own overlay entry takes the overlay's list
    instead of WordNet's (its developer sense wins: code is not "codification"); a word that
    is only the target of a link gets the link in front of its WordNet synonyms."""
    both = defaultdict(list)
    for w, syns in overlay.items():
        for s in syns:
            for a, b in ((w, s), (s, w)):
                if b not in both[a]:
                    both[a].append(b)
    merged = dict(words)
    for w, syns in both.items():
        rest = [] if w in overlay else [s for s in merged.get(w, []) if s not in syns]
        merged[w] = (syns + rest)[:max(MAX_OVERLAY, len(overlay.get(w, ())))]
    return merged


def main() -> None:
    overlay = json.loads(OVERLAY.read_text("utf-8"))["entries"]
    wn = open_wordnet()
    words = merge_overlay(wordnet_synonyms(wn), overlay)
    data = {"format": 1,
            "source": "WordNet 3.0 (Princeton University; licence: chrollo/data/WORDNET-LICENSE) "
                      "filtered by tagged sense counts, plus chrollo's developer overlay",
            "words": {w: words[w] for w in sorted(words)}}
    OUT.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=False) + "\n", "utf-8")
    print(f"{OUT}: {len(words)} words, {sum(map(len, words.values()))} synonyms, "
          f"{OUT.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
