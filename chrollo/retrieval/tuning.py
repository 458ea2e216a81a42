"""Every tuning constant of the search, in one place (docs/ranking.md measures each).

The pipeline's modules read them as ``tuning.NAME`` at call time, so an ablation (a test,
bench/ablation_cost.py) sets one here and the whole search sees it.
"""
from __future__ import annotations

import os

# ----------------------------------------------------------------------------- the query
MAX_LIMIT = 50
MAX_TERMS = 100              # searchable words of one query at most (the rest are ignored, with a warning)
MAX_CONTEXT = 50
SYNONYM_WEIGHT = 0.5         # a synonym's idf counts half an exact term's
INFLECT = os.environ.get("CHROLLO_INFLECT", "1") != "0"  # match plural/-ed/-ing forms (ablation knob)
# A query word found only as a part of an identifier (``config`` in ``parse_config``,
# ``settings`` in ``loadSettings``) counts PART_WEIGHT of a whole-word match: it is the same
# thing named, but a line that says the word itself is the better answer (docs/ranking.md).
PART_WEIGHT = 0.8
PART_MIN = 3                 # words shorter than this never match inside identifiers

# ----------------------------------------------------------------------------- the hits
HITS_PER_FILE = 8            # (5 dropped the further answers a long session held: docs/ranking.md)
# Breadth (issue 43): past the first BROAD_AFTER hits (what hit@10 measures) a file's hits
# beyond BROAD_PER_FILE wait until no other session has one, so a long list (read_memory's
# 50) names more sessions; when few sessions match, the waiting lines still fill it.
BROAD_AFTER = 10
BROAD_PER_FILE = 2
MERGE_FACTOR = 1             # a candidate whose line is inside a hit's window merges into it
MAX_LINE_CHARS = 2000        # context lines are clipped to this in hits (not in `chrollo read`)
LONG_LINE = 2000             # characters: a longer line's score shrinks by sqrt(LONG_LINE / its length)

# ----------------------------------------------------------------------------- collecting
BUCKET_KEEP = 256            # candidates kept per term mask
LINES_PER_FILE_MASK = 8      # per file, candidates kept per term mask
POOL = 300                   # candidates rescored exactly when common terms were left out
# (Frontmatter rows never count: where a frontmatter ends is the format's fact, with its
# limits — fileformat.FRONTMATTER_LINES/HEAD/MAX — see fileformat.frontmatter_end.)

# ----------------------------------------------------------------------------- the sample
# Among the first SAMPLE_AFTER entries of the vault folder (directory order, unrelated to
# names), the sessions whose names end in [0-3]0.md — the last hex digits of their session
# ids, so ~1/64 of them, uniformly. Only vaults with more entries than that are sampled
# (measured: below ~8,000 sessions one full listing is faster).
SAMPLE_AFTER = 8_000
SAMPLE_ENDINGS = ("00.md", "10.md", "20.md", "30.md")
COMMON_RATE = 0.15           # occurrences per session (in the sample) that make a term "common"

# ----------------------------------------------------------------------------- the deadline scan
# A search with a deadline (the recall hook) lists the vault, scans its newest sessions first
# in batches (DEADLINE_BATCH files, always in full, then 4× more each time until the
# deadline); files over DEADLINE_MAX_FILE bytes (a pasted multi-megabyte log, a
# vocabulary-stuffed peer file) are skipped there. Explicit searches have no deadline and stay
# complete. (The vault's listing is cached: see chrollo/listing.py.)
DEADLINE_BATCH = 1000
DEADLINE_MAX_BATCH = 12_000  # (paths go on rg's command line: stay far below ARG_MAX)
DEADLINE_MAX_FILE = 4 << 20
SCAN_RESERVE = 0.3           # share of the deadline kept for ranking and reading the hits

# ----------------------------------------------------------------------------- the selection
# A vault of more than SELECT_AFTER session files is not read whole: rg reads the best
# SELECT_FILES of them by what they hold (retrieval/select.py; from the index's postings when
# there is one). SELECT_AFTER is the recall hook's first batch (DEADLINE_BATCH, which it
# always reads in full): up to it every search reads the whole vault. Measured on dev
# (bench/recall_scale_indexed.py, 150 questions): at 20 MB and 50 MB of coding sessions over
# the conversations, search hit@10 the same (0.84) with 1,000 as with 8,000, recall@own the
# same at 20 MB (0.72) and better at 50 MB (0.647 -> 0.707: the hook reaches every session),
# search and hook 2-3x faster.
SELECT_AFTER = int(os.environ.get("CHROLLO_SELECT_AFTER", DEADLINE_BATCH))  # (knobs for tests and ablations)
SELECT_FILES = int(os.environ.get("CHROLLO_SELECT_FILES", "300"))
SELECT_FIRST = 100           # with a deadline (the recall hook): the best files read first, in full

# ----------------------------------------------------------------------------- the index's read plans
# (chrollo/index answers which files may hold a form; how much of that a search uses is tuned here)
# Below this many indexed files a complete search lets rg walk the vault: asking SQLite costs
# about what rg's walk of a few thousand small files does (bench/index.py at 10 MB, 2,452
# files: no faster with the index). The hook still uses it.
INDEX_MIN_FILES = 5000
INDEX_SCAN_SHARE = 0.5       # more candidates than this share of the files: rg walks the folder
HOOK_RARE_FILES = 1000       # the recall hook reads the files of a query word this rare first
HOOK_CANDIDATES = 4000       # … and all candidates only if there are no more than this
DIRECT_HOOK_BYTES = 4 << 20  # the recall hook reads at most this much directly (else: newest first)
# An index behind its vault (files another program wrote — a sync tool, a restored backup —
# renamed or edited): the files it cannot vouch for are read directly, by rg with the regex a
# walk of the folder uses (index.universe.rg_masks: never slower than that walk; they were
# tokenised in Python at about a fifth of rg's speed, measured then — LoCoMo replicas indexed
# at 10 MB, grown to 11 … 50 MB, search with the index / without — 0.96× at 10 % of the files
# read directly, 1.02× at 23 %, 1.2× at 37 %, 2.7× at 80 %; not measured again since). Past DIRECT_SCAN_SHARE a complete search lets rg walk the
# folder (as without an index); past CATCHUP_SHARE a search — complete, read_memory or the
# recall hook — leaves one detached build behind that catches the index up
# (chrollo.index.after_search), so the cost is paid once, in the background.
DIRECT_SCAN_SHARE = float(os.environ.get("CHROLLO_DIRECT_SCAN_SHARE", "0.2"))
CATCHUP_SHARE = float(os.environ.get("CHROLLO_CATCHUP_SHARE", "0.05"))

# ----------------------------------------------------------------------------- ranking
RECENCY_BOOST = 0.2          # newest sessions score up to ×1.2
RECENCY_HALF_LIFE_DAYS = 30.0
# Terms on the lines around a line (the question it answers, the answer it got) count half:
# a line is scored with the distinct query terms on it, plus NEIGHBOR_WEIGHT × the idf of
# the other query terms within NEIGHBOR_LINES lines (docs/ranking.md: +0.097 hit@10 on dev).
NEIGHBOR_WEIGHT = float(os.environ.get("CHROLLO_NEIGHBOR_WEIGHT", "0.5"))
NEIGHBOR_LINES = 8
# Turn-length normalisation (BM25's document-length idea, with the turn as the document): a
# line of a turn longer than TURN_PIVOT lines weighs (TURN_PIVOT / turn lines) ** TURN_POWER.
# A coding agent's long replies restate what the short prompt asked; the prompt is what is
# recalled (docs/ranking.md: code dev hit@1 0.47 -> 0.66). Conversations of short turns
# (LoCoMo) are unchanged. Applied to the best RERANK_POOL candidates, whose files are read
# anyway to show them.
TURN_PIVOT = 6
TURN_POWER = float(os.environ.get("CHROLLO_TURN_POWER", "0.2"))
RERANK_POOL = 60
# A query beyond ASCII (terms.beyond_ascii: CJK, accented words) — found on the any-language
# dev set (docs/devset-any-language.md: its misses were Japanese answers in a few sessions of
# thousands of lines, unlike the English dev sets; their --json stays byte-identical):
# * a CJK bigram holding hiragana (Japanese grammar: particles, endings — `どう`, `した`, `を選`)
#   weighs HIRAGANA_WEIGHT: a prior where the idf cannot tell (a vault of few sessions; 0.3 and
#   0.5 measured the same, 0.7 lost a question);
# * the turn-length and spelling weights re-weigh POOL candidates, not RERANK_POOL: a CJK
#   question is one term per bigram, its candidates spread over many masks, and a candidate
#   beyond the pool keeps its full score;
# * a hit whose anchor line repeats a better hit's word for word is left out (an export
#   restating its prompts filled the top ten with copies of one line).
HIRAGANA_WEIGHT = 0.5
# A line holding a query word only in another spelling than the user's (accents: ``café`` for
# ``cafe``; textnorm.fold) weighs this much: the exact spelling first, the folded one still found.
FOLDED_WEIGHT = 0.9
# Session score (docs/ranking.md, "Sessions"): a question's words are often spread over a
# session, not gathered on one line. A file's BM25 over the query terms (term frequency
# saturating with SESSION_K1, no length normalisation), from the counts the one rg scan already
# gives, scales its lines by (1 + SESSION_WEIGHT × score / best possible) / (1 + SESSION_WEIGHT)
# (at most 1, so the lazy ranking stays as exact as the turn-length one), for the best POOL
# candidates. Half weight: at 1.0 code dev loses a question.
SESSION_WEIGHT = 0.5
SESSION_K1 = 1.2
# Named dates (docs/ranking.md, "Sessions"): a query naming a month, a day or a year ("in July",
# "on 9 November, 2022", "2023-06-03") is about what was said then. A session started outside
# every date the query names has its lines scaled by 1 / (1 + DATE_WEIGHT), from the session's
# own time (its file name), for the same POOL candidates as the session score. A named day
# covers DATE_SLACK days either side (people misremember by a day or two).
DATE_WEIGHT = 1.0
DATE_SLACK = 3
