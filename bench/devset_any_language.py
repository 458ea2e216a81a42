#!/usr/bin/env python3
"""Public coding-agent transcripts in Chinese, Japanese and Portuguese -> chrollo vaults (#47).

    python bench/devset_any_language.py [--mirrors /work/.mirror] [--git OWNER/NAME=GITDIR …]
                                        [--out DIR] [--check]

Every source (SOURCES below; provenance and licences in docs/devset-any-language.md) is read
at its pinned commit with ``git show`` (a git directory as the ``fetch`` tool gives it:
``MIRRORS/<owner>+<name>/repo``, or ``git clone --mirror``) and written as one format-1
session file per transcript (docs/design.md §4) into ``OUT/<lang>/`` — one vault per
language, ``zh``, ``ja``, ``pt``. The vaults live outside the repository (default
``${CHROLLO_EVAL_DATA:-~/.cache/chrollo-eval}/any_language``); this script rebuilds them
byte for byte, and ``--check`` compares them with the sums in ``bench/devset_any_language.sha256``.

Conversion (the ideas of ../shared/eval/code/code_to_md.py, written again here, stdlib only):
SpecStory exports (``_**User**_`` / ``_**Assistant**_`` / ``_**Agent (…)**_`` blocks) become
``[YYYY-MM-DD HH:MM:SS] [User]`` / ``[Agent]`` turns, 30 s apart from the file's start time;
agent text is block-quoted; thinking blocks are dropped; each ``<tool-use>`` / ``<details>``
block becomes one ``<tool>…</tool>`` line (its summary); consecutive agent blocks merge.
Text is kept verbatim otherwise (no normalisation: the point is to search it as written).
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUMS = HERE / "devset_any_language.sha256"
DATA_ROOT = os.environ.get("CHROLLO_EVAL_DATA", os.path.expanduser("~/.cache/chrollo-eval"))

# source id -> where it lives. ``lang`` names the vault; every ``.specstory/history/*.md`` of the
# commit is taken.
SOURCES = {
    "smart-tourism": {"repo": "kyhuan/smart-tourism", "lang": "zh",
                      "commit": "1e1fd5cb56ec0ea055226af98dbea6389f387c88",
                      "cwd": "/Users/kyhuan/smart-tourism"},
    "forwarder-system": {"repo": "Darrenthinker/forwarder-system", "lang": "zh",
                         "commit": "279d8044640dc1f8b4b4a7acf83b788d2f8a7943",
                         "cwd": "/Users/darren/forwarder-system"},
    "map3d": {"repo": "onotakuy/work20260103_01", "lang": "ja",
              "commit": "86d44c29c71f8ea3f230a6bb6f7157d3ea45a3ad",
              "cwd": "/mnt/c/Users/USER/src/work20260103"},
    "building3d": {"repo": "onotakuy/work20260104_01", "lang": "ja",
                   "commit": "b33b9c017669def2ed018ac63370d378637306fe",
                   "cwd": "/mnt/c/Users/USER/src/work20260104"},
    "agente-bsc": {"repo": "hpm27/agente-bsc-rag", "lang": "pt",
                   "commit": "e1ac36698c40e34932aa7681e393462d57a28ac1",
                   "cwd": "/home/user/agente-bsc-rag"},
}
PREFIX = ".specstory/history/"


def git(gitdir: str, *args: str) -> bytes:
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def list_files(gitdir: str, commit: str) -> list:
    out = git(gitdir, "-c", "core.quotepath=off", "ls-tree", "-r", "--name-only", "-z", commit, "--", PREFIX)
    return sorted(p for p in out.decode().split("\0") if p.endswith(".md") and not p.endswith("/.what-is-this.md"))


# ------------------------------------------------------------------ parsing

SPEAKER = re.compile(r"^_\*\*(User|Assistant|Agent)\b[^*]*\*\*_\s*$")


def start_time(path: str, text: str) -> dt.datetime:
    m = re.search(r"(\d{4}-\d{2}-\d{2})_(\d{2})-(\d{2})", os.path.basename(path))
    if m:
        return dt.datetime.strptime(f"{m.group(1)} {m.group(2)}:{m.group(3)}", "%Y-%m-%d %H:%M")
    m = re.search(r"\((\d{4}-\d{2}-\d{2})[ T](\d{2}):(\d{2})", text)
    return dt.datetime.strptime(f"{m.group(1)} {m.group(2)}:{m.group(3)}", "%Y-%m-%d %H:%M")


def tool_line(name: str, arg: str = "") -> str:
    arg = " ".join(arg.split())
    if len(arg) > 160:
        arg = arg[:157] + "..."
    return f"<tool>{name}{(' ' + arg) if arg else ''}</tool>"


def _summary(block: str) -> str:
    m = re.search(r"<summary>(.*?)</summary>", block, re.S)
    s = re.sub(r"<[^>]+>", "", m.group(1)) if m else ""
    return " ".join(s.replace("**", "").split())


def squash(text: str) -> str:
    """Thinking dropped; each <tool-use> / <details> block -> one <tool> line."""
    def tool_use(m):
        name = re.search(r'data-tool-name="([^"]+)"', m.group(0))
        return "\n" + tool_line(name.group(1) if name else "tool", _summary(m.group(0))) + "\n"

    def details(m):
        s = _summary(m.group(0)) or "details"
        return "" if re.match(r"(Thought Process|Thinking|Thought)\b", s, re.I) else "\n" + tool_line(s) + "\n"

    text = re.sub(r"<think>.*?</think>", "", text, flags=re.S)
    text = re.sub(r"<tool-use\b.*?</tool-use>", tool_use, text, flags=re.S)
    prev = None
    while prev != text:  # innermost first
        prev = text
        text = re.sub(r"<details>(?:(?!<details>).)*?</details>", details, text, flags=re.S)
    return text


def clean(text: str) -> str:
    text = re.sub(r"\n{3,}", "\n\n", text.strip("\n"))
    return "\n".join(ln.rstrip() for ln in text.split("\n")).strip()


def parse(path: str, text: str) -> list:
    """[(datetime, 'User'|'Agent', text)] of one SpecStory export."""
    start = start_time(path, text)
    blocks, cur = [], None
    for ln in text.replace("\r\n", "\n").split("\n"):
        m = SPEAKER.match(ln)
        if m:
            if cur:
                blocks.append(cur)
            cur = ["User" if m.group(1) == "User" else "Agent", []]
        elif cur is not None and ln.strip() != "_****_":
            cur[1].append(ln)
    if cur:
        blocks.append(cur)
    turns = []
    for role, body in blocks:
        s = re.sub(r"\n---\s*$", "", "\n".join(body).rstrip())
        s = clean(squash(s) if role == "Agent" else s)
        if not s:
            continue
        if turns and turns[-1][1] == role:
            turns[-1] = (turns[-1][0], role, turns[-1][2] + "\n\n" + s)
        else:
            turns.append((start + dt.timedelta(seconds=30 * len(turns)), role, s))
    return turns


# ------------------------------------------------------------------ writing

HEADER_LIKE = re.compile(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\] \[(User|Agent)\]")


def yq(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def render(sid: str, cwd: str, turns: list, source: str) -> str:
    lines = ["---", f"session_id: {yq(sid)}", f"date: {yq(turns[0][0].strftime('%Y-%m-%d'))}",
             'harness: "specstory"', f"cwd: {yq(cwd)}", 'machine: "public-repo"',
             f"source: {yq(source)}", "chrollo_format: 1", "---", ""]
    for ts, role, text in turns:
        lines.append(f"[{ts.strftime('%Y-%m-%d %H:%M:%S')}] [{role}]")
        body = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd").split("\n")
        if role == "Agent":
            lines += [("> " + b) if b.strip() else ">" for b in body]
        else:
            lines += [("\\" + b) if HEADER_LIKE.match(b) else b for b in body]
        lines += ["", ""]
    return "\n".join(lines).rstrip("\n") + "\n\n\n"


def session_name(repo: str, path: str, start: dt.datetime) -> tuple:
    sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"https://github.com/{repo}/{path}"))
    return sid, f"{start.strftime('%Y-%m-%d_%H%M%S')}_{sid[:8]}.md"


def build(gits: dict, out: Path) -> dict:
    """Write every vault; returns {lang/file: sha256}."""
    sums = {}
    for sid_, src in SOURCES.items():
        gitdir = gits[src["repo"]]
        vault = out / src["lang"]
        vault.mkdir(parents=True, exist_ok=True)
        for path in list_files(gitdir, src["commit"]):
            text = git(gitdir, "show", f"{src['commit']}:{path}").decode("utf-8", errors="replace")
            turns = parse(path, text)
            if not turns:
                continue
            sid, name = session_name(src["repo"], path, turns[0][0])
            data = render(sid, src["cwd"], turns, f"github.com/{src['repo']}@{src['commit'][:12]}:{path}")
            (vault / name).write_text(data, encoding="utf-8")
            sums[f"{src['lang']}/{name}"] = hashlib.sha256(data.encode()).hexdigest()
            print(f"{sid_:17} {src['lang']}/{name}  {len(turns):4} turns  <- {path}", file=sys.stderr)
    return sums


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", default="/work/.mirror", help="folder of <owner>+<name>/repo git dirs")
    ap.add_argument("--git", action="append", default=[], metavar="OWNER/NAME=GITDIR")
    ap.add_argument("--out", default=os.path.join(DATA_ROOT, "any_language"))
    ap.add_argument("--check", action="store_true", help="compare with bench/devset_any_language.sha256")
    ap.add_argument("--write-sums", action="store_true", help="record the sums (after a deliberate change)")
    a = ap.parse_args(argv)
    gits = {s["repo"]: os.path.join(a.mirrors, s["repo"].replace("/", "+"), "repo") for s in SOURCES.values()}
    for kv in a.git:
        k, v = kv.split("=", 1)
        gits[k] = v
    missing = [r for r, g in gits.items() if not os.path.isdir(g)]
    if missing:
        print(f"no git directory for {', '.join(missing)} (fetch github:<owner>/<name>, or --git)", file=sys.stderr)
        return 1
    sums = build(gits, Path(a.out))
    text = "".join(f"{h}  {n}\n" for n, h in sorted(sums.items()))
    if a.write_sums:
        SUMS.write_text(text)
    if a.check:
        if SUMS.read_text() != text:
            print("MISMATCH with bench/devset_any_language.sha256", file=sys.stderr)
            return 1
        print("OK")
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
