"""`chrollo read SESSION`: the whole conversation, by file, id or id prefix; --turn, --last,
--raw; coloured and paged on a terminal (a real pty), plain when piped."""
from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys

from conftest import ToolCall, cli_env, run, run_json, write_session


def _vault(tmp_path):
    vault = tmp_path / "v"
    p = write_session(vault, "0a1b2c3d-4e5f-x", "2026-10-01T10:00:00", [
        ("user", "10:00:00", "why is the deploy slow?"),
        ("agent", "10:00:05", [ToolCall("Bash", "make deploy"), "the image is rebuilt\nevery time"]),
        ("user", "10:01:00", "[10:00:00] [User] is not a header here"),
        ("agent", "10:01:09", ["cache the layers"])], cwd="/home/user/shop", fmt=2)
    write_session(vault, "0a1b9999-x", "2026-10-02T10:00:00", [("user", "10:00:00", "another")])
    return vault, p


def test_whole_conversation_by_id_prefix_file_and_id(home, tmp_path):
    vault, p = _vault(tmp_path)
    r = run(["read", "0a1b2c", "--dir", vault], home)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.splitlines()[0] == "why is the deploy slow?"
    assert "── 1 · User · 2026-10-01 10:00:00 · line" in out and "── 4 · Agent · 2026-10-01 10:01:09" in out
    assert "  ⏺ $ make deploy\nthe image is rebuilt\nevery time\n" in out  # unquoted, tools marked
    assert "\n[10:00:00] [User] is not a header here\n" in out  # the escape undone for reading
    assert "\x1b[" not in out  # piped: no colours
    assert run(["read", p.name, "--dir", vault], home).stdout == out
    assert run(["read", str(p), "--dir", vault], home).stdout == out
    assert run(["read", "0a1b2c3d-4e5f-x", "--dir", vault], home).stdout == out


def test_turn_last_raw_and_json(home, tmp_path):
    vault, p = _vault(tmp_path)
    r, out = run_json(["read", "0a1b2c3d", "--dir", vault], home)
    assert out["total_turns"] == 4 and [t["n"] for t in out["turns"]] == [1, 2, 3, 4]
    assert set(out) == {"path", "session_id", "title", "project", "harness", "peer", "started", "total_turns", "turns"}
    assert set(out["turns"][0]) == {"n", "role", "timestamp", "line", "last_line", "text", "tools"}
    assert out["turns"][1]["tools"] == ["<tool>$ make deploy</tool>"] and out["project"] == "shop"
    r, out = run_json(["read", "0a1b2c3d", "--turn", "2", "--dir", vault], home)
    assert [t["n"] for t in out["turns"]] == [2] and out["turns"][0]["text"] == "the image is rebuilt\nevery time"
    r, out = run_json(["read", "0a1b2c3d", "--last", "2", "--dir", vault], home)
    assert [t["n"] for t in out["turns"]] == [3, 4]
    raw = subprocess.run([sys.executable, "-m", "chrollo", "read", "0a1b2c3d", "--raw", "--dir", str(vault)],
                         capture_output=True, env=cli_env(home), cwd=home.parent)
    assert raw.returncode == 0 and raw.stdout == p.read_bytes()
    last = subprocess.run([sys.executable, "-m", "chrollo", "read", "0a1b2c3d", "--raw", "--last", "1", "--dir",
                           str(vault)], capture_output=True, env=cli_env(home), cwd=home.parent).stdout
    assert last.startswith(b"## [2026-10-01 10:01:09] [Agent]\n") and p.read_bytes().endswith(last.rstrip(b"\n") + b"\n\n\n")


def test_unknown_or_ambiguous_session_exits_1_with_a_clear_message(home, tmp_path):
    vault, _ = _vault(tmp_path)
    r = run(["read", "feedbeef", "--dir", vault], home)
    assert r.returncode == 1 and "no session matches 'feedbeef'" in r.stderr and r.stdout == ""
    r = run(["read", "0a1b", "--dir", vault, "--json"], home)
    assert r.returncode == 1 and json.loads(r.stdout)["error"]["kind"] == "ambiguous"
    r = run(["read", "0a1b2c3d", "--turn", "9", "--dir", vault, "--json"], home)
    assert r.returncode == 1 and json.loads(r.stdout)["error"]["kind"] == "bad_turn"
    r = run(["read", "0a1b2c3d", "--turn", "1", "--last", "1", "--dir", vault, "--json"], home)
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["kind"] == "bad_usage"


def test_path_line_still_reads_a_window(home, tmp_path):
    vault, p = _vault(tmp_path)
    r, out = run_json(["read", f"{p.name}:25", "--turn", "--dir", vault], home)
    assert out["line"] == 25 and out["lines"][0]["text"].startswith("## [2026-10-01")


def _on_a_terminal(home, args, lines: int, **env) -> tuple[str, int]:
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "chrollo", *map(str, args)], stdout=slave, stdin=slave,
                            stderr=subprocess.PIPE, env=cli_env(home, COLUMNS="100", LINES=str(lines),
                                                                TERM="xterm-256color", **env),
                            cwd=str(home.parent))
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 60)
        if not r:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        out += data
    proc.wait(timeout=60)
    os.close(master)
    return out.decode("utf-8", "replace"), proc.returncode


def test_pager_and_colours_on_a_terminal(home, tmp_path):
    vault, _ = _vault(tmp_path)
    paged = tmp_path / "paged.txt"
    pager = f"cat > {paged}"
    # longer than the screen: through the pager, with colours
    out, code = _on_a_terminal(home, ["read", "0a1b2c3d", "--dir", vault], 10, PAGER=pager)
    assert code == 0 and paged.exists()
    text = paged.read_text()
    assert "\x1b[" in text and "cache the layers" in text and "why is the deploy slow?" in text
    assert "cache the layers" not in out
    # fits the screen: printed, coloured, no pager
    paged.unlink()
    out, code = _on_a_terminal(home, ["read", "0a1b2c3d", "--dir", vault], 60, PAGER=pager)
    assert code == 0 and not paged.exists() and "\x1b[" in out and "cache the layers" in out
    # --no-pager, and PAGER=cat: never paged
    out, code = _on_a_terminal(home, ["read", "0a1b2c3d", "--dir", vault, "--no-pager"], 10, PAGER=pager)
    assert not paged.exists() and "cache the layers" in out
    out, code = _on_a_terminal(home, ["read", "0a1b2c3d", "--dir", vault], 10, PAGER="cat")
    assert "cache the layers" in out
    # sessions on a terminal: coloured too
    out, code = _on_a_terminal(home, ["sessions", "--dir", vault], 60)
    assert code == 0 and "\x1b[" in out and "0a1b2c3d" in out


def test_a_hostile_session_cannot_reach_the_terminal(home, tmp_path):
    vault = tmp_path / "v"
    write_session(vault, "7e7e7e7e-x", "2026-10-01T10:00:00", [
        ("user", "10:00:00", "look \x1b]52;c;cm0gLXJmIH4=\x07 here"), ("agent", "10:00:01", ["\x1b[2J gone"])])
    paged = tmp_path / "paged.txt"
    _on_a_terminal(home, ["read", "7e7e7e7e", "--dir", vault], 5, PAGER=f"cat > {paged}")
    text = paged.read_text()
    assert "]52;" in text and "\x1b]52" not in text and "\x1b[2J" not in text and "␛" in text


def test_bulk_sanitizing_is_the_sanitizer():
    """The megabyte paths (read's pager, --json) make text inert exactly as clean() does."""
    import random

    from chrollo.sanitize import _JSON_TABLE, clean, clean_lines, json_text

    chars = [chr(c) for c in [*range(0, 0x250), 0x2028, 0x2029, 0x202A, 0x202E, 0x2066, 0x2069, 0xE0041,
                              0xE007F, 0x1F600]]
    rnd = random.Random(7)
    for _ in range(20):
        text = "".join(rnd.choice(chars) for _ in range(70_000))
        assert json_text(text) == text.translate(_JSON_TABLE)
        lines = text.split("\n")
        assert clean_lines(lines) == "\n".join(clean(x) for x in lines)


def test_stats_chart_and_recall_log_are_coloured_on_a_terminal_only_and_never_paged_when_piped(home, tmp_path):
    vault, session = _vault(tmp_path)
    out, code = _on_a_terminal(home, ["stats", "--dir", vault, "--since", "2026-09-28", "--by", "harness"], 60)
    chart = next(ln for ln in out.splitlines() if "2026-09-28" in ln and "█" in ln)
    assert code == 0 and "\x1b[" in chart  # the bars are coloured by harness
    (home / "logs").mkdir(parents=True)
    (home / "logs" / "recall.jsonl").write_text(json.dumps(
        {"time": "2026-10-31T09:00:00", "harness": "codex", "session": "feed0000-x", "prompt": "why is the deploy slow",
         "excerpts": [{"path": str(session), "line": 9, "start": 8, "end": 12, "chars": 120}], "chars": 120}) + "\n")
    out, code = _on_a_terminal(home, ["recall", "log"], 60)
    assert code == 0 and "why is the deploy slow" in out and "\x1b[" in out
    assert "\x1b" not in run(["recall", "log"], home).stdout
    paged = tmp_path / "paged.txt"
    r = run(["read", "0a1b2c3d", "--dir", vault], home, PAGER=f"cat > {paged}", LINES="5")
    assert r.returncode == 0 and not paged.exists() and "cache the layers" in r.stdout and "\x1b" not in r.stdout
    piped = run(["stats", "--dir", vault, "--since", "2026-09-28", "--by", "harness"], home).stdout
    assert "█" in piped and "\x1b" not in piped
