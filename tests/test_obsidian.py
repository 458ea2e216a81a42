"""Format 2 as Obsidian shows it (docs/design.md §4), chrollo.base, and search unchanged by the frontmatter.

What Obsidian shows is checked with the tools it agrees with: PyYAML for the properties
(Obsidian's frontmatter is YAML), a CommonMark renderer (markdown-it-py) for the outline.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import re
import shutil
import sys

import pytest
import yaml
from markdown_it import MarkdownIt

from chrollo import obsidian
from chrollo.retrieval import collect, pipeline, tuning
from chrollo.excerpt import read
from chrollo import fileformat
from chrollo.fileformat import parse_frontmatter
from chrollo.recall import Passage, _forms
from chrollo.retrieval import search
from chrollo.session import SessionMeta, SessionWriter, ToolCall, Turn, read_session
from conftest import write_session
from hookkit import hook, ok

T = dt.datetime(2026, 9, 2, 10, 15, 0)
LINK = re.compile(r"^\[\[[^\[\]|#^]+\]\]$")


def split(path):
    """(properties, raw frontmatter lines, body) the way Obsidian splits a note."""
    text = path.read_text("utf-8")
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(head), head.split("\n"), body


def outline(body: str) -> list:
    """The headings CommonMark finds in a note's body: (level, text), in order."""
    tokens = MarkdownIt("commonmark").parse(body)
    return [(int(t.tag[1]), tokens[i + 1].content) for i, t in enumerate(tokens) if t.type == "heading_open"]


def write(vault, sid, when, turns, cwd="/home/user/shop", parent=None, harness="claude-code", fmt=2):
    meta = SessionMeta(sid, when, harness, cwd, parent_session=parent, machine="laptop")
    return SessionWriter(meta, vault, fsync=False, fmt=fmt).append(turns)


@pytest.fixture
def sessions(home, tmp_path):
    """Three sessions of one project (the last a subagent of the second), one of another."""
    v = tmp_path / "v"
    a = write(v, "aaaa1111-0000", T, [
        Turn.user("## Fix the **login** bug in `auth.py`\nit [[breaks]] on empty passwords", T),
        Turn.agent([ToolCall("Bash", "pytest tests/test_auth.py"), "Fixed: empty passwords are refused."],
                   T + dt.timedelta(seconds=9))])
    other = write(v, "cccc3333-0000", T + dt.timedelta(hours=1), [Turn.user("unrelated project work", T)],
                  cwd="/home/user/blog")
    b = write(v, "bbbb2222-0000", T + dt.timedelta(days=1), [
        Turn.user("now add rate limiting to the login endpoint\n[2026-01-01 00:00:00] [User]\n"
                  "## [2026-01-01 00:00:00] [Agent]", T + dt.timedelta(days=1)),
        Turn.agent(["Added a token bucket."], T + dt.timedelta(days=1, seconds=5))])
    sub = write(v, "dddd4444-0000", T + dt.timedelta(days=1, seconds=2),
                [Turn.user("research token buckets", T + dt.timedelta(days=1, seconds=2))],
                parent="bbbb2222-0000")
    return v, a, other, b, sub


def test_format_2_properties_outline_and_links(sessions):
    v, a, other, b, sub = sessions
    assert a.name == "2026-09-02_101500_fix_the_login_bug_in_auth_py_it_breaks_on_empty_aaaa1111.md"
    props, raw, body = split(b)
    assert props["title"] == "now add rate limiting to the login endpoint 2026-01-01 00:00:00 User…"
    assert props["aliases"] == [props["title"]]
    assert props["tags"] == ["chrollo", "claude-code", "shop"]
    assert type(props["date"]) is dt.date and props["date"] == dt.date(2026, 9, 3)
    assert type(props["started"]) is dt.datetime and props["started"] == dt.datetime(2026, 9, 3, 10, 15)
    assert props["chrollo_format"] == 2 and props["session_id"] == "bbbb2222-0000"
    assert props["project"] == "[[shop]]" and props["day"] == "[[2026-09-03]]"
    assert props["previous"] == f"[[{a.stem}]]"  # not the other project's session in between
    sprops, sraw, _ = split(sub)
    assert sprops["parent"] == f"[[{b.stem}]]" and "previous" not in sprops
    assert "previous" not in split(a)[0] and "parent" not in split(a)[0]
    for p, r in ((props, raw), (sprops, sraw)):
        for key in ("project", "previous", "parent", "day"):
            if key in p:
                assert LINK.match(p[key]), p[key]
                assert f'{key}: "{p[key]}"' in r  # quoted: unquoted [[x]] is a YAML list
    for target in (props["previous"], sprops["parent"]):
        assert (v / (target[2:-2] + ".md")).is_file()
    # the outline: one heading per turn, and user text that looks like a header is not one
    assert outline(body) == [(2, "[2026-09-03 10:15:00] [User]"), (2, "[2026-09-03 10:15:05] [Agent]")]
    assert [t.text for t in read_session(b).turns][0].endswith("## [2026-01-01 00:00:00] [Agent]")
    # the title: one line, bounded, no markup or link syntax, every word from the prompt
    title = split(a)[0]["title"]
    assert title == "Fix the **login** bug in auth.py it breaks on empty passwords"
    for t in (title, props["title"]):
        assert "\n" not in t and len(t) <= obsidian.TITLE_CHARS and not re.search(r"[\[\]|#^`]", t)


def test_what_chrollo_writes_is_read_as_yaml_reads_it_without_yaml(sessions, tmp_path, monkeypatch):
    """parse_frontmatter reads format 2's lists and dates itself, exactly as PyYAML does
    (PyYAML is pure Python, ~10x slower, and search parses every file it shows)."""
    hostile = write(tmp_path / "h", "eeee5555-0000", T, [Turn.user(
        "\u202eevil\u200b [[x|y]] ../../etc/passwd\x1b[31m: not: a key # nor a comment", T)])
    files = [*sessions[1:], hostile]
    want = [split(f)[0] for f in files]
    monkeypatch.setitem(sys.modules, "yaml", None)  # (importing it now fails)
    for f, props in zip(files, want):
        lines = f.read_text().split("\n")
        assert parse_frontmatter(lines) == (props, lines.index("---", 1) + 1)


def test_a_frontmatter_yaml_cannot_read_is_no_error(home, tmp_path):
    """A hand-edited or crafted frontmatter with an impossible date (PyYAML raises ValueError
    there, not YAMLError) has no properties; its conversation is searched as usual."""
    f = tmp_path / "v" / "2026-09-02_100000_abcd1234.md"
    f.parent.mkdir()
    f.write_text('---\nsession_id: "x"\ndate: 2026-02-30\ntags:\n  - x\n---\n\n[2026-09-02 10:00:00] [User]\nthe walrus\n')
    assert parse_frontmatter(f.read_text().split("\n")) == ({}, 6)
    assert [h.line for h in search("walrus", dir=f.parent).hits] == [9]


def test_hostile_first_prompt_makes_a_safe_title_and_name(home, tmp_path):
    prompt = "\u202eevil\u200b [[x|y]] ../../etc/passwd\x1b[31m " + "w" * 300 + "\nsecond line"
    p = write(tmp_path / "v", "eeee5555-0000", T, [Turn.user(prompt, T)])
    assert p.parent == tmp_path / "v"
    assert re.fullmatch(r"2026-09-02_101500_[a-z0-9_]{1,48}_eeee5555\.md", p.name), p.name
    title = split(p)[0]["title"]
    assert len(title) <= obsidian.TITLE_CHARS and not re.search(r"[\x00-\x1f\u200b\u202e\[\]|]", title)
    key = write(tmp_path / "v", "abab7777-0000", T, [Turn.user("use sk_live_51H8xQpL2eZvKYlo2C9a8bT7 here", T)])
    assert key.name == "2026-09-02_101500_use_sk_live_here_abab7777.md"  # no key-like token in a name
    nonascii = write(tmp_path / "v", "ffff6666-0000", T, [Turn.user("東京の天気", T)])
    assert nonascii.name == "2026-09-02_101500_ffff6666.md"  # no ASCII word: no slug
    assert split(nonascii)[0]["title"] == "東京の天気"


def test_read_turn_and_recall_excerpts_work_on_headings(sessions):
    v, a, other, b, sub = sessions
    r = search("empty passwords refused", dir=v)
    hit = r.hits[0]
    assert hit.path == str(a) and "refused" in a.read_text().split("\n")[hit.line - 1]
    assert all(c["line"] >= read_session(a).body_start for c in hit.context)  # no frontmatter
    ex = read(a, hit.line, turn=True, roots=[v])
    assert ex.lines[0]["text"] == "## [2026-09-02 10:15:09] [Agent]"
    assert ex.lines[-1]["text"] == "> Fixed: empty passwords are refused."
    r = search("login bug", dir=v)
    lines = Passage.around(r.hits[-1], {}, _forms(r)).text()  # what recall would inject
    assert not any(ln.startswith(("title:", "aliases:", "---", "  - ")) for ln in lines)


# ----------------------------------------------------------------------------- frontmatter rows never count

def test_a_title_never_counts_as_a_second_match(home, tmp_path, monkeypatch):
    """The title and its alias repeat the first prompt's words (and gather words that are far
    apart in it onto one line); they add nothing to a score, a neighbourhood or a total."""
    monkeypatch.setattr(tuning, "NEIGHBOR_LINES", 25)  # a window that reaches the title
    gap = "\n" * 30  # "login" and "auth bug" too far apart in the prompt to be neighbours
    turns = [Turn.user("login" + gap + "auth bug", T), Turn.agent(["checked the flow"], T + dt.timedelta(seconds=9))]
    got = {}
    for fmt in (1, 2):
        f = write(tmp_path / f"f{fmt}", f"9999000{fmt}-0000", T, turns, fmt=fmt)
        assert ('title: "login auth bug"' in f.read_text()) == (fmt == 2)
        r = search("login bug auth", dir=f.parent, expand="never", limit=3)
        body = read_session(f).body_start
        got[fmt] = [(h.line - body, h.score, h.terms) for h in r.hits], r.total_matches, r.weights
    assert got[2] == got[1]
    hits, total, _w = got[2]
    assert total == 3  # each word once: the prompt's, not the title's or the alias's
    (_l1, best, terms1), (_l2, login, terms2) = hits
    assert (terms1, terms2) == (["bug", "auth"], ["login"])
    assert best == pytest.approx(2 * login, abs=1e-3)  # equal weights, and no neighbour bonus for "login"


def _frontmatter_lines(path) -> set:
    lines = path.read_bytes().decode().replace("\r", "").split("\n")
    return set(lines[:parse_frontmatter(lines)[1]])


@pytest.fixture
def fm_vault(home, tmp_path):
    """Sessions whose frontmatters hold words their conversations do not: a project, a
    harness, a machine, property names, another session's title slug (in `previous`), and a
    hand-edited frontmatter (CRLF, a YAML list, a 5 KB property); a legacy file without one."""
    v = tmp_path / "v"
    first = write(v, "aaaa1111-0000", T, [Turn.user("profile the zeppelin queries", T),
                                         Turn.agent(["Added an index."], T + dt.timedelta(seconds=5))],
                  cwd="/w/quokka", harness="codex")
    second = write(v, "bbbb2222-0000", T + dt.timedelta(days=1),
                   [Turn.user("unrelated words here", T + dt.timedelta(days=1))], cwd="/w/quokka")
    assert "_profile_the_zeppelin_queries_" in second.read_text()  # (in its `previous` link)
    old = write(v, "cccc3333-0000", T + dt.timedelta(days=2),
                [Turn.user("more unrelated words", T + dt.timedelta(days=2))], cwd="/w/quokka", fmt=1)
    edited = v / "2026-09-05_100000_dddd4444.md"
    edited.write_bytes("\r\n".join([
        "---", 'session_id: "dddd4444-0000"', "tags:", "  - quokka", "  - zeppelin",
        "notes: " + "zeppelin queries " * 300, "---", "", "[2026-09-05 10:00:00] [User]",
        "nothing to see", ""]).encode())
    legacy = v / "2026-03-01_090000_eeee5555.md"
    legacy.write_text("[09:00:00] [User] the zeppelin landed\n[09:00:09] [Agent]\n> yes\n")
    return v, first, second, old, edited, legacy


@pytest.mark.parametrize("query", ["quokka", "codex", "laptop", "aliases started project",
                                   "machine harness cwd", "session", "chrollo tags"])
def test_words_only_in_frontmatters_find_nothing(fm_vault, query):
    r = search(query, dir=fm_vault[0], expand="never")
    assert (r.hits, r.total_matches) == ([], 0)


def test_hits_never_point_at_frontmatter_lines(fm_vault):
    v, first, second, old, edited, legacy = fm_vault
    r = search("zeppelin queries quokka", dir=v, expand="never", context=10)
    assert {h.path for h in r.hits} == {str(first), str(legacy)}
    for h in r.hits:
        start = read_session(h.path).body_start
        assert h.line >= start and all(c["line"] >= start for c in h.context)
    # what the conversations hold, nothing else: zeppelin in 2 of the 5 files, queries in 1
    assert r.total_matches == 3
    n = len(list(v.glob("*.md")))
    assert r.weights["zeppelin"] == pytest.approx(math.log(1 + n / 2))
    assert r.weights["queries"] == pytest.approx(math.log(1 + n / 1))
    assert r.weights["quokka"] == 0.0


def test_recall_never_quotes_frontmatter(home, tmp_path):
    """Recall quotes conversations only — even from a crafted file whose frontmatter holds the
    prompt's words and a line that looks like a turn header (a reply's lookup for the message
    it answers walks up into it)."""
    v = home / "memories"
    mine = write(v, "aaaa1111-0000", T, [
        Turn.user("kubernetes ingress certificate renewal keeps failing", T),
        Turn.agent(["The ingress certificate renewal needed the DNS challenge."], T + dt.timedelta(seconds=9))])
    crafted = v / "2026-09-03_100000_bbbb2222.md"
    crafted.write_text("\n".join([
        "---", 'session_id: "bbbb2222-0000"', "date: 2026-09-03", "summary: |",
        "[2026-09-03 09:00:00] [User]", "kubernetes ingress certificate renewal", "---", "",
        "[2026-09-03 10:00:00] [Agent]", "> The kubernetes ingress certificate renewal runs nightly now.", ""]))
    for i in range(6):  # filler, so that idf means something
        write(v, f"f111000{i}-0000", T - dt.timedelta(days=i + 1), [Turn.user(f"update the changelog {i}", T)])
    p = hook(home, "claude-code", "UserPromptSubmit", {
        "session_id": "live0000", "transcript_path": None, "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
        "prompt": "why does the kubernetes ingress certificate renewal fail?"})
    ok(p)
    text = json.loads(p.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "needed the DNS challenge" in text and "runs nightly now" in text  # both files quoted
    for f in (mine, crafted):
        assert not set(text.split("\n")) & (_frontmatter_lines(f) - {""}), f.name


FRONTMATTERS = {  # name: (file text, whether parse_frontmatter finds a frontmatter)
    "format 1": ('---\nsession_id: "x"\ncwd: "/w/walrus"\n---\n\n[2026-09-02 10:00:00] [User]\na walrus\n', True),
    "crlf": ("---\r\ntags:\r\n  - walrus\r\n---\r\n\r\n[2026-09-02 10:00:00] [User]\r\nwalrus\r\n", True),
    "dashes inside": ("---\n-\n--\n----\n--- walrus\n---walrus\n-- walrus\n\nnote: walrus\n---\r\nwalrus\n", True),
    "closed at the end": ("---\ntitle: walrus\n---", True),
    "empty": ("---\n---\nwalrus here\n", True),
    "an identifier": ('---\nprevious: "[[2026-09-01_100000_old_walrus_notes_abcd1234]]"\n---\nwalrus\n', True),
    "a rule in the body": ("---\ntitle: nothing\n---\ntext\n---\nwalrus after a rule\n---\n", True),
    "never closed": ("---\ntitle: walrus\nwalrus again\n", False),
    "not a fence": ("--- walrus\nwalrus\n---\n", False),
    "no frontmatter": ("walrus\n---\nwalrus\n---\n", False),
    "longer than the head read": ("---\nnotes: " + "walrus " * 1000 + "\n---\nwalrus\n", True),
}


def test_a_frontmatter_ends_where_every_reader_ends_it(home, tmp_path):
    """Where search drops rows is where parse_frontmatter (what every reader uses) ends the
    frontmatter, from the file's head only (and where the index, from the file's bytes,
    says it does); a file matching only there is not counted."""
    body_matches = 0
    for name, (text, has) in FRONTMATTERS.items():
        f = tmp_path / f"{name}.md"
        f.write_bytes(text.encode())
        lines = text.split("\n")
        end = parse_frontmatter(lines)[1]
        assert bool(end) == has, name
        assert collect.frontmatter_end(bytes(f)) == end, name
        assert fileformat.frontmatter_end_of(text.encode()) == end, name  # (what the index stores)
        body_matches += sum(len(re.findall(r"(?i)\b[a-z0-9_]*walrus[a-z0-9_]*\b", ln)) for ln in lines[end:])
    r = search("walrus", dir=tmp_path, expand="never", limit=50)
    assert r.total_matches == body_matches
    assert str(tmp_path / "closed at the end.md") not in {h.path for h in r.hits}


def test_frontmatter_heads_are_read_once_and_only_when_rows_could_be_inside(home, tmp_path, monkeypatch):
    """The cost bound: a file's head is read at most once per search (the sample, the main
    scan and a full rescan share what was read), and never for a file whose first matched
    line lies beyond any frontmatter (FRONTMATTER_LINES)."""
    reads, runs = [], []
    real_end, real_run = collect.frontmatter_end, pipeline.run
    monkeypatch.setattr(collect, "frontmatter_end", lambda path: reads.append(path) or real_end(path))
    monkeypatch.setattr(pipeline, "run", lambda *a, **kw: runs.append(kw) or real_run(*a, **kw))
    v = tmp_path / "v"
    late = write(v, "aaaa1111-0000", T, [Turn.user("filler line\n" * fileformat.FRONTMATTER_LINES
                                                  + "the walrus at the end", T)])
    early = {bytes(write(v, f"beef{i:04d}-0000", T + dt.timedelta(hours=i),
                         [Turn.user(f"a walrus {'and a narwhal' if i % 10 == 7 else 'again'}", T),
                          Turn.agent(["walrus " * 3], T)]))
             for i in range(40)}
    # a vault "large" enough to be sampled first: walrus is common, so the main scan lists
    # narwhal alone, finds too few hits and lists everything again
    monkeypatch.setattr(tuning, "SAMPLE_AFTER", 41)  # (of 42 entries: the sessions, chrollo.base)
    monkeypatch.setattr(tuning, "SAMPLE_ENDINGS", tuple(f"{d}.md" for d in "0123456789"))
    r = search("walrus narwhal", dir=v, expand="never", limit=30)
    assert r.hits[0].terms == ["walrus", "narwhal"] and len(r.hits) == 30
    assert [kw.get("shortcut", True) for kw in runs] == [True, False]
    assert len(reads) == len(set(reads)) and set(reads) == early  # each once; never the late one


# ----------------------------------------------------------------------------- both formats rank alike

CORPUS = [  # (start, cwd, turns): a small project history with overlapping words
    ("2026-08-01T09:00:00", "/w/shop", [("user", "09:00:00", "the checkout page times out under load"),
                                        ("agent", "09:00:20", ["The payment gateway call blocks; moved it to a worker."])]),
    ("2026-08-03T14:00:00", "/w/shop", [("user", "14:00:00", "checkout still slow, profile the database queries"),
                                        ("agent", "14:01:00", [ToolCall("Bash", "psql -c explain"),
                                                               "Missing index on orders.customer_id; added it."])]),
    ("2026-08-05T10:30:00", "/w/blog", [("user", "10:30:00", "write a post about database indexes"),
                                        ("agent", "10:31:00", ["Drafted: why an index on a foreign key matters."])]),
    ("2026-08-09T16:45:00", "/w/shop", [("user", "16:45:00", "payment worker crashes on retry"),
                                        ("agent", "16:46:00", ["Retries reused a closed connection; reconnect per job.",
                                                               "The checkout load test passes now."])]),
    ("2026-08-10T11:00:00", "/w/shop", [("user", "11:00:00", "which day did the refund project start"),
                                        ("agent", "11:00:30", ["The refund project started the day after the "
                                                               "previous release; its title is Refunds v2."])]),
    ("2026-08-12T08:15:00", "/w/infra", [("user", "08:15:00", "rotate the database credentials"),
                                         ("agent", "08:16:00", ["Rotated; the payment worker picked them up."])]),
]
QUERIES = ["checkout load", "database index", "payment worker retry", "slow checkout queries",
           "rotate credentials", "foreign key index post", "gateway timeout", "shop checkout",
           # words that are also format 2's property names (and its tag) count as conversation only
           "refund project day", "previous release title", "which day started", "chrollo tags parent"]


def _ranking(vault, query):
    out = []
    for h in search(query, dir=vault, limit=10).hits:
        s = read_session(h.path)
        turn = next(i for i, t in enumerate(s.turns) if t.header_line <= h.line <= t.last_line)
        out.append((s.meta["session_id"][:4], turn, h.line - s.turns[turn].header_line, h.score, h.terms))
    return out


def test_format_2_frontmatter_does_not_change_ranking(home, tmp_path):
    vaults = {}
    for fmt in (1, 2):
        vaults[fmt] = tmp_path / f"f{fmt}"
        for i, (start, cwd, turns) in enumerate(CORPUS):
            write_session(vaults[fmt], f"{i:04d}bee{fmt}-0000", start, turns, cwd=cwd, fmt=fmt)
    assert "previous:" in next(vaults[2].glob("2026-08-09_*")).read_text()  # links really present
    for q in QUERIES:
        assert _ranking(vaults[1], q) == _ranking(vaults[2], q), q


# ----------------------------------------------------------------------------- chrollo.base

def listed_by_base(base_text: str, props: dict) -> bool:
    """Whether chrollo.base's filter (an ``or`` of file.hasTag / file.hasProperty, as Bases
    evaluates them) selects a note with these properties."""
    spec = yaml.safe_load(base_text)
    for f in spec["filters"]["or"]:
        fn, arg = re.fullmatch(r'file\.(hasTag|hasProperty)\("([^"]+)"\)', f).groups()
        if (arg in (props.get("tags") or [])) if fn == "hasTag" else (arg in props):
            return True
    return False


def test_base_is_written_once_and_never_overwritten(home, tmp_path):
    v = tmp_path / "v"
    write(v, "aaaa1111-0000", T, [Turn.user("first session here", T)])
    base = v / "chrollo.base"
    spec = yaml.safe_load(base.read_text())
    assert {"file.hasTag(\"chrollo\")", "file.hasProperty(\"session_id\")"} <= set(spec["filters"]["or"])
    views = {x["name"]: x for x in spec["views"]}
    assert set(views) == {"All sessions", "By project", "By harness"}
    assert {"started", "title", "project", "harness", "machine"} <= set(views["All sessions"]["order"])
    assert views["By project"]["groupBy"]["property"] == "project"
    assert views["By harness"]["groupBy"]["property"] == "harness"
    base.write_text("# mine\n")
    write(v, "bbbb2222-0000", T, [Turn.user("second session here", T)])
    assert base.read_text() == "# mine\n"
    base.unlink()  # the user removed it: chrollo does not bring it back
    write(v, "cccc3333-0000", T, [Turn.user("third session here", T)])
    assert not base.exists()
    r = search("session here", dir=v)
    assert r.hits and all(h.path.endswith(".md") for h in r.hits)


def test_base_lists_what_it_filters_on(home, tmp_path):
    """Every session file carries what chrollo.base filters and shows (properties Bases reads)."""
    v = tmp_path / "v"
    p = write(v, "aaaa1111-0000", T, [Turn.user("listed in the view", T)], harness="codex")
    props = split(p)[0]
    assert listed_by_base((v / "chrollo.base").read_text(), props)
    assert not listed_by_base((v / "chrollo.base").read_text(), {"title": "a note of the user's"})
    assert {"started", "title", "project", "harness", "machine"} <= set(props)


# ----------------------------------------------------------------------------- through the real hooks

def _capture(home, tmp_path, sid, prompt, answer, cwd):
    base = {"session_id": sid, "cwd": str(cwd), "transcript_path": None}
    ok(hook(home, "codex", "UserPromptSubmit", dict(base, hook_event_name="UserPromptSubmit", prompt=prompt)))
    ok(hook(home, "codex", "Stop", dict(base, hook_event_name="Stop", last_assistant_message=answer)))


def test_old_files_untouched_by_new_captures_beside_them(home, tmp_path):
    vault = home / "memories"
    old = write_session(vault, "0ld00000-1111", "2026-07-01T09:00:00",
                        [("user", "09:00:00", "an old format-1 session"), ("agent", "09:00:05", ["kept as is"])])
    legacy = vault / "2026-03-01_090000_abc12345.md"
    legacy.write_text("[09:00:00] [User] legacy inline question\n[09:00:09] [Agent]\n> answer\n")
    before = {p.name: p.read_bytes() for p in vault.iterdir()}
    cwd = tmp_path / "work" / "shop"
    cwd.mkdir(parents=True)
    _capture(home, tmp_path, "019c16bd-a0fc-7293-855d-2948ce5dc471", "lets increase the chart width",
             "Increased the width to 120.", cwd)
    assert {p.name: p.read_bytes() for p in vault.iterdir() if p.name in before} == before
    new = [p for p in vault.glob("*.md") if p.name not in before]
    assert [p.name for p in new] == ["2026-11-01_120000_lets_increase_the_chart_width_019c16bd.md"]
    props, _, body = split(new[0])
    assert props["chrollo_format"] == 2 and props["title"] == "lets increase the chart width"
    assert outline(body) == [(2, "[2026-11-01 12:00:00] [User]"), (2, "[2026-11-01 12:00:00] [Agent]")]
    assert (vault / "chrollo.base").is_file()
    assert [t.role for t in read_session(old).turns] == ["user", "agent"]
    # searching the mixed vault finds both formats
    assert {h.path for h in search("width", dir=vault).hits} == {str(new[0])}
    assert {h.path for h in search("legacy inline question", dir=vault).hits} == {str(legacy)}
    shutil.rmtree(cwd)


def test_forget_lines_reaches_the_title_and_the_file_name(sessions):
    from conftest import run

    v, a, other, b, sub = sessions
    home = v.parent / "home"
    p = run(["forget", "--lines", "rate limiting", "--dir", v], home)
    assert p.returncode == 0, p.stderr
    assert not b.exists()
    renamed = v / "2026-09-03_101500_bbbb2222.md"
    text = renamed.read_text()
    assert "rate limiting" not in text and "rate_limiting" not in renamed.name
    props = split(renamed)[0]
    assert props["title"] == props["aliases"][0] == "[forgotten by chrollo]"
    assert props["session_id"] == "bbbb2222-0000" and read_session(renamed).turns[1].text == "Added a token bucket."
    # the session goes on in the renamed file
    write(v, "bbbb2222-0000", T + dt.timedelta(days=1), [Turn.user("and a second turn", T)])
    assert read_session(renamed).turns[-1].text == "and a second turn"


# ----------------------------------------------------------------------------- memory inside your vault

def test_config_vault_puts_memory_inside_an_obsidian_vault(home, tmp_path):
    from conftest import run, run_json

    notes = tmp_path / "Notes"
    (notes / ".obsidian").mkdir(parents=True)
    target = notes / "Agent memory"
    p, out = run_json(["config", "vault", str(target)], home)
    assert p.returncode == 0, p.stderr
    assert out["vault"] == str(target) and out["obsidian"]["visible"] and out["base_written"]
    assert (target / "chrollo.base").is_file()
    cwd = tmp_path / "work" / "shop"
    cwd.mkdir(parents=True)
    _capture(home, tmp_path, "019c16bd-a0fc-7293-855d-2948ce5dc471", "lets increase the chart width",
             "Increased the width to 120.", cwd)
    files = sorted(x.name for x in target.iterdir())
    assert files == ["2026-11-01_120000_lets_increase_the_chart_width_019c16bd.md", "chrollo.base"]
    assert not list(notes.rglob("state")) and not list(notes.rglob("*.log"))  # state and logs stay home
    assert (home / "state").is_dir()
    p, out = run_json(["search", "chart", "width"], home)
    assert {h["path"] for h in out["hits"]} == {str(target / files[0])}
    p, out = run_json(["doctor", "--harness", "pi"], home, HOME=str(tmp_path))
    checks = {c["name"]: c for c in out["checks"]}
    assert checks["vault"]["detail"].startswith(f"{target} (set by `chrollo config vault`; 1 session file)")
    assert checks["obsidian"]["status"] == "ok" and "visible in the Obsidian vault" in checks["obsidian"]["detail"]
    p, out = run_json(["config", "vault", "--unset"], home)
    assert out["vault"] == str(home / "memories")
    assert run(["config", "vault"], home).stdout.strip() == str(home / "memories")


def test_doctor_says_when_obsidian_cannot_see_memory(tmp_path):
    from conftest import run_json

    notes = tmp_path / "Notes"
    (notes / ".obsidian").mkdir(parents=True)
    home = notes / ".chrollo"  # the default layout, inside a vault: hidden by the dot-folder
    p, out = run_json(["doctor", "--harness", "pi"], home, HOME=str(tmp_path))
    check = {c["name"]: c for c in out["checks"]}["obsidian"]
    assert check["status"] == "warn" and ".chrollo" in check["detail"] and "config vault" in check["fix"]
    p, out = run_json(["config", "vault", str(home / "state" / "x")], home)
    assert p.returncode == 2 and out["error"]["kind"] == "bad_vault"


def test_install_vault_option_sets_the_vault(home, tmp_path):
    from conftest import run, run_json

    target = tmp_path / "Notes" / "Agent memory"
    p = run(["install", "claude-code", "--no-mcp", "--config", tmp_path / "settings.json", "--vault", target],
            home, HOME=str(tmp_path), CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))
    assert p.returncode == 0, p.stderr
    assert f"memory: {target}" in p.stderr and (target / "chrollo.base").is_file()
    p, out = run_json(["config", "vault"], home)
    assert out["vault"] == str(target) and out["source"] == "config"
