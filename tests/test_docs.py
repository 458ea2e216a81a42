"""The README is checked against the real CLI and CI script."""
from __future__ import annotations

import re

from chrollo.cli import cli
from conftest import ROOT

README = (ROOT / "README.md").read_text("utf-8")


def quickstart() -> list:
    block = README.split("## Quickstart", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [ln for ln in block.strip().splitlines() if ln.strip()]


def test_quickstart_is_two_commands_and_ci_runs_the_second():
    install, tests = quickstart()
    assert "pip install ." in install and install.endswith("chrollo demo")
    assert "pytest" in tests
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert tests in ci.splitlines(), ".ci/run must run the README's test command verbatim"


def test_every_command_and_search_option_is_documented():
    for name, cmd in cli.commands.items():
        assert f"`chrollo {name}" in README, f"command {name} missing from the README"
        for p in cmd.params:
            for opt in getattr(p, "opts", []):
                if opt.startswith("--") and opt != "--help":
                    assert opt in README, f"{name} {opt} missing from the README"


def test_documented_error_kinds_exist_in_the_code():
    kinds = set(re.findall(r"`([a-z_]+)`", README.split("Kinds:", 1)[1].split("\n\n", 1)[0]))
    src = "".join(p.read_text("utf-8") for p in (ROOT / "chrollo").rglob("*.py"))
    for k in kinds:
        assert f'"{k}"' in src, f"error kind {k} documented but never raised"
