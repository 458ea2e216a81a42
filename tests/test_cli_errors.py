"""Error envelope and exit codes: stdout is data, stderr diagnostics, 1 runtime, 2 usage."""
from __future__ import annotations

import json
import os
import sys

import pytest

from conftest import run, run_json, without_root_bypass, write_session


def envelope(p, kind, code):
    assert p.returncode == code, (p.stdout, p.stderr)
    out = json.loads(p.stdout)
    assert set(out) == {"error"} and set(out["error"]) == {"kind", "message", "hint"}
    assert out["error"]["kind"] == kind
    return out["error"]


def test_missing_vault(home, tmp_path):
    p = run(["search", "anything", "--dir", tmp_path / "nope", "--json"], home)
    err = envelope(p, "vault_not_found", 1)
    assert "nope" in err["message"] and "chrollo demo" in err["hint"]
    p = run(["search", "anything"], home)  # the default vault does not exist yet
    assert p.returncode == 1 and p.stdout == ""
    assert "vault not found" in p.stderr and "hint:" in p.stderr


def test_unreadable_file_keeps_partial_results(home, tmp_path):
    vault = tmp_path / "v"
    write_session(vault, "okfile00-x", "2026-10-01T10:00:00", [("user", "10:00:00", "secret sauce recipe")])
    bad = write_session(vault, "badfile0-x", "2026-10-02T10:00:00", [("user", "10:00:00", "secret sauce too")])
    bad.chmod(0)
    prefix = without_root_bypass()
    p, out = run_json(["search", "sauce", "--dir", vault], home, prefix=prefix)
    assert p.returncode == 0
    assert [h["session_id"] for h in out["hits"]] == ["okfile00-x"]
    assert any("Permission denied" in w for w in out["warnings"])
    assert "warning" in p.stderr and bad.name in p.stderr
    # nothing readable at all: a runtime error, not an empty success
    next(vault.glob("*okfile00*")).chmod(0)
    p = run(["search", "sauce", "--dir", vault, "--json"], home, prefix=prefix)
    envelope(p, "rg_error", 1)


def test_missing_rg(home, tmp_path):
    vault = tmp_path / "v"
    write_session(vault, "norg0000-x", "2026-10-01T10:00:00", [("user", "10:00:00", "needs ripgrep")])
    # A Python whose folder holds no rg, and a PATH without one: the real lookup fails.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(os.path.realpath(sys.executable))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    from conftest import ROOT
    env.update(PATH=str(bindir), CHROLLO_HOME=str(home),
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in sys.path if p]))
    import subprocess
    p = subprocess.run([str(bindir / "python3"), "-m", "chrollo", "search", "ripgrep", "--dir", str(vault),
                        "--json"], capture_output=True, text=True, env=env)
    err = envelope(p, "rg_not_found", 1)
    assert "pip install 'ripgrep>=14.1,<15'" in err["hint"]
    p = run(["search", "ripgrep", "--dir", vault], home, CHROLLO_RG=tmp_path / "no-rg")
    assert p.returncode == 1 and "CHROLLO_RG" in p.stderr


@pytest.mark.parametrize("fake", ["/bin/false", "/bin/true"])
def test_rg_that_does_not_search_is_an_error_not_no_matches(home, tmp_path, fake):
    # #33 item 11: a CHROLLO_RG that exits without searching (1 = rg's "no match", or 0)
    # is an rg_error, never an empty success
    vault = tmp_path / "v"
    write_session(vault, "fakerg00-x", "2026-10-01T10:00:00", [("user", "10:00:00", "a real match here")])
    p = run(["search", "match", "--dir", vault, "--json"], home, CHROLLO_RG=fake)
    err = envelope(p, "rg_error", 1)
    assert fake in err["message"] and "CHROLLO_RG" in err["hint"]
    p = run(["search", "match", "--dir", vault], home, CHROLLO_RG=fake)
    assert p.returncode == 1 and p.stdout == "" and "no matches" not in p.stderr
    assert "Traceback" not in p.stderr and "CHROLLO_RG" in p.stderr


@pytest.mark.parametrize("args,kind", [
    (["search", "x", "--limit", "0"], "bad_limit"),
    (["search", "x", "--limit", "abc"], "usage"),
    (["search", "x", "--context", "-1"], "bad_context"),
    (["search", "x", "--since", "last tuesday"], "bad_date"),
    (["search", "x", "--since", "2026-10-02", "--until", "2026-10-01"], "bad_date"),
    (["search", "x", "--all-vaults", "--dir", "."], "bad_usage"),
    (["search", "x", "--peer", "../etc"], "bad_peer"),
    (["search", "x", "--peer", "a", "--no-peers"], "bad_usage"),
    (["search", "x", "--bogus"], "usage"),
    (["search"], "usage"),
    (["read", "x.md:0"], "bad_line"),
])
def test_usage_errors_exit_2_with_envelope(home, tmp_path, args, kind):
    vault = tmp_path / "v"
    vault.mkdir()
    p = run([*args, "--dir", vault, "--json"], home)
    envelope(p, kind, 2)
    plain = run([*args, "--dir", vault], home)
    assert plain.returncode == 2 and plain.stdout == "" and plain.stderr.strip()


def test_help_and_version(home):
    p = run(["--help"], home)
    assert p.returncode == 0 and "chrollo demo" in p.stdout
    for cmd in ("search", "read", "stats", "demo"):
        h = run([cmd, "--help"], home)
        assert h.returncode == 0 and "Usage: chrollo " + cmd in h.stdout
    v = run(["--version"], home)
    assert v.returncode == 0 and "0.1.0" in v.stdout


def test_broken_pipe_is_quiet(home, tmp_path):
    vault = tmp_path / "v"
    for i in range(9):
        write_session(vault, f"pipe{i:04d}-x", f"2026-10-0{i + 1}T10:00:00",
                      [("user", "10:00:00", "pipe test line\n" * 40)])
    import subprocess
    from conftest import cli_env
    p = subprocess.run(f"{sys.executable} -m chrollo search pipe --dir '{vault}' | head -1",
                       shell=True, capture_output=True, text=True, env=cli_env(home))
    assert p.stdout.startswith("---") and "Traceback" not in p.stderr


@pytest.mark.parametrize("command", ["search", "sessions", "mesh sync"])
def test_fast_paths_mirror_the_click_commands(command):
    """`chrollo search`, `chrollo sessions` and `chrollo mesh sync` skip importing click; their
    option tables must match the click commands."""
    from chrollo.cli import cli
    from chrollo.entry import FAST

    options, defaults = FAST[command][:2]
    group, _, sub = command.partition(" ")
    clicked = cli.commands[group].commands[sub] if sub else cli.commands[group]
    click_opts = {o for p in clicked.params for o in getattr(p, "opts", []) if o.startswith("-")}
    assert click_opts == set(options)
    for p in clicked.params:
        if p.name not in ("query", "peer"):  # (the positional words)
            default = None if type(p.default).__name__ == "Sentinel" else p.default  # click 8.3 UNSET
            assert (defaults[p.name] or None) == (default or None), p.name


@pytest.mark.parametrize("args", [
    ["search", "backup", "policy"],
    ["search", "backup", "--json", "-n", "1", "--context=1"],
    ["search", "--limit", "2", "backup", "--no-peers", "--json"],
    ["search", "what", "is", "it"],
    ["search", "zzz", "--json"],
    ["search", "x", "--limit", "0", "--json"],
    ["search", "x", "--since", "nope"],
    ["search", "x", "--peer", "a", "--no-peers", "--json"],
    ["sessions"],
    ["sessions", "--json", "-n", "1"],
    ["sessions", "--limit=0", "--harness", "claude-code", "--no-peers", "--since", "2026-09-01", "--until", "7d"],
    ["sessions", "--project", "project", "--json"],
    ["sessions", "--harness", "nobody"],
    ["sessions", "-n", "-1", "--json"],
    ["sessions", "--since", "nope", "--json"],
    ["sessions", "--peer", "a", "--no-peers"],
    ["sessions", "--peer", "nobody", "--json"],
    ["sessions", "stray"],
    ["mesh", "sync", "--json"],
    ["mesh", "sync", "--all"],
    ["mesh", "sync", "--all", "--json"],
    ["mesh", "sync", "laptop", "--all", "--json"],
    ["mesh", "sync", "--git", "r", "--folder", "f", "--json"],
    ["mesh", "sync", "--all", "--timeout", "0.5", "--json"],
    ["mesh", "sync", "one", "two", "--json"],
])
def test_fast_and_click_paths_agree(home, tmp_path, args):
    import subprocess
    from conftest import cli_env
    vault = tmp_path / "v"
    write_session(vault, "same0000-x", "2026-10-01T10:00:00", [("user", "10:00:00", "backup policy")])
    full = [*args, "--dir", str(vault)]
    fast = subprocess.run([sys.executable, "-m", "chrollo", *full], capture_output=True, text=True,
                          env=cli_env(home))
    slow = subprocess.run([sys.executable, "-c", f"from chrollo.cli import main; main({full!r})"],
                          capture_output=True, text=True, env=cli_env(home))
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    if "--json" in args:
        json.loads(fast.stdout)
