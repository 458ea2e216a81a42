"""Re-record the project's own harness fixtures from real runs (tests/fixtures/recorded/e2e/).

    .venv/bin/python tests/e2e/record.py [claude-code codex gemini pi qwen-code] [--force]

For each harness: the pinned binary, a private world (tests/e2e/kit), ``chrollo install``,
every hook command routed through ``kit/recorder.py``, then a short scripted history (a plain
turn; a tool turn and a chunked reply resumed into it; a second session that gets a recall
block; pi also a stream cut mid-reply). The hook calls become ``hooks.jsonl`` and the
harness's data folder ``transcripts/``, in the layout ``tests/recorded.py`` replays: paths
relative to the fixture, the working folder written ``<cwd>``, the private HOME ``/home/user``.
Then :func:`export` rewrites ``tests/fixtures/harness/`` from all recordings.
A folder that exists is kept unless ``--force``.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from e2e.drivers import DRIVERS  # noqa: E402
from e2e.kit import npm  # noqa: E402
from e2e.kit.model import DEFAULT_ANSWER, directives  # noqa: E402
from e2e.kit.world import World  # noqa: E402

OUT = HERE.parent / "fixtures" / "recorded" / "e2e"
RECORDER = HERE / "kit" / "recorder.py"
DATA = {"claude-code": ".claude/projects", "codex": ".codex/sessions", "gemini": ".gemini/tmp",
        "pi": ".pi/agent/sessions", "qwen-code": ".qwen/projects"}
CHUNKED = "alpha beta gamma delta epsilon zeta eta theta iota kappa"


def script(harness: str) -> list:
    """(prompt, resume-the-first-session?) in order."""
    runs = [("say: the staging reverse proxy listens on port 8443", False),
            ("run: printf 'disk %s\\n' free-31G\nsay: the disk has room", True),
            (f"say: {CHUNKED}\nchunks: 4", True),
            ("which port does the staging reverse proxy listen on?", False)]
    if harness == "pi":
        runs.append((f"say: {CHUNKED}\nchunks: 3\ncut once", False))
    return runs


def route_hooks(drv, log: Path) -> None:
    """Put the recorder in front of every hook command chrollo installed."""
    prefix = f"{sys.executable} {RECORDER} {log} -- "
    if drv.name == "pi":
        ext = drv.w.home / ".pi" / "agent" / "extensions" / "chrollo.ts"
        text = ext.read_text("utf-8")
        new = re.sub(r"const CHROLLO = (\[.*?\]);",
                     lambda m: "const CHROLLO = " + json.dumps([sys.executable, str(RECORDER), str(log), "--",
                                                               *json.loads(m.group(1))]) + ";", text, count=1)
        assert new != text, "pi extension: CHROLLO command not found"
        ext.write_text(new, "utf-8")
        return
    cfg = {"claude-code": drv.w.home / ".claude" / "settings.json", "codex": drv.w.home / ".codex" / "hooks.json",
           "gemini": drv.w.home / ".gemini" / "settings.json",
           "qwen-code": drv.w.home / ".qwen" / "settings.json"}[drv.name]
    data = json.loads(cfg.read_text("utf-8"))
    for groups in data["hooks"].values():
        for g in groups:
            for h in g["hooks"]:
                if " hook " in h["command"]:
                    h["command"] = prefix + h["command"]
    cfg.write_text(json.dumps(data, indent=2) + "\n", "utf-8")


def normalise(text: str, w: World) -> str:
    for path, repl in ((w.project, "<cwd>"), (w.home, "/home/user"), (w.tmp, "/tmp/e2e")):
        text = text.replace(str(path), repl)
    return text


def normalise_rel(rel: str, w: World) -> str:
    """A data-folder path whose folder names carry the temp project path (a slug of it)."""
    return rel.replace(str(w.project).replace("/", "-").strip("-"), "home-user-project")


def trim(text: str) -> str:
    """Claude Code 2.1.330 copies whole API requests, attachments and settings into its
    transcript: in records chrollo never turns into text, cut strings over 2,000 characters."""
    out = []
    for line in text.splitlines(keepends=True):
        try:
            rec = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(rec, dict) and rec.get("type") not in ("user", "assistant"):
            rec = _cut(rec)
            line = json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"
        out.append(line)
    return "".join(out)


def _cut(v):
    if isinstance(v, str) and len(v) > 2000:
        return v[:100] + "…[trimmed]"
    if isinstance(v, list):
        return [_cut(x) for x in v]
    if isinstance(v, dict):
        return {k: _cut(x) for k, x in v.items()}
    return v


def record(harness: str, folder: Path, force: bool) -> Path | None:
    version = npm.installed_versions(folder)[harness]
    dest = OUT / f"{harness}-{version}"
    if dest.exists() and not force:
        print(f"{dest} exists (use --force to re-record)")
        return None
    with tempfile.TemporaryDirectory(prefix=f"chrollo-record-{harness}-") as tmp:
        w = World(Path(tmp), folder / "node_modules" / ".bin")
        try:
            drv = DRIVERS[harness](w)
            drv.install()
            log = w.tmp / "hooks.raw.jsonl"
            route_hooks(drv, log)
            first = None
            for prompt, resume in script(harness):
                r = drv.run(prompt, resume=first if resume else None)
                first = first or r.session_id
            data = w.home / DATA[harness]
            shutil.rmtree(dest, ignore_errors=True)
            for f in sorted(data.rglob("*")):
                if f.is_file():
                    out = dest / "transcripts" / normalise_rel(f.relative_to(data).as_posix(), w)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    text = normalise(f.read_text("utf-8", "replace"), w)
                    out.write_text(trim(text) if harness == "claude-code" and f.suffix == ".jsonl" else text, "utf-8")
            calls = []
            for line in log.read_text("utf-8").splitlines():
                c = json.loads(line)
                p = c["payload"]
                for key in ("transcript_path", "agent_transcript_path"):
                    if isinstance(p.get(key), str) and p[key].startswith(str(data)):
                        gone = dest / "transcripts" / normalise_rel(Path(p[key]).relative_to(data).as_posix(), w)
                        snap = Path(str(log) + ".files") / hashlib.sha1(p[key].encode()).hexdigest()
                        if not gone.exists() and snap.exists():   # renamed or deleted since
                            gone.parent.mkdir(parents=True, exist_ok=True)
                            gone.write_text(normalise(snap.read_text("utf-8", "replace"), w), "utf-8")
                        p[key] = "transcripts/" + normalise_rel(Path(p[key]).relative_to(data).as_posix(), w)
                if p.get("cwd") == str(w.project):
                    p["cwd"] = "<cwd>"
                c["payload"] = json.loads(normalise(json.dumps(p, ensure_ascii=False), w))
                calls.append(json.dumps(c, ensure_ascii=False))
            (dest / "hooks.jsonl").write_text("\n".join(calls) + "\n", "utf-8")
        finally:
            w.close()
    print(f"recorded {dest} ({len(calls)} hook calls)")
    return dest


def script_turns(prompts: list) -> list:
    """The turns a session of these prompts holds, from what the fake model was told to do
    (``kit/model.py``), not from any reading of the transcript: in the format of
    ../shared/fixtures/expected (``role``, ``text_first_80_chars``, ``tool_calls``; a shell
    call is named ``shell``, whichever shell tool the harness offered)."""
    out = []
    for prompt in prompts:
        d = directives(prompt)
        out.append({"role": "user", "text_first_80_chars": prompt.strip()[:80], "tool_calls": []})
        out.append({"role": "agent", "text_first_80_chars": d.get("say", DEFAULT_ANSWER)[:80],
                    "tool_calls": ["shell"] if "run" in d else []})
    return out


HOOKFIX = HERE.parent / "fixtures" / "harness"
FOLDER = {"claude-code": "projects", "codex": "sessions", "gemini": "tmp", "pi": "sessions", "qwen-code": "projects"}


def export() -> None:
    """The recordings in the layout of the hook tests' fixture set (``tests/fixtures/harness``,
    which every hook test runs on): ``hooks/<harness>/<event>.json`` — for each
    event, its last call in the first recorded session, whose transcript is then complete —
    and ``transcripts/<harness>/<data folder>/…``, paths relative to the set, cwd
    ``/home/user/project``; ``transcripts.json`` says what each transcript holds and
    ``expected/<harness>/<session id>.turns.json`` its turns (from the recorded prompts and
    the fake model's script, not chrollo's reading of them)."""
    shutil.rmtree(HOOKFIX, ignore_errors=True)
    expected: dict = {}      # transcript → [harness, roles of its turns, first prompt] (the script's)
    for rec in sorted(OUT.iterdir()):
        harness = rec.name.rsplit("-", 1)[0]
        calls = [json.loads(ln) for ln in (rec / "hooks.jsonl").read_text("utf-8").splitlines() if ln]
        first = calls[0]["payload"]["session_id"]
        last = {c["event"]: c["payload"] for c in calls if c["payload"].get("session_id") == first}
        for f in sorted((rec / "transcripts").rglob("*")):
            if f.is_file():
                out = HOOKFIX / "transcripts" / harness / FOLDER[harness] / f.relative_to(rec / "transcripts")
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(f.read_text("utf-8").replace("<cwd>", "/home/user/project"), "utf-8")
        sessions: dict = {}      # session id → (transcript, prompts), from the recorded calls
        for c in calls:
            b = c["payload"]
            sid, tp = b.get("session_id"), b.get("transcript_path")
            entry = sessions.setdefault(sid, [None, []])
            if isinstance(tp, str) and tp.startswith("transcripts/") and "/subagents/" not in tp:
                entry[0] = tp[len("transcripts/"):]
            # (an empty prompt is no prompt: Qwen Code's re-entry after a tool result)
            if isinstance(b.get("prompt"), str) and b["prompt"].strip() and b["prompt"] not in entry[1]:
                entry[1].append(b["prompt"])
        for sid, (tp, prompts) in sessions.items():
            if tp and prompts:
                expected[f"{harness}/{FOLDER[harness]}/{tp}"] = [harness, "UA" * len(prompts), prompts[0]]
                out = HOOKFIX / "expected" / harness / f"{sid}.turns.json"
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(script_turns(prompts), indent=1, ensure_ascii=False) + "\n", "utf-8")
        for event, body in last.items():
            body = json.loads(json.dumps(body).replace('"<cwd>"', '"/home/user/project"'))
            for key in ("transcript_path", "agent_transcript_path"):
                if isinstance(body.get(key), str) and body[key].startswith("transcripts/"):
                    body[key] = f"transcripts/{harness}/{FOLDER[harness]}/" + body[key][len("transcripts/"):]
            out = HOOKFIX / "hooks" / harness / f"{event}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
    (HOOKFIX / "transcripts.json").write_text(json.dumps(expected, indent=1, ensure_ascii=False) + "\n", "utf-8")
    print(f"exported {HOOKFIX}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("harness", nargs="*", default=list(DRIVERS))
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()
    folder = npm.ensure_installed()
    for h in args.harness:
        record(h, folder, args.force)
    export()


if __name__ == "__main__":
    main()
