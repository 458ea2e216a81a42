#!/usr/bin/env python3
"""Recall on text beyond English (#47): chrollo against SQLite FTS5 baselines.

    python bench/any_language.py [--vaults DIR] [--questions bench/devset_any_language.jsonl]
                                 [--retrievers chrollo,fts5_trigram,…] [--label NAME]
                                 [--out-json R.json] [--out-md R.md] [--misses]

Vaults: ``bench/devset_any_language.py`` rebuilds them (default
``${CHROLLO_EVAL_DATA:-~/.cache/chrollo-eval}/any_language/<lang>``). Offline, stdlib only.

Retrievers (each answers (file, line) pairs, best first, 10 of them):

* ``chrollo`` — ``chrollo search Q --dir VAULT --limit 10 --json``; the CLI is
  ``$CHROLLO_CMD`` (split like a shell) or ``chrollo`` on PATH. ``CHROLLO_NOW`` = the vault's
  newest turn (a fresh memory) and ``CHROLLO_HOME`` = a fresh temporary folder per run, so two
  versions never share an index.
* ``fts5_trigram`` / ``fts5_unicode61`` — SQLite FTS5, one row per **turn** (a
  ``[… ] [User]`` / ``[Agent]`` paragraph; its lines, header excluded), ``ORDER BY bm25``.
  The hit's line is the turn's line holding the most distinct query terms (the first on a
  tie), so its ±3-line window is comparable with chrollo's.
  ``fts5_trigram_line`` / ``fts5_unicode61_line`` — the same with one row per **line**.
  Tokenizers, stock: ``tokenize='trigram'`` (case-insensitive, SQLite's default for it; no
  diacritic folding — that option needs SQLite ≥ 3.45) and
  ``tokenize='unicode61 remove_diacritics 2'``.
  The query is an OR of quoted phrases: for unicode61, its tokens (runs of Unicode letters and
  digits, as unicode61 cuts them — an unspaced CJK run is one token); for trigram, every
  3-character substring of each such run (a run shorter than 3 characters cannot match a
  trigram index and is left out; a query with no 3-gram finds nothing).

Scoring: a hit = a returned (file, line) whose window line-3..line+3 overlaps an evidence
range of the question in the same file. hit@1, hit@10 and MRR@10, per language and overall.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA_ROOT = os.environ.get("CHROLLO_EVAL_DATA", os.path.expanduser("~/.cache/chrollo-eval"))
K, WINDOW = 10, 3
HEADER = re.compile(r"^(?:## )?\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\] \[(User|Agent)\]\s*$")
TOKEN = re.compile(r"[^\W_]+")


class Skip(Exception):
    pass


# ------------------------------------------------------------------ vault reading

def read_turns(vault: str) -> list:
    """[(file, first_line, [lines])] of every session file: one per turn, header excluded."""
    out = []
    for name in sorted(os.listdir(vault)):
        if not name.endswith(".md"):
            continue
        lines = Path(vault, name).read_bytes().decode("utf-8").split("\n")  # rg's lines: \n only
        cur = None
        for i, ln in enumerate(lines, 1):
            if HEADER.match(ln):
                if cur:
                    out.append(cur)
                cur = (name, i + 1, [])
            elif cur is not None:
                cur[2].append(ln)
        if cur:
            out.append(cur)
    return out


def newest_turn(vault: str):
    stamps = [m.group(1) for name in os.listdir(vault) if name.endswith(".md")
              for m in map(HEADER.match, Path(vault, name).read_bytes().decode("utf-8").split("\n")) if m]
    return dt.datetime.strptime(max(stamps), "%Y-%m-%d %H:%M:%S") if stamps else None


def fold(s: str) -> str:
    """What both FTS5 tokenizers compare (case folded; unicode61 also drops accents)."""
    d = unicodedata.normalize("NFKD", s)
    return "".join(c for c in d if not unicodedata.combining(c)).casefold()


def trigrams(q: str) -> list:
    return list(dict.fromkeys(run[i:i + 3] for run in TOKEN.findall(q) for i in range(len(run) - 2)))


def tokens(q: str) -> list:
    return list(dict.fromkeys(TOKEN.findall(q)))


# ------------------------------------------------------------------ retrievers

class FTS5:
    def __init__(self, tokenizer: str, per_line: bool):
        self.tokenizer, self.per_line = tokenizer, per_line
        self.name = "fts5_" + tokenizer.split()[0] + ("_line" if per_line else "")
        self.db = None

    def build(self, vault):
        self.turns = read_turns(vault)
        rows = []
        for name, first, lines in self.turns:
            if self.per_line:
                rows += [(name, first + j, ln) for j, ln in enumerate(lines) if ln.strip()]
            else:
                rows.append((name, first, "\n".join(lines)))
        self.rows = rows
        self.db = sqlite3.connect(":memory:")
        self.db.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize='{self.tokenizer}')")
        self.db.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", ((i, r[2]) for i, r in enumerate(rows)))

    def terms(self, q):
        return trigrams(q) if self.tokenizer == "trigram" else tokens(q)

    def search(self, q, k):
        terms = self.terms(q)
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        ids = self.db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, k)).fetchall()
        folded = {fold(t) for t in terms}
        out = []
        for (rid,) in ids:
            name, line, text = self.rows[rid]
            if not self.per_line:
                body = [fold(x) for x in text.split("\n")]
                best = max(range(len(body)), key=lambda j: (sum(t in body[j] for t in folded), -j))
                line += best
            out.append((name, line))
        return out


class Chrollo:
    name = "chrollo"

    def __init__(self):
        env = os.environ.get("CHROLLO_CMD")
        self.cmd = shlex.split(env) if env else ([shutil.which("chrollo")] if shutil.which("chrollo") else None)
        if not self.cmd:
            raise Skip("chrollo not on PATH and CHROLLO_CMD unset")
        self.home = tempfile.mkdtemp(prefix="any_language_home_")
        self.errors = 0

    def build(self, vault):
        self.vault = vault
        self.env = dict(os.environ, CHROLLO_HOME=self.home)
        ts = newest_turn(vault)
        if ts:
            self.env["CHROLLO_NOW"] = ts.isoformat()

    def search(self, q, k):
        p = subprocess.run(self.cmd + ["search", q, "--dir", self.vault, "--limit", str(k), "--json"],
                           capture_output=True, env=self.env, timeout=300)
        try:
            out = json.loads(p.stdout)
        except ValueError:
            out = {"error": p.stderr.decode(errors="replace")[-300:]}
        if p.returncode != 0 or "error" in out:
            self.errors += 1
            print(f"  chrollo error ({q!r}): {out.get('error')}", file=sys.stderr)
            return []
        return [(os.path.basename(str(h["path"])), int(h["line"])) for h in out.get("hits", [])[:k]]

    def close(self):
        shutil.rmtree(self.home, ignore_errors=True)


FACTORIES = {
    "chrollo": Chrollo,
    "fts5_trigram": lambda: FTS5("trigram", False),
    "fts5_unicode61": lambda: FTS5("unicode61 remove_diacritics 2", False),
    "fts5_trigram_line": lambda: FTS5("trigram", True),
    "fts5_unicode61_line": lambda: FTS5("unicode61 remove_diacritics 2", True),
}


# ------------------------------------------------------------------ scoring

def rank_of(hits, evidence) -> int | None:
    for r, (name, line) in enumerate(hits, 1):
        for ev in evidence:
            a, b = ev["lines"]
            if ev["file"] == name and line - WINDOW <= b and line + WINDOW >= a:
                return r
    return None


def summarise(ranks: list) -> dict:
    n = len(ranks)
    return {"n": n,
            "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3) if n else None,
            "hit@10": round(sum(1 for r in ranks if r and r <= K) / n, 3) if n else None,
            "mrr@10": round(sum(1 / r for r in ranks if r) / n, 3) if n else None}


def run(questions, vaults, names):
    results = {}
    for name in names:
        try:
            r = FACTORIES[name]()
        except Skip as e:
            print(f"skip {name}: {e}", file=sys.stderr)
            continue
        per_q, lat = {}, []
        for lang in sorted({q["vault"] for q in questions}):
            r.build(os.path.join(vaults, lang))
            for q in (q for q in questions if q["vault"] == lang):
                t0 = time.perf_counter()
                hits = r.search(q["query"], K)
                lat.append(time.perf_counter() - t0)
                per_q[q["id"]] = {"rank": rank_of(hits, q["evidence"]), "top": hits[:3]}
        if hasattr(r, "close"):
            r.close()
        langs = sorted({q["lang"] for q in questions})
        results[name] = {
            "overall": summarise([per_q[q["id"]]["rank"] for q in questions]),
            "by_lang": {lg: summarise([per_q[q["id"]]["rank"] for q in questions if q["lang"] == lg]) for lg in langs},
            "latency_ms": {"p50": round(statistics.median(lat) * 1000, 1),
                           "p95": round(sorted(lat)[int(0.95 * (len(lat) - 1))] * 1000, 1)},
            "questions": per_q,
        }
        if name == "chrollo":
            results[name]["errors"] = r.errors
        o = results[name]["overall"]
        print(f"{name:22} hit@1 {o['hit@1']:.3f}  hit@10 {o['hit@10']:.3f}  mrr {o['mrr@10']:.3f}", file=sys.stderr)
    return results


def markdown(report) -> str:
    m, res = report["meta"], report["results"]
    langs = m["languages"]
    lines = [f"# Recall beyond English — {m['label']}", "",
             f"{m['questions']} questions ({', '.join(f'{lg} {c}' for lg, c in m['per_lang'].items())}), "
             f"k = {K}; a hit = a returned line whose ±{WINDOW}-line window overlaps an evidence range. "
             f"SQLite {m['sqlite']}; chrollo: `{m['chrollo_cmd']}`.", "",
             "| retriever | " + " | ".join(f"{lg} @1 | {lg} @10" for lg in langs) + " | all @1 | all @10 | MRR | p50 ms |",
             "|---|" + "---|" * (2 * len(langs) + 4)]
    for name, r in res.items():
        cells = [f"{r['by_lang'][lg]['hit@1']:.3f} | {r['by_lang'][lg]['hit@10']:.3f}" for lg in langs]
        o = r["overall"]
        lines.append(f"| {name} | " + " | ".join(cells) +
                     f" | {o['hit@1']:.3f} | {o['hit@10']:.3f} | {o['mrr@10']:.3f} | {r['latency_ms']['p50']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vaults", default=os.path.join(DATA_ROOT, "any_language"))
    ap.add_argument("--questions", default=str(HERE / "devset_any_language.jsonl"))
    ap.add_argument("--retrievers", default=",".join(FACTORIES))
    ap.add_argument("--label", default="")
    ap.add_argument("--out-json")
    ap.add_argument("--out-md")
    ap.add_argument("--misses", action="store_true", help="print each retriever's misses at 10")
    a = ap.parse_args(argv)
    with open(a.questions, encoding="utf-8") as fh:
        questions = [json.loads(ln) for ln in fh if ln.strip()]
    missing = sorted({q["vault"] for q in questions if not os.path.isdir(os.path.join(a.vaults, q["vault"]))})
    if missing:
        print(f"no vault {', '.join(missing)} under {a.vaults}: run bench/devset_any_language.py", file=sys.stderr)
        return 1
    results = run(questions, a.vaults, [n for n in a.retrievers.split(",") if n])
    per_lang = {}
    for q in questions:
        per_lang[q["lang"]] = per_lang.get(q["lang"], 0) + 1
    report = {"meta": {"date": dt.datetime.now().isoformat(timespec="seconds"), "label": a.label or "run",
                       "k": K, "window": WINDOW, "questions": len(questions), "per_lang": per_lang,
                       "languages": sorted(per_lang), "sqlite": sqlite3.sqlite_version,
                       "chrollo_cmd": os.environ.get("CHROLLO_CMD") or shutil.which("chrollo") or ""},
              "results": results}
    md = markdown(report)
    if a.out_json:
        Path(a.out_json).write_text(json.dumps(report, ensure_ascii=False, indent=1))
    if a.out_md:
        Path(a.out_md).write_text(md)
    print(md)
    if a.misses:
        byid = {q["id"]: q for q in questions}
        for name, r in results.items():
            print(f"## {name} misses at {K}")
            for qid, v in r["questions"].items():
                if not v["rank"]:
                    print(f"  {qid} {byid[qid]['query']}  top: {v['top']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
