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
    for pkg in ("mesh", "harness", "index", "repository"):
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


def _samples(section: str) -> dict:
    """The README section's sample blocks by command: {"$ chrollo …": [output lines]}."""
    text = README.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    out = {}
    for block in re.findall(r"```\n(\$ chrollo [^\n]*)\n(.*?)```", text, re.S):
        out[block[0]] = block[1].splitlines()
    return out


def _shown(lines: list) -> str:
    """A sample's lines as a pattern: a line "…" alone stands for any lines, the rest verbatim."""
    return "".join(r"(?:[^\n]*\n)*?" if ln == "…" else re.escape(ln.rstrip()) + r"\n" for ln in lines)


def test_the_look_at_your_memory_samples_are_real(tmp_path):
    """Each view's sample in "Look at your memory" is what the real CLI prints, piped, on the
    bundled sample memory (a copy, in /home/me/.chrollo): sessions, read and recall why first,
    then two prompts through the real recall hook (one recalls, one does not) on 2026-10-26,
    then stats' chart and the recall log. A line "…" in a sample elides lines."""
    import json
    import shlex
    import shutil
    import subprocess
    import sys

    from conftest import cli_env

    me = tmp_path / "me"
    home = me / ".chrollo"
    shutil.copytree(ROOT / "chrollo" / "data" / "demo", home / "memories")
    env = cli_env(home, HOME=me, CHROLLO_NOW="2026-10-26T12:00:00")
    for k in ("COLUMNS", "LINES", "PAGER", "CHROLLO_PAGER"):
        env.pop(k, None)

    def chrollo(args, now=None, stdin=None):
        p = subprocess.run([sys.executable, "-m", "chrollo", *args], capture_output=True, text=True, input=stdin,
                           cwd=me, timeout=120, env={**env, **({"CHROLLO_NOW": now} if now else {})})
        assert p.returncode == 0, (args, p.stderr)
        return "".join(ln.rstrip() + "\n" for ln in p.stdout.replace(str(me), "/home/me").splitlines())

    samples = _samples("Look at your memory")
    views = ["sessions", "read", "recall why", "stats", "recall log"]
    assert sorted(next(v for v in views if cmd[len("$ chrollo "):].startswith(v)) for cmd in samples) == sorted(views)
    order = sorted(samples, key=lambda cmd: next(i for i, v in enumerate(views) if cmd[len("$ chrollo "):].startswith(v)))
    why = next(cmd for cmd in samples if cmd.startswith("$ chrollo recall why"))
    prompt = shlex.split(why)[-1]
    for cmd in order:
        if cmd.startswith("$ chrollo stats"):  # (after the sessions, the read and the why)
            for text, at in ((prompt, "2026-10-26T09:30:00"), ("thanks, that was it", "2026-10-26T09:31:00")):
                chrollo(["hook", "UserPromptSubmit", "--harness", "claude-code"], at, json.dumps(
                    {"session_id": "4c7d2e1a-9b3f-4d2e-8a1c-6f5e4d3c2b1a", "transcript_path": None,
                     "cwd": str(me / "payments"), "hook_event_name": "UserPromptSubmit", "prompt": text}))
        got = chrollo(shlex.split(cmd)[2:])
        assert re.fullmatch(_shown(samples[cmd]), got), f"README's sample of `{cmd[2:]}` is not what it prints:\n{got}"
    # the stable schema of `sessions --json` the section shows: the keys the command prints
    text = README.split("## Look at your memory", 1)[1].split("\n## ", 1)[0]
    shown = json.loads(re.search(r"```json\n(\{.*?\})\n```", text, re.S).group(1).replace("…", ""))
    real = json.loads(chrollo(["sessions", "-n", "1", "--json"]))
    assert set(shown) == set(real) and set(shown["sessions"][0]) == set(real["sessions"][0])
