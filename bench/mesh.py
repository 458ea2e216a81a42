#!/usr/bin/env python3
"""Mesh sync throughput (figures for closing notes): two paired nodes, real processes.

    python bench/mesh.py [--mb 100] [--files 1000] [--transports lan,folder,git] [--vault DIR] [--repeat N]
                         [--scratch DIR] [--keep]
    python bench/mesh.py --redaction [--mb 20] [--before REV] [--rounds 3] [--vault DIR]

Node B's vault gets --files session files totalling --mb megabytes (realistic turns, a few
secrets sprinkled in so redaction does work), or with --vault DIR real session files copied
from DIR up to --mb. Per transport, B starts cold (no redaction cache, no manifest cache: its
first publication redacts everything), then: A takes everything (first sync), re-syncs with
nothing new, and takes one new turn (a Claude Code turn captured by the real Stop hook into a session of
B's, so capture notes it as it does for any turn). LAN: B runs `chrollo mesh
serve` (TLS 1.3), A runs `sync --all` (the server's redaction is inside A's time). Folder /
git: B publishes (`sync --folder|--git`), A takes; each timed, and both together (with
--repeat N, the re-sync and the new turn N times each: medians). Seconds
and CPU seconds of both nodes (the share of a loaded machine's cores a run got does not
count, what it did does). Baseline: `cp -r` of the vault in the same run.

Where the files are made matters on ext4: a new inode is never one freed within the last
60 s (360 s while its inode table block is dirty), and finding one walks past every such
inode of the block group, from its first — after 10,000s of files were deleted nearby (a
benchmark's clean-up, this one's included), each file created costs ~0.1-0.2 ms of kernel
time instead of ~0.01 (perf: find_get_block_common and recently_deleted), and a first sync
creates 20,000 files. So the run's files go under --scratch (a system temp folder by
default, where benchmarks come and go), nothing is deleted before a timed step (A's copies
from one transport are moved aside, not deleted), and the run opens with a probe: the time
to create 2,000 empty files there (~10 us each where nothing was deleted lately). --keep
leaves the run's files (delete them later: deleting them now slows the next run).

--redaction: publishing's redaction alone, in this process, on two texts of --mb each, split into
files of --mb/--files: "mesh" (the sessions above) and "dense" (turns of the ordinary developer
lines of tests/secret_corpus.py — tokens, passwords, keys and auth in every other line — with a
secret every ~50 turns: the worst case), and with --vault DIR a third, "vault": real session
files from DIR (e.g. a coding vault of ../shared/eval/code). Interleaved per round: bare `rg -i -F -f <every rule
keyword>` over the same files (one pass for every keyword: the floor), chrollo/redact.py at
--before (the rules before #34), the current one (in this process, and as publishing runs it:
one worker process per core, their start-up included), and the current one through its
content-hash cache (a re-publish). MB/s (best round) and the ratio to rg's time; the load average with them.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from hooks import claude_turn, run_hook  # noqa: E402
from search import chrollo_cmd  # noqa: E402

WORDS = ("deploy rollback migration index cache request retry timeout worker queue schema release "
         "pipeline container cluster ingress gateway latency metric alert budget config branch").split()


def session(i: int, size: int, rnd: random.Random) -> str:
    head = (f'---\nsession_id: "bench{i:04d}-{rnd.getrandbits(64):016x}"\ndate: "2026-10-01"\n'
            f'harness: "claude-code"\ncwd: "/home/user/p{i % 17}"\nchrollo_format: 1\n---\n\n')
    out, n = [head], len(head)
    t = 0
    while n < size:
        line = " ".join(rnd.choice(WORDS) for _ in range(14))
        turn = (f"[2026-10-01 10:{t // 60 % 60:02d}:{t % 60:02d}] [User]\n{line}?\n\n\n"
                f"[2026-10-01 10:{t // 60 % 60:02d}:{t % 60:02d}] [Agent]\n> {line}.\n> <tool>$ make {rnd.choice(WORDS)}</tool>\n"
                + (f"> password={rnd.getrandbits(48):x}\n" if t % 40 == 0 else "") + "\n\n")
        out.append(turn)
        n += len(turn)
        t += 1
    return "".join(out)


def dense_session(i: int, size: int, rnd: random.Random, lines: list, secrets: list) -> str:
    out, n, t = [session(i, 0, rnd)], 0, 0
    while n < size:
        turn = (f"[2026-10-01 10:{t // 60 % 60:02d}:{t % 60:02d}] [User]\n" + "\n".join(rnd.choice(lines) for _ in range(2))
                + f"\n\n\n[2026-10-01 10:{t // 60 % 60:02d}:{t % 60:02d}] [Agent]\n"
                + "\n".join("> " + rnd.choice(lines) for _ in range(6)) + "\n"
                + (rnd.choice(secrets) + "\n" if t % 50 == 7 else "") + "\n\n")
        out.append(turn)
        n += len(turn)
        t += 1
    return "".join(out)


def _pooled(redactor, data: list) -> list:
    """Publishing's way: what the cache lacks, redacted by one worker process per core (their
    start-up included)."""
    import chrollo.redact as R

    floor, R.POOL_MIN_BYTES = R.POOL_MIN_BYTES, 0
    try:
        with redactor.pool() as pool:
            return redactor.redact_many(data, pool)
    finally:
        R.POOL_MIN_BYTES = floor


def _cpu() -> float:
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def redaction(a) -> None:
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root / "tests"))
    import secret_corpus

    from chrollo.redact import Redactor
    from chrollo.rg import rg_path

    src = subprocess.run(["git", "-C", str(root), "show", f"{a.before}:chrollo/redact.py"],
                         capture_output=True, text=True, check=True).stdout
    spec = importlib.util.spec_from_loader("chrollo._redact_before", loader=None)
    before = importlib.util.module_from_spec(spec)
    before.__package__ = "chrollo"
    exec(compile(src, f"redact.py@{a.before[:7]}", "exec"), before.__dict__)
    old = before.Redactor()
    work = Path(tempfile.mkdtemp(prefix="chrollo-bench-redact-"))
    try:
        new = Redactor(rule_sets=str(work / "rule-sets.json"))  # (as publishing makes it: workers read the rule sets)
        cached = Redactor(cache=str(work / "redacted.sqlite"))
        kw = work / "keywords.txt"
        kw.write_text("\n".join(new._words) + "\n")
        rnd = random.Random(0)
        lines = secret_corpus.ordinary(20000)
        secrets = [t for _k, t, _v in secret_corpus.secrets(1)]
        each = int(a.mb * 1e6 / a.files)
        texts = {}
        for name, make in (("mesh", lambda i: session(i, each, rnd)),
                           ("dense", lambda i: dense_session(i, each, rnd, lines, secrets))):
            d = work / name
            d.mkdir()
            data = []
            for i in range(a.files):
                raw = make(i).encode()
                (d / f"s{i:05d}.md").write_bytes(raw)
                data.append(raw)
            texts[name] = (d, data)
        if a.vault:  # real sessions: the files of --vault, newest first, up to --mb
            d = work / "vault"
            d.mkdir()
            _fill(d, argparse.Namespace(vault=a.vault, mb=a.mb, files=0))
            texts["vault"] = (d, [f.read_bytes() for f in sorted(d.glob("*.md"))])
        for _d, data in texts.values():
            for raw in data:
                cached.redact_bytes(raw)  # the cache as a re-publish finds it
        variants = {
            "rg -i -F -f keywords (one pass, the floor)": lambda d, data: subprocess.run(
                [rg_path(), "-i", "-F", "-c", "-f", str(kw), str(d)], capture_output=True),
            f"before ({a.before[:7]})": lambda d, data: [old.redact_bytes(r) for r in data],
            "after": lambda d, data: [new.redact_bytes(r) for r in data],
            "after, one process per core (publishing)": lambda d, data: _pooled(new, data),
            "after, cached (re-publish)": lambda d, data: [cached.redact_bytes(r) for r in data],
        }
        best: dict = {}
        cpu: dict = {}  # CPU seconds (this process and its children): the share of a loaded machine's
        for _round in range(a.rounds):  # cores a run got does not count, what it did does
            for name, (d, data) in texts.items():
                for label, run in variants.items():
                    c0, t0 = _cpu(), time.perf_counter()
                    run(d, data)
                    dt, dc = time.perf_counter() - t0, _cpu() - c0
                    best[name, label] = min(best.get((name, label), dt), dt)
                    cpu[name, label] = min(cpu.get((name, label), dc), dc)
        print(f"{a.files} files per text, {a.mb:.0f} MB each; {len(new.rules)} rules, {len(new._words)} keywords; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; best of {a.rounds} interleaved rounds")
        print("\n| text | variant | seconds | MB/s | × rg | CPU seconds | MB per CPU second | × rg (CPU) |\n"
              "|---|---|---|---|---|---|---|---|")
        for name, (_d, data) in texts.items():
            mb = sum(map(len, data)) / 1e6
            floor, cfloor = best[name, next(iter(variants))], cpu[name, next(iter(variants))]
            for label in variants:
                dt, dc = best[name, label], cpu[name, label]
                print(f"| {name} | {label} | {dt:.2f} | {mb / dt:.1f} | {dt / floor:.1f} | {dc:.2f} | "
                      f"{mb / max(dc, 1e-9):.1f} | {dc / max(cfloor, 1e-9):.1f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=None, help="MB of session text (100; 20 with --redaction)")
    ap.add_argument("--files", type=int, default=None, help="files it is split into (1000; 200 with --redaction)")
    ap.add_argument("--transports", default="lan,folder,git")
    ap.add_argument("--redaction", action="store_true", help="time redaction alone (see above)")
    ap.add_argument("--before", default="dd97a3df", help="the revision whose chrollo/redact.py is 'before'")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--vault", help="sync these real session files (*.md, up to --mb) instead of generated ones")
    ap.add_argument("--repeat", type=int, default=1, help="re-syncs and new turns each timed this many times (medians)")
    ap.add_argument("--scratch", help="the folder the run's files are made in (default: the system's temp folder)")
    ap.add_argument("--keep", action="store_true", help="leave the run's files (see above)")
    a = ap.parse_args()
    if a.redaction:
        a.mb, a.files = a.mb or 20, a.files or 200
        return redaction(a)
    a.mb, a.files = a.mb or 100, a.files or 1000
    ap_transports = [t for t in a.transports.split(",") if t]
    work = Path(tempfile.mkdtemp(prefix="chrollo-bench-mesh-", dir=a.scratch))
    probe = _probe(work / "probe")
    cmd = chrollo_cmd()
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    envs = {n: dict(env0, CHROLLO_HOME=str(work / n)) for n in ("a", "b")}
    server = None

    def run(node, *args, check=True):
        p = subprocess.run(cmd + list(args), env=envs[node], capture_output=True, text=True)
        if check and p.returncode != 0:
            raise SystemExit(f"{node}: {' '.join(args)} failed: {p.stdout[-500:]} {p.stderr[-500:]}")
        return p

    def timed(node, *args):
        """(seconds, --json output, CPU seconds of the command and of the LAN server meanwhile)"""
        c0, s0, t0 = _cpu(), _proc_cpu(server), time.perf_counter()
        p = run(node, *args, "--json")
        return time.perf_counter() - t0, json.loads(p.stdout), _cpu() - c0 + _proc_cpu(server) - s0
    try:
        ids = {n: run(n, "mesh", "init", "--name", n).stdout.strip() for n in ("a", "b")}
        vault = work / "b" / "memories"
        vault.mkdir(parents=True)
        total = _fill(vault, a)
        t0 = time.perf_counter()
        shutil.copytree(vault, work / "cp-baseline")
        cp = time.perf_counter() - t0
        run("b", "mesh", "peers", "add", "--id", ids["a"], "--name", "a")
        rows = []
        turn = _capture(work, cmd, envs["b"])  # B's agent at work: its session is captured turn by turn
        turn()
        for tr in ap_transports:
            for d in ("memories/peers", "state/mesh/peers"):  # (moved aside: see above)
                if (work / "a" / d).exists():
                    (work / "a" / d).rename(work / f"aside-{tr}-{d.replace('/', '-')}")
            # each transport's first sync starts cold (the records under their older name too)
            for f in ("redacted.sqlite", "manifest-cache.records", "manifest-cache.json"):
                (work / "b" / "state" / "mesh" / f).unlink(missing_ok=True)
            if tr == "lan":
                server = subprocess.Popen(cmd + ["mesh", "serve", "--port", "0"], env=envs["b"],
                                          stderr=subprocess.PIPE, text=True)
                port = int(server.stderr.readline().split("127.0.0.1:")[1].split()[0])
                run("a", "mesh", "peers", "add", f"127.0.0.1:{port}", "--id", ids["b"], "--name", "b")
                where = ["--all"]
            else:
                run("a", "mesh", "peers", "add", "--id", ids["b"], "--name", "b")
                if tr == "folder":
                    (work / "shared").mkdir(exist_ok=True)
                    where = ["--folder", str(work / "shared")]
                else:
                    subprocess.run(["git", "init", "-q", "--bare", str(work / "remote.git")], check=True)
                    where = ["--git", str(work / "remote.git")]
                run("a", "mesh", "sync", *where)  # a publishes its certificate
            for label in ("first sync", "re-sync (nothing new)", "one new turn"):
                runs = []  # (B's seconds, CPU; A's seconds, CPU, its result) of each repetition
                if label == "one new turn":
                    # B's first pull made <vault>/peers/, and a publication that reads the vault
                    # folder's mtime within a second of a change (manifests.RACY_NS) cannot trust
                    # it and stats every file (~0.07 s more) — a sync a minute after the first
                    # does not; turns timed within that second measured it (--repeat 1-4).
                    # (Waited from the last sync: later than the change, never sooner)
                    time.sleep(max(0.0, 1.1 - (time.perf_counter() - last_sync)))
                for _ in range(1 if label == "first sync" else a.repeat):
                    if label == "one new turn":
                        turn()  # (through capture, as a turn reaches the vault: the Stop hook)
                    b = timed("b", "mesh", "sync", *where) if tr != "lan" else (0.0, None, 0.0)
                    dt, out, dc = timed("a", "mesh", "sync", *where)
                    runs.append((b[0], b[2], dt, dc, out["peers"][0]))
                    last_sync = time.perf_counter()
                med = lambda i: statistics.median(r[i] for r in runs)  # noqa: E731
                label += f" (median of {len(runs)})" if len(runs) > 1 else ""
                if tr != "lan":
                    rows.append((f"{tr}, {label}: B publishes (redact, seal, write)", med(0), med(1), None))
                rows.append((f"{tr}, {label}: A takes", med(2), med(3), runs[-1][4]))
                if tr != "lan":
                    both = [r[0] + r[2] for r in runs], [r[1] + r[3] for r in runs]
                    rows.append((f"**{tr}, {label}: both**", statistics.median(both[0]), statistics.median(both[1]), None))
            if server:
                server.kill()
                server.wait()
                server = None
        print(f"{a.files} files, {total / 1e6:.1f} MB in B's vault ({a.vault or 'generated sessions'}); "
              f"{' '.join(cmd)}; cp -r baseline {cp:.2f} s; creating an empty file {probe * 1e6:.0f} us "
              f"(in {work.parent}); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print("\n| run | seconds | × cp -r | CPU seconds (both nodes) | files taken | MB taken | MB/s of vault |\n"
              "|---|---|---|---|---|---|---|")
        for label, dt, dc, r in rows:
            took = f"{r['downloaded']} | {r['bytes'] / 1e6:.1f}" if r else "- | -"
            print(f"| {label} | {dt:.2f} | {dt / cp:.1f} | {dc:.2f} | {took} | {total / 1e6 / dt:.1f} |")
        got = work / "a" / "memories" / "peers" / "b"
        print(f"\nA holds {len(list(got.glob('*.md')))} files from b")
    finally:
        if server:
            server.kill()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def _probe(d: Path, n: int = 2000) -> float:
    """Seconds to create an empty file in ``d`` (a new folder; the files are left: see above)."""
    d.mkdir()
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        t0 = time.perf_counter()
        for i in range(n):
            os.close(os.open(f"p{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=fd))
        return (time.perf_counter() - t0) / n
    finally:
        os.close(fd)


def _capture(work: Path, cmd: list, env: dict):
    """A function that adds one turn to a Claude Code transcript and runs the Stop hook on it
    (real capture into B's vault: the first call creates the session's file, later ones append)."""
    import uuid

    sid, tr, n = str(uuid.uuid4()), work / "transcript.jsonl", [0]
    stop = {"session_id": sid, "transcript_path": str(tr), "cwd": "/home/user/project",
            "hook_event_name": "Stop", "stop_hook_active": False}

    def turn() -> None:
        recs = claude_turn(n[0], sid, time.time())
        n[0] += 1
        with open(tr, "a") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in recs)
        run_hook(cmd + ["hook", "Stop", "--harness", "claude-code"],
                 dict(stop, last_assistant_message=recs[-1]["message"]["content"][0]["text"]), env)
    return turn


def _fill(vault: Path, a) -> int:
    """B's vault: --files generated sessions of --mb in all, or (--vault DIR) real session files
    copied from DIR, newest first, up to --mb. Returns the bytes written."""
    total = 0
    if a.vault:
        for f in sorted(Path(a.vault).glob("*.md"), reverse=True):
            if total >= a.mb * 1e6:
                break
            shutil.copyfile(f, vault / f.name)
            total += f.stat().st_size
        a.files = len(list(vault.glob("*.md")))
        return total
    rnd = random.Random(0)
    each = int(a.mb * 1e6 / a.files)
    for i in range(a.files):
        text = session(i, each, rnd)
        (vault / f"2026-10-01_{i // 60 % 24:02d}{i % 60:02d}00_b{i:07d}.md").write_text(text)
        total += len(text.encode())
    return total


def _proc_cpu(proc) -> float:
    """CPU seconds a running process (the LAN server) and its ended children have used (Linux
    /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        # its own and its reaped children's: the redaction workers of its publication
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (AttributeError, OSError, ValueError, IndexError):
        return 0.0


if __name__ == "__main__":
    main()
