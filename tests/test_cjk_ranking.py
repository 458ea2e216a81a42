"""#47: the ranking of a query beyond ASCII (docs/design.md §5 "Any language", "Ranking").

Found on the any-language dev set (docs/devset-any-language.md): Japanese questions whose
answers sit in a few very long sessions. Each test is the method, on a vault made for it,
through the real CLI. (An ASCII query's ranking is untouched: the English dev sets' --json is
compared byte for byte, see docs/devset-any-language.md.)"""
from __future__ import annotations

from conftest import run_json, write_session


def search(home, vault, query: str, limit: int = 10) -> list:
    p, out = run_json(["search", query, "--dir", vault, "--limit", limit], home)
    assert p.returncode == 0, p.stderr
    return out["hits"]


def anchor(hit: dict) -> str:
    return next(c["text"] for c in hit["context"] if c["match"])


def test_a_line_of_the_questions_content_word_ranks_above_one_sharing_only_its_grammar(home, tmp_path):
    """Hiragana writes Japanese grammar (particles, endings): `どう` of `認証はどうした` says
    less than `認証`. In a vault of two sessions every term's idf is the same, so without a
    prior the newer session's `どうぞ` ranked first."""
    v = tmp_path / "v"
    write_session(v, "a0000001-x", "2026-10-01T10:00:00", [("user", "10:00:00", "認証エラーが出た")])
    write_session(v, "b0000002-x", "2026-10-30T10:00:00", [("user", "10:00:00", "どうぞよろしく")])
    got = search(home, v, "認証はどうした")
    assert [h["session_id"] for h in got] == ["a0000001-x", "b0000002-x"]


def test_a_line_repeated_word_for_word_is_one_hit(home, tmp_path):
    """An export that restates its prompts (SpecStory's do) filled the top ten with copies of
    one line; a copy adds nothing the first shows, and the answer was pushed out."""
    v = tmp_path / "v"
    prompt = "デプロイの手順を教えてください"
    turns = []
    for i in range(5):
        turns += [("user", f"10:{i:02d}:00", prompt),
                  ("agent", f"10:{i:02d}:30", [f"第{i}版の確認を進めます", "少々お待ちください", "以上です"])]
    write_session(v, "a0000001-x", "2026-10-01T10:00:00", turns)
    write_session(v, "b0000002-x", "2026-09-01T10:00:00", [
        ("user", "10:00:00", "本番への反映は？"), ("agent", "10:00:30", "デプロイは make deploy で行います")])
    got = search(home, v, "デプロイの手順", limit=3)
    assert [anchor(h) for h in got][:2] == [prompt, "> デプロイは make deploy で行います"]


def test_a_long_turns_weight_reaches_past_the_first_sixty_candidates(home, tmp_path):
    """The turn-length weight (rank.by_turn_length) lowers lines of long turns; a candidate
    beyond its pool kept its full score and passed the better line it had lowered. A CJK
    question is many bigram terms, its candidates many masks: the pool is POOL for it."""
    v = tmp_path / "v"
    long_turn = [f"ログ {i} 行目" for i in range(3000)]
    body = long_turn[:1000] + ["接続 設定 障害 をまとめた"] + long_turn[1000:2000] + ["接続 の件"] + long_turn[2000:]
    write_session(v, "g0000001-x", "2026-10-30T10:00:00", [("user", "10:00:00", "まとめて"), ("agent", "10:00:30", body)])
    for i in range(17):  # 68 candidates of two terms, four per session, one hit each
        write_session(v, f"f{i:07d}-x", f"2026-10-{i + 1:02d}T10:00:00", [
            ("user", "10:00:00", "\n".join(["接続 設定 一", "接続 設定 二", "接続 設定 三", "接続 設定 四"])),
            ("agent", "10:00:30", ["了解", *[f"メモ {j}" for j in range(12)], "障害 なし"])])
    texts = [anchor(h) for h in search(home, v, "接続 設定 障害", limit=50)]
    best, one = texts.index("> 接続 設定 障害 をまとめた"), texts.index("> 接続 の件")
    assert best < one
