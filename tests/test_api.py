"""The public Python API: the CLI only wraps these."""
from __future__ import annotations

import importlib


def test_public_names_are_functions_even_after_submodule_imports():
    import chrollo
    importlib.import_module("chrollo.retrieval")
    importlib.import_module("chrollo.vaultstats")
    importlib.import_module("chrollo.excerpt")
    from chrollo import read, search, stats
    assert callable(search) and search.__name__ == "search"
    assert callable(read) and read.__name__ == "read"
    assert callable(stats) and stats.__name__ == "stats"
    assert set(chrollo.__all__) >= {"search", "read", "stats", "append_turns", "read_session"}


def test_api_round_trip(home, tmp_path):
    import datetime as dt

    from chrollo import SessionMeta, ToolCall, Turn, append_turns, read, search, stats
    t = dt.datetime(2026, 10, 1, 9, 0, 0)
    path = append_turns(SessionMeta("api00000-x", t, "codex", "/w"),
                        [Turn.user("how do we rotate the signing key?", t),
                         Turn.agent([ToolCall("shell", "vault write -f transit/keys/app/rotate"),
                                     "Rotated the signing key with vault transit."], t)],
                        vault=tmp_path / "v")
    r = search("rotate signing key", dir=tmp_path / "v")
    assert r.hits and r.hits[0].path == str(path)
    ex = read(path, r.hits[0].line, turn=True, roots=[tmp_path / "v"])
    assert any("signing key" in ln["text"] for ln in ex.lines)
    st = stats(str(tmp_path / "v"))
    assert (st.sessions, st.turns) == (1, 2)
