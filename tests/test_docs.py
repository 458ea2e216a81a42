"""The README and docs/ are checked against the real CLI, the tree, the CI script and themselves."""
from __future__ import annotations

import re

import pytest

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


# ----------------------------------------------------------------------------- docs/cli.md
CLI_MD = (ROOT / "docs" / "cli.md").read_text("utf-8")


def cli_commands() -> dict:
    """{"mesh peers add": click command, …}: every command `chrollo --help` leads to (hidden ones
    left out, as help leaves them out)."""
    out = {}

    def walk(cmd, path):
        if path:
            out[" ".join(path)] = cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            if not sub.hidden:
                walk(sub, path + [name])

    walk(cli, [])
    return out


def cli_options(name: str, cmd) -> set:
    """The options of one command as `chrollo NAME --help` lists them (`chrollo hook` is parsed
    by chrollo/hook.py, not click: its options are those its own usage text names)."""
    import click

    opts = {o for p in cmd.params if isinstance(p, click.Option) and not p.hidden
            for o in p.opts + p.secondary_opts}
    if name == "hook":
        from chrollo.hook import USAGE

        opts |= set(re.findall(r"^\s+(--[a-z-]+)", USAGE, re.M))
    return opts - {"--help"}


def reference_sections(text: str = CLI_MD) -> dict:
    """{"mesh peers add": the section's text}: docs/cli.md's sections, one per command, each under
    a heading ``## `chrollo mesh peers add [HOST:PORT]` `` (the command's words, then its arguments)."""
    out = {}
    for heading, body in re.findall(r"^## `chrollo ([^`]*)`\n(.*?)(?=^## |\Z)", text, re.M | re.S):
        words = []
        for w in heading.split():
            if not re.fullmatch(r"[a-z][a-z-]*", w):
                break
            words.append(w)
        out[" ".join(words)] = body
    return out


def options_named(body: str, name: str | None = None) -> set:
    """The options a section names: `--long` and `-x` words in its code spans, but for a span
    that spells out another command (`chrollo stats --per week` in the section of `search`)."""
    spans = " ".join(s for s in re.findall(r"`([^`]*)`", body)
                     if name is None or not s.startswith("chrollo ") or s[8:].startswith(name))
    return set(re.findall(r"(?<![\w/-])(--[a-z][a-z-]*|-[a-zA-Z])(?![\w-])", spans))


def test_every_command_and_option_of_the_cli_is_in_the_reference():
    """docs/cli.md has a section for every command `chrollo --help` leads to (walking click's
    command tree), and each section names every option of its command."""
    sections = reference_sections()
    for name, cmd in cli_commands().items():
        assert name in sections, f"`chrollo {name}` has no section in docs/cli.md"
        missing = sorted(cli_options(name, cmd) - options_named(sections[name]))
        assert missing == [], f"`chrollo {name}`: options missing from docs/cli.md: {missing}"


def test_the_reference_documents_nothing_the_cli_lacks():
    """Every section of docs/cli.md is a real command, and every option a section names is one
    of that command's (an option renamed or removed in the code fails here)."""
    commands = cli_commands()
    for name, body in reference_sections().items():
        assert name in commands, f"docs/cli.md documents `chrollo {name}`, which is not a command"
        extra = sorted(options_named(body, name) - cli_options(name, commands[name]))
        assert extra == [], f"docs/cli.md's `chrollo {name}` names options it does not take: {extra}"


def commands_named(text: str) -> list:
    """The `chrollo WORD [WORD]` commands a page's code spans and code blocks name."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"^```[a-z]*\n.*?^```", "", text, flags=re.M | re.S))
    spans += [ln.strip() for b in blocks for ln in b.splitlines()]
    spans = [s[2:] if s.startswith("$ ") else s for s in spans]
    return [m.groups() for s in spans for m in [re.match(r"(?:\.venv/bin/)?chrollo ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?", s)] if m]


def test_every_command_the_docs_name_exists():
    """A `chrollo WORD …` in the README or any docs/ page names a real command (and
    `chrollo mesh WORD`, `chrollo recall WORD`, `chrollo mesh peers WORD` a real subcommand)."""
    commands = cli_commands()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for first, second in commands_named(page.read_text("utf-8")):
            assert first in commands, f"{page.relative_to(ROOT)} names `chrollo {first}`: no such command"
            if second and first in ("mesh", "recall"):
                assert f"{first} {second}" in commands, f"{page.relative_to(ROOT)} names `chrollo {first} {second}`"


def test_the_checks_see_an_undocumented_option_a_stale_one_and_a_command_that_is_not():
    """The reference checks fail on a planted omission: an option dropped from a section, a
    section naming an option the command lacks, a page naming a command there is not."""
    sections = reference_sections(CLI_MD.replace("`--no-pager`", "`no pager`"))
    assert "--no-pager" not in options_named(sections["read"])
    sections = reference_sections(CLI_MD + "\n## `chrollo index`\n\n- `--fast` — none\n")
    assert "--fast" in options_named(sections["index"]) - cli_options("index", cli_commands()["index"])
    assert ("serach", None) in commands_named("run `chrollo serach QUERY`")


def test_documented_error_kinds_exist_in_the_code():
    kinds = set(re.findall(r"`([a-z_]+)`", CLI_MD.split("Kinds:", 1)[1].split("\n\n", 1)[0]))
    assert len(kinds) > 20
    src = "".join(p.read_text("utf-8") for p in (ROOT / "chrollo").rglob("*.py"))
    for k in kinds:
        assert f'"{k}"' in src, f"error kind {k} documented but never raised"


# ----------------------------------------------------------------------------- design.md's module map
DESIGN = (ROOT / "docs" / "design.md").read_text("utf-8")


def map_block(text: str = DESIGN) -> str:
    return text.split("### Module map", 1)[1].split("```", 2)[1]


def layout_entries(block: str | None = None) -> list:
    """The paths docs/design.md's module map names (its first column)."""
    block = map_block() if block is None else block
    return [ln.split()[0] for ln in block.splitlines() if ln.strip() and not ln.startswith(" ")]


def layout_row(entry: str, block: str | None = None) -> str:
    """The module map's text for one entry (its first line and the indented lines under it)."""
    block = map_block() if block is None else block
    rows, current = {}, None
    for ln in block.splitlines():
        if ln.strip() and not ln.startswith(" "):
            current = ln.split()[0]
            rows[current] = ln[len(current):]
        elif current:
            rows[current] += " " + ln.strip()
    return rows[entry]


def unmapped_modules(block: str) -> list:
    """Every module under chrollo/ the map does not name — a top-level module by its path in the
    first column, a package by its folder there, a package's module by its name in the package's
    row — and every entry of the map that is not in the tree."""
    named = layout_entries(block)
    missing = [e for e in named if not (ROOT / e).exists()]
    pkg = ROOT / "chrollo"
    for p in sorted(pkg.rglob("*.py")):
        rel = p.relative_to(ROOT)
        if p.parent == pkg:
            if p.name != "__init__.py" and str(rel) not in named:
                missing.append(str(rel))
            continue
        folder = f"{p.parent.relative_to(ROOT)}/"
        if folder not in named:
            missing.append(folder)
        elif p.stem != "__init__" and not re.search(rf"\b{p.stem}\b", layout_row(folder, block)):
            missing.append(str(rel))
    return sorted(set(missing))


def test_the_module_map_names_every_module():
    """docs/design.md's module map names every module under chrollo/ (a package's modules in
    its row: a module renamed — mesh/trust.py became mesh/manifests.py — is renamed there too)
    and the repository's folders; nothing it names is missing from the tree."""
    named = layout_entries()
    assert "chrollo/layout.py" in named and "tests/" in named
    assert unmapped_modules(map_block()) == []
    folders = {f"{p.name}/" for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")
               and p.name not in ("chrollo", "build", "dist") and not p.name.endswith(".egg-info")}
    assert sorted(folders - set(named)) == []


def test_the_module_map_check_sees_a_module_missing_and_a_stale_entry():
    block = map_block()
    assert unmapped_modules(block.replace("chrollo/sha256.py", "chrollo/sha256x.py")) == ["chrollo/sha256.py", "chrollo/sha256x.py"]
    assert unmapped_modules(block.replace("(phrases: its", "(quotes: its")) == ["chrollo/retrieval/phrases.py"]


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


MEMORY_MD = (ROOT / "docs" / "memory.md").read_text("utf-8")


def _samples(section: str) -> dict:
    """docs/memory.md's section's sample blocks by command: {"$ chrollo …": [output lines]}."""
    text = MEMORY_MD.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    out = {}
    for block in re.findall(r"```\n(\$ chrollo [^\n]*)\n(.*?)```", text, re.S):
        out[block[0]] = block[1].splitlines()
    return out


def _shown(lines: list) -> str:
    """A sample's lines as a pattern: a line "…" alone stands for any lines, the rest verbatim."""
    return "".join(r"(?:[^\n]*\n)*?" if ln == "…" else re.escape(ln.rstrip()) + r"\n" for ln in lines)


def test_the_look_at_your_memory_samples_are_real(tmp_path):
    """Each view's sample in docs/memory.md's "Look at your memory" is what the real CLI prints, piped, on the
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
        assert re.fullmatch(_shown(samples[cmd]), got), f"docs/memory.md's sample of `{cmd[2:]}` is not what it prints:\n{got}"
    # the stable schema of `sessions --json` the section shows: the keys the command prints
    text = MEMORY_MD.split("## Look at your memory", 1)[1].split("\n## ", 1)[0]
    shown = json.loads(re.search(r"```json\n(\{.*?\})\n```", text, re.S).group(1).replace("…", ""))
    real = json.loads(chrollo(["sessions", "-n", "1", "--json"]))
    assert set(shown) == set(real) and set(shown["sessions"][0]) == set(real["sessions"][0])


# ----------------------------------------------------------------------------- links
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# the pages of measurements, whose scripts read the evaluation kit beside the checkout (not in
# the repository: docs/benchmarks.md says so): the one path outside it they may name
EVAL_KIT_PAGES = ("docs/benchmarks.md", "docs/ranking.md", "docs/devset-any-language.md", "docs/pooled.md",
                  "docs/measurements/")


def _prose(text: str) -> str:
    """The text without code blocks and code spans (where a `[x](y)` is not a link)."""
    return re.sub(r"`[^`\n]*`", "", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S))


def links_of(text: str) -> list:
    """The targets of a page's markdown links."""
    return re.findall(r"\]\(([^)\s]+)\)", _prose(text))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", "")).replace(" ", "-")


def anchors(page) -> set:
    return {slug(h) for h in re.findall(r"^#{1,6} (.*)$", re.sub(r"^```.*?^```", "", page.read_text("utf-8"), flags=re.M | re.S), re.M)}


def broken_links(page, text: str) -> list:
    """Each link of ``text`` (the page's) that leaves the repository, names a file that is not
    there, or an anchor its page does not have; and any other `../` path the text names."""
    bad = []
    for target in links_of(text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if ROOT not in dest.parents and dest != ROOT:
            bad.append(f"{target}: outside the repository")
        elif not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    rest = re.sub(r"\]\([^)\s]+\)", "]", text)
    kit = str(page.relative_to(ROOT)).startswith(EVAL_KIT_PAGES)
    bad += [f"names {m.group(0)}…: a path outside the repository" for m in re.finditer(r"\.\./[\w.-]*/?[\w.-]*", rest)
            if not (kit and m.group(0).startswith("../shared/eval"))]
    return bad


def test_no_link_leaves_the_repository_and_every_link_resolves():
    """README and docs/: every relative link names a file of the repository (and a heading of
    it, with an anchor); no page points at a folder beside the checkout (`../shared/…`) that a
    user does not have — but the measurement pages at the evaluation kit, said to be outside."""
    for page in PAGES:
        assert broken_links(page, page.read_text("utf-8")) == [], page.relative_to(ROOT)


def test_the_link_check_sees_a_link_out_a_missing_page_and_a_missing_anchor():
    page = ROOT / "docs" / "mesh.md"
    assert len(broken_links(page, "see [the sketch](../../shared/DESIGN.md) and ../shared/x")) == 2
    assert broken_links(page, "[a](nowhere.md)") == ["nowhere.md: no such file"]
    assert broken_links(page, "[b](privacy.md#no-such-heading)")[0].startswith("privacy.md#no-such-heading: no heading")
    assert broken_links(page, "[c](privacy.md#what-chrollo-keeps-and-where) [d](../tests/test_mesh.py)") == []


def test_every_page_of_docs_is_reached_from_the_readme():
    """The README's contents lead to every page under docs/ (directly or through a page it links)."""
    seen, todo = set(), [ROOT / "README.md"]
    while todo:
        page = todo.pop()
        if page in seen or page.suffix != ".md" or not page.exists():
            continue
        seen.add(page)
        todo += [(page.parent / t.partition("#")[0]).resolve() for t in links_of(page.read_text("utf-8"))
                 if not re.match(r"[a-z]+:", t) and t.partition("#")[0]]
    assert sorted(str(p.relative_to(ROOT)) for p in PAGES if p not in seen) == []


# ----------------------------------------------------------------------------- runnable examples
def runnable_examples() -> list:
    """[(page, vault, body)]: every example a page marks runnable — a ```console block right
    after ``<!-- runnable -->`` (run on a copy of the bundled sample memory) or ``<!-- runnable:
    empty vault -->``; in it ``$ chrollo …`` lines are commands, the lines after one its output."""
    out = []
    for page in PAGES:
        for vault, body in re.findall(r"^<!-- runnable(?:: ([a-z ]+))? -->\n```console\n(.*?)^```",
                                      page.read_text("utf-8"), re.M | re.S):
            out.append((str(page.relative_to(ROOT)), vault or "sample", body))
    return out


def run_example(body: str, vault: str, tmp_path) -> None:
    """Run an example's commands in order, offline, as a user in /home/me would (the real CLI,
    piped, from the repository's root, on 2026-10-26): each exits 0 and prints what the example
    shows ("…" alone on a line: any lines)."""
    import shlex
    import shutil
    import subprocess
    import sys

    from conftest import cli_env

    me = tmp_path / "me"
    home = me / ".chrollo"
    me.mkdir()
    if vault == "sample":
        shutil.copytree(ROOT / "chrollo" / "data" / "demo", home / "memories")
    env = cli_env(home, HOME=me, CHROLLO_NOW="2026-10-26T12:00:00")
    for k in ("COLUMNS", "LINES", "PAGER", "CHROLLO_PAGER"):
        env.pop(k, None)
    steps: list = []
    for ln in body.splitlines():
        if ln.startswith("$ "):
            steps.append((ln[2:], []))
        else:
            assert steps, f"output before a command: {ln!r}"
            steps[-1][1].append(ln)
    assert steps
    for cmd, shown in steps:
        args = shlex.split(cmd)
        assert args[0] in ("chrollo", ".venv/bin/chrollo"), f"not a chrollo command: {cmd}"
        p = subprocess.run([sys.executable, "-m", "chrollo", *args[1:]], capture_output=True, text=True,
                           cwd=ROOT, env=env, timeout=120)
        assert p.returncode == 0, (cmd, p.stderr)
        got = "".join(ln.rstrip() + "\n" for ln in p.stdout.replace(str(me), "/home/me").splitlines())
        assert re.fullmatch(_shown(shown), got), f"`{cmd}` prints:\n{got}"


@pytest.mark.parametrize("page,vault,body", runnable_examples(), ids=lambda v: v if v.endswith(".md") else "")
def test_runnable_examples_run_offline_and_print_what_they_show(page, vault, body, tmp_path):
    run_example(body, vault, tmp_path)


def test_there_are_runnable_examples_and_a_stale_one_fails(tmp_path):
    examples = runnable_examples()
    assert {"README.md", "docs/cli.md", "docs/import.md"} <= {page for page, _, _ in examples}
    page, vault, body = next(e for e in examples if e[0] == "README.md" and "\n  imported  2\n" in e[2])
    with pytest.raises(AssertionError, match="prints"):
        run_example(body.replace("\n  imported  2\n", "\n  imported  3\n"), vault, tmp_path)
