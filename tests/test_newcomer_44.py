"""#44: what a newcomer found — silent, wrong and misleading answers — each a test that failed first."""
from __future__ import annotations

import json
import re
import os
from pathlib import Path

import pytest

from conftest import run, run_json, write_session


@pytest.mark.parametrize("key,value", [("recall-log-days", "100000"), ("recall-log-days", "0.5"),
                                       ("recall-log-max-mb", "20000"), ("recall-log-max-mb", "0.001")])
def test_an_out_of_range_setting_is_a_usage_error_and_changes_nothing(home, key, value):
    """A value chrollo would ignore (keeping the default) is refused, exit 2, and the settings
    file is not written."""
    r, err = run_json(["config", key, value], home)
    assert r.returncode == 2 and err["error"]["kind"] == "usage", (r.stdout, r.stderr)
    assert "range" in err["error"]["message"]
    assert not (home / "privacy.json").exists() or key.replace("-", "_") not in (home / "privacy.json").read_text()
    ok_value = {"recall-log-days": "36500", "recall-log-max-mb": "10000"}[key]
    r, out = run_json(["config", key, ok_value], home)
    assert r.returncode == 0 and out == {key: int(ok_value)}


def test_commands_work_from_a_deleted_working_folder(home, tmp_path):
    """A shell left in a folder that was since removed: no project vault can be found there, so
    the global vault is used — not "No such file or directory … check the path you gave"."""
    write_session(home / "memories", "aaaa1111-x", "2026-10-27T09:00:00",
                  [("user", "09:00:00", "the quokka deployment"), ("agent", "09:00:05", ["done"])])
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os, sys; os.makedirs(sys.argv[1], exist_ok=True); os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
            "from chrollo.entry import main; sys.argv = ['chrollo'] + sys.argv[2:]; main()")
    import subprocess
    import sys

    from conftest import cli_env

    user = tmp_path / "user"  # (doctor looks at the harnesses' homes: this test's own, empty)
    user.mkdir()
    env = cli_env(home, HOME=user, CLAUDE_CONFIG_DIR=user / ".claude", CODEX_HOME=user / ".codex",
                  GEMINI_CLI_HOME=user, PI_CODING_AGENT_DIR=user / ".pi" / "agent")

    def chrollo(*args):
        return subprocess.run([sys.executable, "-c", code, str(gone), *args], capture_output=True, text=True,
                              env=env, cwd=str(tmp_path), timeout=60)

    s = chrollo("search", "quokka")
    assert s.returncode == 0 and "quokka" in s.stdout, s.stderr
    for args in (["stats"], ["sessions"], ["doctor"], ["config"], ["search", "quokka", "--all-vaults"]):
        p = chrollo(*args)
        assert "No such file or directory" not in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)
        assert p.returncode in (0, 1) and (p.returncode == 0 or "error" in p.stderr), (args, p.stderr)
    p = chrollo("init")
    assert p.returncode != 0 and "working folder" in p.stderr and "check the path you gave" not in p.stderr.lower()


def test_an_os_error_without_a_path_does_not_ask_to_check_the_path_you_gave():
    """"Check the path you gave" only when the error names a path; a full disk says so."""
    import errno

    from chrollo.console import os_error

    named = os_error(OSError(errno.ENAMETOOLONG, "File name too long", "/x/" + "y" * 300))
    assert "path you gave" in named.hint and named.exit_code == 1
    bare = os_error(OSError(errno.EIO, "Input/output error"))
    assert "path you gave" not in bare.hint and bare.message == "Input/output error"
    full = os_error(OSError(errno.ENOSPC, "No space left on device"))
    assert "disk is full" in full.hint


def _one_session(home) -> Path:
    return write_session(home / "memories", "aaaa1111-x", "2026-10-27T09:00:00",
                         [("user", "09:00:00", "first question"), ("agent", "09:00:05", ["first answer"]),
                          ("user", "09:01:00", "second question"), ("agent", "09:01:05", ["second answer"])])


def test_read_of_a_line_past_the_end_is_an_error(home):
    """`read FILE:99999` showed the last line as if it were line 99999."""
    f = _one_session(home)
    n = len(f.read_text().splitlines())
    r, err = run_json(["read", f"{f}:99999"], home)
    assert r.returncode == 2 and err["error"]["kind"] == "bad_line" and f"has {n} lines" in err["error"]["message"]
    r, out = run_json(["read", f"{f}:{n}"], home)
    assert r.returncode == 0 and out["line"] == n


@pytest.mark.parametrize("value", ["0", "x"])
def test_read_turn_zero_or_not_a_number_is_a_usage_error(home, value):
    """`read ID --turn 0` showed turn 1."""
    _one_session(home)
    r, err = run_json(["read", "aaaa1111", "--turn", value], home)
    assert r.returncode == 2 and err["error"]["kind"] == "bad_turn", (r.stdout, r.stderr)
    r, out = run_json(["read", "aaaa1111", "--turn", "2"], home)
    assert r.returncode == 0 and [t["n"] for t in out["turns"]] == [2]
    r, out = run_json(["read", "aaaa1111", "--turn"], home)  # (bare: the first)
    assert r.returncode == 0 and [t["n"] for t in out["turns"]] == [1]


def test_install_config_in_a_missing_folder_is_refused_and_creates_nothing(home, tmp_path):
    """A mistyped `install --config` path (its folder does not exist) created the folders and
    reported success: now a usage error, nothing created, nothing recorded."""
    cfg = tmp_path / "no-such" / "deeper" / "settings.json"
    r, err = run_json(["install", "claude-code", "--config", cfg], home, HOME=tmp_path / "h")
    assert r.returncode == 2 and err["error"]["kind"] == "bad_config", (r.stdout, r.stderr)
    assert str(cfg.parent) in err["error"]["message"]
    assert not (tmp_path / "no-such").exists()
    assert not (home / "state" / "install").exists() or not list((home / "state" / "install").iterdir())


def test_folders_install_creates_for_a_harness_config_are_owner_only(home, tmp_path):
    """The harness's own config folder, when install has to create it, is 0700 (it was 0755)."""
    fake = tmp_path / "h"
    fake.mkdir()
    r = run(["install", "gemini"], home, HOME=fake)
    assert r.returncode == 0, r.stderr
    assert (fake / ".gemini" / "settings.json").is_file()
    assert (fake / ".gemini").stat().st_mode & 0o777 == 0o700


def test_import_of_an_old_chrollo_vault_counts_its_turns(home, tmp_path):
    """`import chrollo-vault` reported 0 turns for sessions it copied."""
    old = tmp_path / "old"
    old.mkdir()
    legacy = ("---\nsession_id: old-1\n---\n\n[10:00:00] [User] what is the deploy command\n"
              "[10:00:05] [Agent]\n> make deploy\n[10:01:00] [User] thanks\n")
    (old / "2025-01-02_100000_old-1.md").write_text(legacy)
    write_session(old, "bbbb2222-x", "2026-10-27T09:00:00",
                  [("user", "09:00:00", "q"), ("agent", "09:00:05", ["a"])], fmt=2)
    r, out = run_json(["import", "chrollo-vault", "--source", old], home)
    assert r.returncode == 0 and out["imported"] == 2 and out["turns"] == 5, out
    human = run(["import", "chrollo-vault", "--source", old], tmp_path / "other-home")
    assert re.search(r"turns +5\n", human.stdout), human.stdout


@pytest.mark.parametrize("budget", ["huge", "100", "99999", "-5"])
def test_recall_why_with_a_budget_it_cannot_take_is_a_usage_error(home, budget):
    """`recall why --budget huge` used medium, and 100 became 500, silently."""
    r, err = run_json(["recall", "why", "how does the backup job work", "--budget", budget], home)
    assert r.returncode == 2 and err["error"]["kind"] in ("bad_usage", "usage"), (r.stdout, r.stderr)
    assert "--budget" in err["error"]["message"] or "-5" in err["error"]["message"]


@pytest.mark.parametrize("session", ["--json", "../etc", "", " "])
def test_recall_why_with_a_session_that_is_no_session_id_is_a_usage_error(home, session):
    """`recall why refund --session --json ID` took "--json" for the session (click gives an
    option's value whatever it looks like) and printed text: the long fuzz run's one failure."""
    r, err = run_json(["recall", "why", "refund", "--session", session, "--json"], home)
    assert r.returncode == 2 and err["error"]["kind"] == "bad_usage" and "--session" in err["error"]["message"], \
        (r.stdout, r.stderr)


def test_recall_why_takes_presets_and_numbers_in_range(home):
    for budget in ("large", "Small", "500", "9500"):
        r, out = run_json(["recall", "why", "how does the backup job work", "--budget", budget], home)
        assert r.returncode == 0, (budget, r.stderr)
    assert out["budget"]["chars"] == 9500


def test_one_of_a_thing_is_said_in_the_singular(home):
    """"1 sessions", "1 files": each count of one that a command prints is singular."""
    _one_session(home)
    one = re.compile(r"(?<![\d.,])1 (sessions|files|session files|prompts|characters|errors|hook errors)\b")
    outs = [run(args, home) for args in (["index"], ["stats"], ["doctor"],
                                          ["recall", "why", "what was the first question"])]
    for p in outs:
        assert not one.search(p.stdout + p.stderr), (p.args, one.search(p.stdout + p.stderr).group(0))
    assert "indexed 1 file of" in outs[0].stdout


def test_a_deleted_project_vault_points_at_init_not_demo(home, tmp_path):
    """A trusted project whose .chrollo/memories was deleted: the error names `chrollo init`
    for that project, not `demo`/`install`."""
    import shutil

    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    assert run(["init", project], home).returncode == 0
    shutil.rmtree(project / ".chrollo" / "memories")
    for args in (["search", "anything"], ["stats"], ["sessions"]):
        r, err = run_json(args, home, cwd=project)
        assert r.returncode == 1 and err["error"]["kind"] == "vault_not_found", (args, r.stdout)
        assert f"chrollo init {project}" in err["error"]["hint"] and "demo" not in err["error"]["hint"]


def test_reimport_after_state_loss_finds_a_session_whose_id_ends_in_dash_digits(home, tmp_path):
    """Found by the fuzzer's interrupted imports: a session id such as "fault-0008" is named
    "…_fault-00.md", and the vault's listing took "-00" for a collision suffix, so an import
    that no longer had the session's state (killed after creating the file; state/ is
    disposable) did not find the file and wrote the session again as "…_fault-00-2.md"."""
    import shutil

    src = tmp_path / "chats"
    src.mkdir()
    for sid in ("fault-0008", "tool-0001"):
        (src / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [
            {"role": "user", "content": f"question of {sid}", "timestamp": "2026-05-01T10:00:00Z", "session_id": sid},
            {"role": "assistant", "content": "an answer", "timestamp": "2026-05-01T10:00:05Z"}]))
    r, out = run_json(["import", "jsonl", "--source", src], home)
    assert r.returncode == 0 and out["imported"] == 2
    before = sorted(p.name for p in (home / "memories").glob("*.md"))
    shutil.rmtree(home / "state")
    r, out = run_json(["import", "jsonl", "--source", src], home)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (home / "memories").glob("*.md")) == before
