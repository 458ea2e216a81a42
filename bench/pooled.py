#!/usr/bin/env python3
"""Pooled dev instrument (issue 43): ONE vault of many people's and projects' sessions.

    python bench/pooled.py [--work /tmp/chrollo-pooled] [--mirrors /work/.mirror]
                           [--set NAME=VALUE …] [--gate-set NAME=VALUE …] [--no-fts5]
                           [--out-json FILE] [--max-questions N]

The vault pools the LoCoMo dev conversations (``../shared/eval/locomo_to_md.py``), the coding
dev vaults (``../shared/eval/code/code_to_md.py``, rebuilt from the git mirrors the search
tool's ``fetch`` brings: ``<mirrors>/<owner>+<name>/repo``), the REALTALK conversations and
Synthetic-Persona-Chat (decoys, no questions), fetched the same way. Sources and licences:
docs/pooled.md. Every question whose evidence lies in ONE session file is asked
against the whole pool (LoCoMo categories 1-4; the code dev questions):

- search (``chrollo.retrieval.search``, in-process, limit 50): hit@1 / hit@5 = the answer
  session among the first 1 / 5 distinct sessions of the hits; found@50 = among the sessions
  the 50 hits name; distinct sessions per call. SQLite FTS5 (porter unicode61, bm25, one row
  per turn, terms OR-ed — the eval's baseline) in the same run, its 50 best turns.
- the recall gate: ``chrollo.recall.recall`` (the hook's own code, dry, its deadline from
  the call's start) on each question: injection rate, precision (injections whose excerpts
  overlap an evidence line of the answer session ÷ injections) and recall@own (questions
  whose injection holds the answer ÷ questions).

Figures and the method: docs/pooled.md. Dev data only; never LongMemEval (held out whole).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EVAL = ROOT.parent / "shared" / "eval"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(EVAL))
K = 50
NOW = "2026-01-01T00:00:00+00:00"  # after every pooled session: recency as a year-old vault sees it


def build(work: Path, mirrors: str) -> Path:
    """The pooled vault under ``work/vault`` (built once) and ``work/questions.json``."""
    vault, qfile = work / "vault", work / "questions.json"
    if qfile.exists():
        return qfile
    locomo, code = work / "locomo", work / "code"
    if not locomo.is_dir():
        subprocess.run([sys.executable, str(EVAL / "locomo_to_md.py"), "--locomo", str(EVAL / "data" / "locomo-dev"),
                        "--out", str(locomo)], check=True, stdout=subprocess.DEVNULL)
    if not (code / "code_md").is_dir():
        subprocess.run([sys.executable, str(EVAL / "code" / "code_to_md.py"), "--mirrors", mirrors, "--check"],
                       check=True, env={**os.environ, "CHROLLO_EVAL_DATA": str(code)}, stdout=subprocess.DEVNULL)
    questions = []
    for conv in sorted(p for p in locomo.glob("conv-*.json")):
        c = json.loads(conv.read_text())
        rel = f"locomo/{c['memory_dir']}"
        shutil.copytree(locomo / c["memory_dir"], vault / rel)
        for q in c["qa"]:
            if q["category"] == 5 or not q["evidence"] or q.get("unresolved"):
                continue
            spans = [c["dia_map"][e] for e in q["evidence"]]
            if len({s[0] for s in spans}) != 1:
                continue  # the answer is more than one session
            questions.append({"id": f"{c['conv']}-{q['qi']}", "source": "locomo", "kind": f"cat{q['category']}",
                              "query": q["question"], "session": f"{rel}/{spans[0][0]}",
                              "lines": [[s[1], s[2]] for s in spans]})
    for line in (EVAL / "code" / "code_questions_dev.jsonl").read_text().splitlines():
        q = json.loads(line)
        if len({e["file"] for e in q["evidence"]}) != 1:
            continue
        rel = f"code/{q['vault']}"
        if not (vault / rel).is_dir():
            shutil.copytree(code / "code_md" / q["vault"], vault / rel, ignore=shutil.ignore_patterns("SHA256SUMS"))
        questions.append({"id": q["id"], "source": "code", "kind": q["kind"], "query": q["query"],
                          "session": f"{rel}/{q['evidence'][0]['file']}",
                          "lines": [e["lines"] for e in q["evidence"]]})
    for p in sorted((code / "code_md").iterdir()):
        if not (vault / "code" / p.name).is_dir():
            shutil.copytree(p, vault / "code" / p.name, ignore=shutil.ignore_patterns("SHA256SUMS"))
    spc(Path(mirrors) / "google-research-datasets+Synthetic-Persona-Chat" / "repo", vault / "spc")
    questions += realtalk(Path(mirrors) / "danny911kr+REALTALK" / "repo", vault / "realtalk")
    qfile.write_text(json.dumps(questions, indent=0))
    return qfile


REALTALK_COMMIT = "b903e06a9770bf4e5fe9018c3e132889666d3b4a"  # danny911kr/REALTALK (docs/pooled.md); its data/locomo/ copy is never read


def realtalk(git: Path, out: Path) -> list:
    """The REALTALK chats (data/Chat_*.json: real messaging-app conversations, one file per
    session, speaker 1 as User) written under ``out``; their questions whose evidence is one session."""
    import datetime as dt
    import uuid

    from memfmt import render_session

    if not git.is_dir():
        print(f"REALTALK left out: no git mirror at {git} (fetch github:danny911kr/REALTALK)", file=sys.stderr)
        return []
    names = subprocess.run(["git", "--git-dir", str(git), "ls-tree", "--name-only", REALTALK_COMMIT, "data/"],
                           check=True, capture_output=True, text=True).stdout.split()
    questions = []
    for name in sorted(n for n in names if re.fullmatch(r"data/Chat_\d+_\w+\.json", n)):
        conv = json.loads(subprocess.run(["git", "--git-dir", str(git), "show", f"{REALTALK_COMMIT}:{name}"],
                                         check=True, capture_output=True, text=True).stdout)
        cid = Path(name).stem
        (out / cid).mkdir(parents=True)
        first = conv["name"]["speaker_1"]
        where: dict = {}
        for key in sorted((k for k in conv if re.fullmatch(r"session_\d+", k) and conv[k]), key=lambda k: int(k[8:])):
            when = lambda s: dt.datetime.strptime(s, "%d.%m.%Y, %H:%M:%S")
            start = when(conv[f"{key}_date_time"])
            sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"realtalk/{cid}/{key}"))
            fname = f"{start.strftime('%Y-%m-%d_%H%M%S')}_{sid[:8]}.md"
            msgs = [m for m in conv[key] if (m.get("clean_text") or "").strip()]
            turns = [(max(start, when(m["date_time"])), "User" if m["speaker"] == first else "Agent",
                      f"{m['speaker']}: {m['clean_text'].strip()}") for m in msgs]
            body, spans = render_session(sid, start.strftime("%Y-%m-%d"), "realtalk", f"/home/user/realtalk/{cid}", turns)
            (out / cid / fname).write_text(body)
            for m, (_h, a, b) in zip(msgs, spans):
                where[m["dia_id"]] = (fname, a, b)
        for qi, q in enumerate(conv.get("qa", [])):
            spans = [where[e] for e in q.get("evidence") or () if e in where]
            if not spans or len(spans) != len(q["evidence"]) or len({s[0] for s in spans}) != 1:
                continue
            questions.append({"id": f"{cid}-{qi}", "source": "realtalk", "kind": f"cat{q['category']}",
                              "query": q["question"], "session": f"realtalk/{cid}/{spans[0][0]}",
                              "lines": [[s[1], s[2]] for s in spans]})
    return questions


SPC_COMMIT = "1f367a0f05d388ca96ebbbc9e5752ab19ac76510"  # google-research-datasets/Synthetic-Persona-Chat


def spc(git: Path, out: Path) -> None:
    """Synthetic-Persona-Chat's valid and test conversations (CC BY 4.0), one session each
    under ``out``: many people stating the same kinds of facts — decoys, no questions. Dates
    spread over 2022-2025 by the conversation's hash (a year of related sessions)."""
    import csv
    import datetime as dt
    import hashlib
    import io
    import uuid

    from memfmt import render_session

    if not git.is_dir():
        print(f"Synthetic-Persona-Chat left out: no git mirror at {git}", file=sys.stderr)
        return
    for split in ("valid", "test"):
        text = subprocess.run(["git", "--git-dir", str(git), "show", f"{SPC_COMMIT}:data/Synthetic-Persona-Chat_{split}.csv"],
                              check=True, capture_output=True, text=True).stdout
        for i, row in enumerate(list(csv.reader(io.StringIO(text)))[1:]):
            sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"spc/{split}/{i}"))
            h = int(hashlib.sha256(sid.encode()).hexdigest()[:8], 16)
            start = dt.datetime(2022, 1, 1) + dt.timedelta(minutes=h % (4 * 365 * 24 * 60))
            turns = []
            for j, ln in enumerate(x for x in row[2].splitlines() if x.strip()):
                who, _, said = ln.partition(":")
                turns.append((start + dt.timedelta(seconds=30 * j), "User" if who.strip() == "User 1" else "Agent", ln.strip()))
            body, _ = render_session(sid, start.strftime("%Y-%m-%d"), "spc", f"/home/user/spc/{split}", turns)
            d = out / split
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{start.strftime('%Y-%m-%d_%H%M%S')}_{sid[:8]}.md").write_text(body)


def sessions_of(paths: list) -> list:
    """Distinct sessions in hit order."""
    seen: dict = {}
    for p in paths:
        seen.setdefault(p, None)
    return list(seen)


def fts5_db(vault: Path, tmp: str) -> sqlite3.Connection:
    from memfmt import parse_memory_text

    db = sqlite3.connect(os.path.join(tmp, "pooled.db"))
    db.execute("CREATE VIRTUAL TABLE turns USING fts5(text, file UNINDEXED, tokenize='porter unicode61')")
    for f in sorted(vault.rglob("*.md")):
        rel = str(f.relative_to(vault))
        db.executemany("INSERT INTO turns(text, file) VALUES (?,?)",
                       ((t.text, rel) for t in parse_memory_text(rel, f.read_text(errors="replace"))))
    db.commit()
    return db


def fts5_search(db, q: str) -> list:
    from memfmt import query_terms

    terms = query_terms(q)
    if not terms:
        return []
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    return [r[0] for r in db.execute("SELECT file FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT ?",
                                     (match, K))]


def search_row(sessions: list, answer: str) -> dict:
    rank = sessions.index(answer) + 1 if answer in sessions else None
    return {"rank": rank, "sessions": len(sessions)}


def holds_answer(excerpts: list, q: dict, vault: Path) -> bool:
    ans = str(vault / q["session"])
    return any(e["path"] == ans and any(e["start"] <= b and a <= e["end"] for a, b in q["lines"]) for e in excerpts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/chrollo-pooled")
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a chrollo.retrieval.tuning constant")
    ap.add_argument("--gate-set", action="append", default=[], metavar="NAME=VALUE", help="a chrollo.recall constant")
    ap.add_argument("--no-fts5", action="store_true")
    ap.add_argument("--no-gate", action="store_true")
    ap.add_argument("--no-index", action="store_true", help="search without the vault's index (results are the same; the hook's deadline reach is not)")
    ap.add_argument("--max-questions", type=int, default=0)
    ap.add_argument("--out-json")
    ap.add_argument("--features", action="store_true", help="keep each search's hits and the gate's trace in --out-json")
    ap.add_argument("--first-person", action="store_true",
                    help="ask as the vault's one owner would: no names (LoCoMo's speakers become 'I'/'my'; "
                         "REALTALK, whose questions use nicknames, left out; code as it is)")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    questions = json.loads(build(work, a.mirrors).read_text())
    if a.first_person:
        questions = first_person(questions, work / "locomo")
    if a.max_questions:
        questions = questions[:: max(1, len(questions) // a.max_questions)]
    vault = work / "vault"
    home = tempfile.mkdtemp(prefix="pooled_home_")
    os.environ.update(CHROLLO_HOME=home, CHROLLO_NOW=NOW)
    from chrollo import recall as rc
    from chrollo.retrieval import SearchOptions, search, tuning

    for kv in a.set:
        k, v = kv.split("=", 1)
        setattr(tuning, k, type(getattr(tuning, k))(eval(v)))
    for kv in a.gate_set:
        k, v = kv.split("=", 1)
        setattr(rc, k, type(getattr(rc, k))(eval(v)))
    if not a.no_index:  # (a real vault has its index: the hook builds it in the background)
        subprocess.run([sys.executable, "-m", "chrollo", "index", "--dir", str(vault)], check=True,
                       stdout=subprocess.DEVNULL)
    rows = []
    db = None if a.no_fts5 else fts5_db(vault, home)
    for i, q in enumerate(questions):
        row = {"id": q["id"], "source": q["source"], "kind": q["kind"]}
        t0 = time.perf_counter()
        res = search(q["query"], SearchOptions(limit=K, dir=str(vault)))
        row["ms"] = (time.perf_counter() - t0) * 1000
        row["chrollo"] = search_row(sessions_of([os.path.relpath(h.path, vault) for h in res.hits]), q["session"])
        if a.features:  # what a gate could decide by (bench analysis only)
            row["features"] = {"weights": res.weights, "terms": res.terms, "sessions": res.sessions,
                               "hits": [[os.path.relpath(h.path, vault), h.line, round(h.score, 4), h.terms] for h in res.hits]}
        if db is not None:
            row["fts5"] = search_row(sessions_of(fts5_search(db, q["query"])), q["session"])
        if not a.no_gate:
            trace: dict = {}
            text = rc.recall(q["query"], f"pooled-{i}", vault=str(vault), started=time.monotonic(), trace=trace, dry=True)
            row["gate"] = {"injected": bool(text), "holds": bool(text) and holds_answer(trace["excerpts"], q, vault),
                           "decision": trace.get("decision"), "signals": trace.get("signals")}
            if a.features:
                row["gate"]["trace"] = {k: trace.get(k) for k in ("terms", "best", "needed", "hits", "excerpts", "searched")}
        rows.append(row)
    shutil.rmtree(home, ignore_errors=True)
    report = summarize(rows, len({str(p.relative_to(vault)) for p in vault.rglob("*.md")}))
    if a.features:
        report["misses"] = misses(rows, {q["id"]: q["session"] for q in questions})
    print(render(report))
    if a.out_json:
        Path(a.out_json).write_text(json.dumps({"summary": report, "rows": rows}, indent=1))
    return 0


def first_person(questions: list, locomo: Path) -> list:
    """The questions as one person asks of a vault of their own (issue 43's held-out shape:
    LongMemEval's "What did I …", where no name singles a conversation out): in LoCoMo's,
    either speaker's name becomes I / my (a stopword: no word is added); REALTALK's are left out
    (they name people by nicknames its chats do not map); the code questions name nobody."""
    speakers = {}
    for f in locomo.glob("conv-*.json"):
        c = json.loads(f.read_text())
        speakers[c["conv"]] = (c["speaker_a"], c["speaker_b"])
    out = []
    for q in questions:
        if q["source"] == "realtalk":
            continue
        if q["source"] == "locomo":
            a, b = speakers[q["id"].rsplit("-", 1)[0]]
            text = q["query"]
            for name, subj, poss in ((a, "I", "my"), (b, "I", "my")):  # (no word added: "friend" would match everywhere)
                text = re.sub(rf"\b{re.escape(name)}(?:'s|’s)", poss, text)
                text = re.sub(rf"\b{re.escape(name)}\b", subj, text)
            q = {**q, "query": text}
        out.append(q)
    return out


def summarize(rows: list, n_sessions: int) -> dict:
    out = {"questions": len(rows), "sessions_in_vault": n_sessions, "by": {}}
    groups = {"all": rows, "locomo": [r for r in rows if r["source"] == "locomo"],
              "code": [r for r in rows if r["source"] == "code"],
              "realtalk": [r for r in rows if r["source"] == "realtalk"]}
    for g, rs in groups.items():
        if not rs:
            continue
        s: dict = {"n": len(rs)}
        for sysname in ("chrollo", "fts5"):
            if sysname not in rs[0]:
                continue
            ranks = [r[sysname]["rank"] for r in rs]
            s[sysname] = {"hit@1": _share(ranks, 1), "hit@5": _share(ranks, 5), "found@50": _share(ranks, 10 ** 9),
                          "sessions_per_call": round(statistics.mean(r[sysname]["sessions"] for r in rs), 1)}
        if "gate" in rs[0]:
            inj = [r for r in rs if r["gate"]["injected"]]
            good = sum(1 for r in inj if r["gate"]["holds"])
            s["gate"] = {"injection_rate": round(len(inj) / len(rs), 3),
                         "precision": round(good / len(inj), 3) if inj else None,
                         "recall_own": round(good / len(rs), 3)}
        s["search_p50_ms"] = round(statistics.median(r["ms"] for r in rs))
        out["by"][g] = s
    return out


def misses(rows: list, answers: dict) -> dict:
    """Why the answer's session is not first (needs ``--features``): how many rank-1 misses
    have their answer beyond the 50 hits, and, for the others, how the answer session's best
    line compares with the first hit's in the query terms it matches — the same terms, fewer
    (a subset), lighter or heavier in idf, more (a superset). Only 'heavier' and 'superset' are
    misses a weighting of the matched terms can mend; 'same' needs a tie-break."""
    out = dict.fromkeys(("not found", "same", "subset", "lighter", "heavier", "superset"), 0)
    for r in rows:
        if r["chrollo"]["rank"] == 1:
            continue
        hits, w = r["features"]["hits"], r["features"]["weights"]
        ans = next((h for h in hits if h[0] == answers[r["id"]]), None)
        if ans is None:
            out["not found"] += 1
            continue
        a, t = set(ans[3]), set(hits[0][3])
        heavier = sum(w.get(x, 0) for x in a) > sum(w.get(x, 0) for x in t)
        out["same" if a == t else "subset" if a < t else "superset" if a > t else "heavier" if heavier else "lighter"] += 1
    return out


def _share(ranks: list, k: int) -> float:
    return round(sum(1 for r in ranks if r is not None and r <= k) / max(1, len(ranks)), 3)


def render(rep: dict) -> str:
    lines = [f"{rep['questions']} questions, {rep['sessions_in_vault']} sessions pooled"]
    for g, s in rep["by"].items():
        parts = [f"{g:8s} n={s['n']}"]
        for sysname in ("chrollo", "fts5"):
            if sysname in s:
                x = s[sysname]
                parts.append(f"{sysname} hit@1 {x['hit@1']:.3f} hit@5 {x['hit@5']:.3f} found@50 {x['found@50']:.3f} "
                             f"sessions/call {x['sessions_per_call']}")
        if "gate" in s:
            x = s["gate"]
            parts.append(f"gate injected {x['injection_rate']:.3f} precision {x['precision']} recall@own {x['recall_own']:.3f}")
        parts.append(f"search p50 {s['search_p50_ms']} ms")
        lines.append(" | ".join(parts))
    if "misses" in rep:
        lines.append("rank-1 misses: " + ", ".join(f"{k} {v}" for k, v in rep["misses"].items()))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
