"""The pooled dev instrument's miss classes (bench/pooled.py ``misses``, docs/pooled.md): what
decides whether a rank-1 miss is one a weighting of the matched words could mend."""
from __future__ import annotations

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def pooled():
    spec = importlib.util.spec_from_file_location("pooled", BENCH / "pooled.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(qid: str, rank, hits: list) -> dict:
    weights = {"lgbtq": 5.0, "support": 2.7, "group": 3.1, "go": 1.0}
    return {"id": qid, "chrollo": {"rank": rank},
            "features": {"weights": weights, "hits": [[path, 1, 1.0, terms] for path, terms in hits]}}


def test_each_miss_lands_in_its_class():
    top = ("other.md", ["lgbtq", "support"])
    rows = [
        row("first", 1, [("ans.md", ["go"])]),  # found first: not a miss
        row("nowhere", None, [top]),
        row("same", 2, [top, ("ans.md", ["support", "lgbtq"])]),
        row("subset", 2, [top, ("ans.md", ["support"])]),
        row("superset", 2, [top, ("ans.md", ["lgbtq", "support", "group"])]),
        row("heavier", 2, [top, ("ans.md", ["lgbtq", "group"])]),  # 8.1 against 7.7
        row("lighter", 2, [top, ("ans.md", ["support", "go"])]),  # 3.7 against 7.7
    ]
    answers = {r["id"]: "ans.md" for r in rows}
    assert pooled().misses(rows, answers) == {"not found": 1, "same": 1, "subset": 1, "lighter": 1,
                                              "heavier": 1, "superset": 1}
