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


def layout_entries() -> list:
    """The paths the README's Layout block names (its first column)."""
    block = README.split("## Layout", 1)[1].split("```", 2)[1]
    return [ln.split()[0] for ln in block.splitlines() if ln.strip() and not ln.startswith(" ")]


def test_the_layout_table_matches_the_tree():
    named = layout_entries()
    assert "chrollo/layout.py" in named and "tests/" in named
    for entry in named:
        assert (ROOT / entry).exists(), f"the README's Layout names {entry}, which is not in the tree"
    modules = {f"chrollo/{p.name}" for p in (ROOT / "chrollo").glob("*.py") if p.name != "__init__.py"}
    packages = {f"chrollo/{p.name}/" for p in (ROOT / "chrollo").iterdir() if (p / "__init__.py").exists()}
    missing = sorted((modules | packages) - set(named))
    assert missing == [], f"modules missing from the README's Layout: {missing}"
    folders = {f"{p.name}/" for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")
               and p.name not in ("chrollo", "build", "dist") and not p.name.endswith(".egg-info")}
    assert sorted(folders - set(named)) == []


def layout_row(entry: str) -> str:
    """The Layout block's text for one entry (its first line and the indented lines under it)."""
    block = README.split("## Layout", 1)[1].split("```", 2)[1]
    rows, current = {}, None
    for ln in block.splitlines():
        if ln.strip() and not ln.startswith(" "):
            current = ln.split()[0]
            rows[current] = ln[len(current):]
        elif current:
            rows[current] += " " + ln.strip()
    return rows[entry]


def test_the_mesh_and_harness_rows_name_each_of_their_modules():
    """The two packages whose Layout row lists its modules list every one, by its file's name
    (a module renamed — mesh/trust.py became mesh/manifests.py — is renamed there too)."""
    for pkg in ("mesh", "harness"):
        row = layout_row(f"chrollo/{pkg}/")
        files = sorted(p.stem for p in (ROOT / "chrollo" / pkg).glob("*.py") if p.stem != "__init__")
        assert files and [f for f in files if not re.search(rf"\b{f}\b", row)] == [], pkg


def test_trust_names_one_thing_each():
    """#29 item 6: project opt-in, Codex's hook hashes and the mesh's signed manifests live in
    modules whose names tell them apart; no module is called just ``trust``."""
    names = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "chrollo").rglob("*trust*.py"))
    assert names == ["chrollo/harness/codex_hook_trust.py", "chrollo/project_trust.py"]
    assert (ROOT / "chrollo" / "mesh" / "manifests.py").is_file()


def test_the_code_cites_the_design_in_the_repository():
    design = (ROOT / "docs" / "design.md").read_text("utf-8")
    sections = set(re.findall(r"^## (\d+)\. ", design, re.M))
    cited = []
    for p in list((ROOT / "chrollo").rglob("*.py")) + list((ROOT / "tests").glob("*.py")):
        text = p.read_text("utf-8")
        assert "DESIGN " + "§" not in text, f"{p.name} cites a design that is not in the repository"
        for group in re.findall(r"docs/design\.md ((?:§\d+(?:, )?)+)", text):
            cited += re.findall(r"§(\d+)", group)
    assert cited and set(cited) <= sections, set(cited) - sections
