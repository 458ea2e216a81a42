"""`chrollo read` (windows, turns, confinement) and `chrollo stats`."""
from __future__ import annotations

import json

from conftest import ToolCall, run, run_json, write_session


def _vault(tmp_path):
    vault = tmp_path / "v"
    p = write_session(vault, "readme00-x", "2026-10-01T10:00:00", [
        ("user", "10:00:00", "first question"),
        ("agent", "10:00:05", [ToolCall("Bash", "make"), "line a\nline b\nline c"]),
        ("user", "10:01:00", "second question")])
    return vault, p


def test_read_window_relative_and_absolute(home, tmp_path):
    vault, p = _vault(tmp_path)
    r, out = run_json(["read", f"{p.name}:16", "--dir", vault, "-B", "1", "-A", "1"], home)
    assert r.returncode == 0
    assert [(x["line"], x["text"], x["match"]) for x in out["lines"]] == [
        (15, "> <tool>$ make</tool>", False), (16, "> line a", True), (17, "> line b", False)]
    assert out["date"] == "2026-10-01 10:00:05" and out["session_id"] == "readme00-x"
    r2, out2 = run_json(["read", f"{p}:16", "--dir", vault, "-B", "1", "-A", "1"], home)
    assert out2["lines"] == out["lines"]
    plain = run(["read", f"{p.name}:16", "--dir", vault], home)
    assert "→ 16  > line a" in plain.stdout


def test_read_turn(home, tmp_path):
    vault, p = _vault(tmp_path)
    r, out = run_json(["read", f"{p.name}:17", "--turn", "--dir", vault], home)
    assert (out["start"], out["end"]) == (14, 18)
    assert out["lines"][0]["text"] == "[2026-10-01 10:00:05] [Agent]"
    assert out["lines"][-1]["text"] == "> line c"


def test_read_refuses_escapes(home, tmp_path):
    vault, p = _vault(tmp_path)
    outside = tmp_path / "secret.md"
    outside.write_text("top secret\n")
    (vault / "link.md").symlink_to(outside)
    for target in [str(outside), "../secret.md", "link.md"]:
        r = run(["read", target, "--dir", vault, "--json"], home)
        assert r.returncode == 1, target
        assert json.loads(r.stdout)["error"]["kind"] == "outside_vault"
        assert "top secret" not in r.stdout
    r = run(["read", "missing.md:3", "--dir", vault, "--json"], home)
    assert r.returncode == 1 and json.loads(r.stdout)["error"]["kind"] == "file_not_found"


def test_stats(home, tmp_path):
    vault, _ = _vault(tmp_path)
    write_session(vault, "other000-x", "2026-10-05T10:00:00", [("user", "10:00:00", "hi there")], harness="codex")
    write_session(vault / "peers" / "desk", "peer0000-x", "2026-09-01T10:00:00",
                  [("user", "10:00:00", "from a peer"), ("agent", "10:00:01", ["ok"])])
    r, out = run_json(["stats", "--dir", vault], home)
    assert r.returncode == 0
    assert (out["sessions"], out["turns"]) == (3, 6)
    assert (out["first"], out["last"]) == ("2026-09-01", "2026-10-05")
    assert out["harnesses"]["codex"]["sessions"] == 1
    assert out["harnesses"]["claude-code"] == {"sessions": 2, "turns": 5, "bytes": out["harnesses"]["claude-code"]["bytes"]}
    assert out["peers"]["desk"]["sessions"] == 1 and out["peers"]["local"]["sessions"] == 2
    assert out["bytes"] == sum(f.stat().st_size for f in vault.rglob("*.md"))
    plain = run(["stats", "--dir", vault], home)
    assert "sessions  3" in plain.stdout and "desk" in plain.stdout
