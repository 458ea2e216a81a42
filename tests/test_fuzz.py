"""Property-based fuzzing of every command, option, MCP argument and hook payload (#33), and
the faults real machines have (#44): long commands (index, import, install, mesh sync, forget)
stopped by SIGINT, SIGTERM or SIGKILL at a random point, capture, import, index and forget on a
full disk, commands run from a deleted or read-only working folder.

The properties and the sandbox are in ``tests/fuzzkit.py``. A fixed seed (hypothesis's
``derandomize``) and bounded counts keep this CI's: ~2,400 examples in all. ``CHROLLO_FUZZ_SCALE``
multiplies every count (``bench/fuzz.py`` runs it at 25×: 60,000 examples); with a scale set
the seed comes from ``CHROLLO_FUZZ_SEED`` so a long run explores other inputs than CI's.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import fuzzkit as fk
from fuzzkit import HARNESSES, SID, Sandbox, check, invoke, known, spawn

SCALE = float(os.environ.get("CHROLLO_FUZZ_SCALE", "1"))
SEED = int(os.environ["CHROLLO_FUZZ_SEED"]) if os.environ.get("CHROLLO_FUZZ_SEED") else None
PROGRESS = os.environ.get("CHROLLO_FUZZ_PROGRESS")  # (read now: each example clears CHROLLO_*)
FOUND: list = []  # failures that belong to another helper's open item (fuzzkit.KNOWN)
SLOW: list = []   # (seconds, args) of runs over a second: printed by the last test
COUNT: dict = {}  # examples run, per property: printed by the last test


def budget(n: int, cap: float | None = None):
    """Settings for ``n`` examples (× the scale, at most × ``cap``): fixed seed in CI, none of
    hypothesis's state."""
    kw = dict(max_examples=max(1, int(n * (SCALE if cap is None else min(SCALE, cap)))), deadline=None, database=None, print_blob=True,
              suppress_health_check=list(HealthCheck))
    if SEED is not None:
        return lambda f: seed(SEED)(settings(**kw)(f))
    return settings(derandomize=True, **kw)


@pytest.fixture(scope="module")
def sb(tmp_path_factory):
    box = Sandbox(tmp_path_factory.mktemp("fuzz"))
    saved = dict(os.environ), os.getcwd()
    yield box
    os.environ.clear()
    os.environ.update(saved[0])
    os.chdir(saved[1])


def fresh(sb: Sandbox, now) -> None:
    """The world as the template left it, the environment a user would have, cwd the project."""
    sb.reset()
    for k in [k for k in os.environ if k.startswith(("CHROLLO_", "CLAUDE_", "CODEX_", "GEMINI_", "PI_"))]:
        del os.environ[k]
    os.environ.update(sb.env())
    if now is not None:
        os.environ["CHROLLO_NOW"] = now
    os.chdir(sb.project)


def counted(what: str) -> None:
    """One more example of ``what``; with CHROLLO_FUZZ_PROGRESS set, the counts so far are
    written there every 100 examples (a long run can be read while it runs)."""
    COUNT[what] = COUNT.get(what, 0) + 1
    where = PROGRESS
    if where and sum(COUNT.values()) % 100 == 0:
        with open(where, "w", encoding="utf-8") as fh:
            json.dump({"examples": sum(COUNT.values()), "found": len(FOUND), "by": COUNT}, fh)


def verdict(sb: Sandbox, args: list, r, **kw) -> None:
    counted(args[0] if args and args[0] in ALL_COMMANDS else "(other argv)")
    problem = check(args, r, **kw)
    if problem is not None:
        owner = known(args, r)
        if owner is None:
            raise AssertionError(f"chrollo {args!r}: {problem}\n{r!r}")
        FOUND.append((owner, args, problem))
    assert sb.snapshot_outside() == sb.outside_before, f"chrollo {args!r} changed a file outside the sandbox"


# ----------------------------------------------------------------------------- argument builders

def options(draw, specs: list, max_n: int = 5) -> list:
    """A few of ``specs`` ((flag, strategy or None for a switch)), in any order, repeats allowed."""
    out = []
    for flag, value in draw(st.lists(st.sampled_from(specs), max_size=max_n)):
        out += [flag] if value is None else ([f"{flag}={draw(value)}"] if draw(st.booleans()) and flag.startswith("--")
                                             else [flag, draw(value)])
    if draw(st.integers(0, 30)) == 0:
        out.insert(draw(st.integers(0, len(out))), draw(st.sampled_from(["--help", "-h", "--bogus", "-Z", "--", "--json"])))
    return out


def words():
    return st.one_of(st.sampled_from(["refund", "race", "settle_refund", "parseConfig", "the", "a", "S3", "backup",
                                      "sk_live_51H8aaaabbbbccccdddd", "payments/settlement.py:42", "(", ")", "\\b",
                                      "-", "'", "é", "日本語"]), fk.text(30))


def search_args(draw, sb):
    q = draw(st.lists(words(), min_size=0, max_size=6))
    if draw(st.integers(0, 40)) == 0:
        q = q + ["refund"] * 150 + ["parse_config"]
    opts = options(draw, [("-n", fk.number()), ("--limit", fk.number()), ("-C", fk.number()),
                          ("--context", fk.number()), ("--since", fk.date()), ("--until", fk.date()),
                          ("--project", sb.read_paths()), ("--all-vaults", None),
                          ("--harness", st.one_of(st.sampled_from(HARNESSES + ["jsonl", "nonsuch", ""]), fk.text(10))),
                          ("--peer", st.sampled_from(["alice", "bob", "", "../x", "alice\n"])), ("--no-peers", None),
                          ("--dir", sb.read_paths()), ("--json", None), ("--compact", None), ("--expand", None),
                          ("--no-expand", None), ("--raw", None)])
    return ["search", *q, *opts] if draw(st.booleans()) else ["search", *opts, *q]


def read_args(draw, sb):
    return ["read", draw(sb.read_paths()), *options(draw, [
        ("-B", fk.number()), ("--before", fk.number()), ("-A", fk.number()), ("--after", fk.number()),
        ("--turn", None), ("--dir", sb.read_paths()), ("--json", None), ("--raw", None)])]


def stats_args(draw, sb):
    return ["stats", *options(draw, [("--dir", sb.read_paths()), ("--json", None), ("--since", fk.date()),
                                     ("--until", fk.date()), ("--per", st.sampled_from(["day", "week", "month", ""])),
                                     ("--by", st.sampled_from(["project", "harness", "x"]))])]


def recall_args(draw, sb):
    """`recall why` (the budget at and past its bounds) and `recall log`."""
    if draw(st.integers(0, 3)) == 0:
        return ["recall", "log", *options(draw, [("--json", None), ("-n", fk.number())], 2)]
    budget = st.one_of(st.sampled_from(["small", "medium", "large", "LARGE", "huge", "499", "500", "9500", "9501"]),
                       fk.number())
    return ["recall", "why", *draw(st.lists(words(), min_size=1, max_size=5)), *options(draw, [
        ("--budget", budget), ("--session", st.sampled_from([SID, "", "x"])), ("--dir", sb.read_paths()),
        ("--json", None)], 4)]


def init_args(draw, sb):
    path = draw(st.one_of(st.just([]), sb.write_paths().map(lambda p: [p])))
    return ["init", *path, *options(draw, [("--untrust", None), ("--list", None), ("--json", None)], 3)]


def harness_args(draw, sb):
    cmd = draw(st.sampled_from(["install", "uninstall"]))
    h = draw(st.one_of(st.sampled_from(HARNESSES), fk.text(10)))
    specs = [("--mcp", None), ("--no-mcp", None), ("--config", sb.write_paths()), ("--json", None)]
    if cmd == "install":
        specs.append(("--vault", sb.write_paths()))
    return [cmd, h, *options(draw, specs, 4)]


def config_args(draw, sb):
    key = draw(st.one_of(st.sampled_from([[], ["redact-capture"], ["vault"], ["recall-log"], ["recall-log-days"],
                                          ["recall-log-max-mb"]]), fk.text(10).map(lambda t: [t])))
    value = draw(st.one_of(st.just([]), st.sampled_from(["on", "off", "ON", "1", ""]).map(lambda v: [v]),
                           fk.number().map(lambda v: [v]), sb.write_paths().map(lambda p: [p])))
    return ["config", *key, *value, *options(draw, [("--unset", None), ("--json", None)], 2)]


def exclude_args(draw, sb):
    action = draw(st.one_of(st.sampled_from([[], ["add"], ["remove"], ["list"]]), fk.text(6).map(lambda t: [t])))
    paths = draw(st.lists(st.one_of(sb.write_paths(), sb.read_paths(), st.sampled_from(["~/clients/*", "*", "[", "**"])),
                          max_size=3))
    return ["exclude", *action, *paths, *options(draw, [("--json", None)], 1)]


def import_args(draw, sb):
    src = draw(st.one_of(st.sampled_from(["claude-code", "codex", "gemini", "pi", "all", "jsonl", "chrollo-vault"]),
                         fk.text(8)))
    return ["import", src, *options(draw, [("--source", sb.read_paths()), ("--since", fk.date()), ("--dry-run", None),
                                           ("--as", st.one_of(st.sampled_from(HARNESSES + ["x"]), fk.text(10))),
                                           ("--json", None)])]


def forget_args(draw, sb):
    sessions = draw(st.lists(sb.read_paths(), max_size=3))
    return ["forget", *sessions, *options(draw, [
        ("--since", fk.date()), ("--until", fk.date()), ("--project", sb.read_paths()),
        ("--lines", st.one_of(words(), st.sampled_from(["(", "[a-", "a{99999999}", "(a+)+$", "", "\n"]))),
        ("--regex", None), ("--secrets", None), ("--dir", st.one_of(st.just(str(sb.vault)), sb.write_paths())),
        ("--dry-run", None), ("--yes", None), ("-y", None), ("--json", None)], 6)]


def mesh_args(draw, sb):
    name = st.one_of(st.sampled_from(["alice", "bob", "laptop", "a" * 64, "A", "-x", "alice\n", ""]), fk.text(12))
    node_id = st.one_of(st.sampled_from(["", "XXXX", "A" * 64, "-".join(["ABCDEFG"] * 8)]), fk.text(70))
    sub = draw(st.sampled_from(["init", "id", "peers", "list", "add", "remove", "set", "status", "sync", "key"]))
    if sub == "init":
        return ["mesh", "init", *options(draw, [("--name", name), ("--force", None), ("--json", None),
                                                 ("--join", fk.text(10))], 3)]
    if sub in ("id", "key"):
        return ["mesh", sub]
    if sub == "peers":
        return ["mesh", "peers", *options(draw, [("--json", None)], 1)]
    if sub in ("list", "remove"):
        return ["mesh", "peers", sub, *([draw(name)] if sub == "remove" else []), *options(draw, [("--json", None)], 1)]
    if sub == "add":
        addr = draw(st.one_of(st.just([]), st.sampled_from(["127.0.0.1:1", "host:0", "host:99999", "[::1]:47470",
                                                             ":", "x"]).map(lambda a: [a]), fk.text(15).map(lambda a: [a])))
        return ["mesh", "peers", "add", *addr, *options(draw, [("--id", node_id), ("--name", name), ("--json", None)], 4)]
    if sub == "set":
        return ["mesh", "peers", "set", draw(name), *options(draw, [
            ("--searchable", None), ("--no-searchable", None), ("--recall", None), ("--no-recall", None),
            ("--quota", fk.number()), ("--address", st.one_of(st.sampled_from(["1.2.3.4:5", "x:-1", "::"]), fk.text(12))),
            ("--json", None)])]
    if sub == "status":
        return ["mesh", "status", *options(draw, [("--json", None)], 1)]
    return ["mesh", "sync", *draw(st.one_of(st.just([]), name.map(lambda n: [n]))), *options(draw, [
        ("--all", None), ("--folder", sb.write_paths()), ("--dir", st.one_of(st.just(str(sb.vault)), sb.write_paths())),
        ("--json", None)], 4)]


def junk_args(draw, sb):
    """Unknown commands, bare groups, help and version flags, arbitrary argv."""
    return draw(st.one_of(
        st.lists(fk.text(12), max_size=4),
        st.sampled_from([[], ["--help"], ["--version"], ["mesh"], ["mesh", "peers", "bogus"], ["bogus", "--json"],
                         ["search"], ["search", "--json"], ["read"], ["import"], ["install"], ["hook", "--help"]])))


COMMANDS = {  # name: (builder, examples in CI)
    "search": (search_args, 250), "read": (read_args, 300), "stats": (stats_args, 100), "init": (init_args, 80),
    "install": (harness_args, 120), "config": (config_args, 100), "exclude": (exclude_args, 80),
    "import": (import_args, 120), "forget": (forget_args, 150), "mesh": (mesh_args, 120), "junk": (junk_args, 100),
    "recall": (recall_args, 80),
}


ALL_COMMANDS = {"search", "read", "stats", "init", "demo", "mcp", "install", "uninstall", "config", "doctor",
                "import", "forget", "exclude", "mesh", "hook", "recall", "index", "sessions"}


def _cli_case(name):
    build, n = COMMANDS[name]

    @budget(n)
    @given(data=st.data(), now=fk.clock())
    def case(sb, data, now):
        fresh(sb, now)
        args = data.draw(st.composite(lambda draw: build(draw, sb))(), label="args")
        t0 = time.monotonic()
        r = invoke(args)
        if time.monotonic() - t0 > 1:
            SLOW.append((round(time.monotonic() - t0, 1), args))
        verdict(sb, args, r)
    return case


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_keeps_the_output_contract(sb, name):
    _cli_case(name)(sb)


# ----------------------------------------------------------------------------- hooks

EVENTS = {"claude-code": ["UserPromptSubmit", "Stop", "SubagentStop", "PreCompact", "SessionEnd", "SessionStart"],
          "codex": ["UserPromptSubmit", "Stop", "notify"], "gemini": ["BeforeAgent", "AfterAgent", "SessionEnd"],
          "pi": ["before_agent_start", "agent_end", "session_shutdown"]}

JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                              st.floats(allow_nan=False), fk.text(20)),
                    lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(fk.text(8), kids, max_size=4)),
                    max_leaves=12)


def hook_payload(draw, sb) -> bytes:
    anything = st.one_of(JSON, sb.read_paths(), fk.text(50), st.sampled_from(["x" * 200_000, SID, SID[:8], "../" * 30]))
    body = {k: draw(anything) for k in draw(st.lists(st.sampled_from([
        "session_id", "transcript_path", "cwd", "prompt", "hook_event_name", "last_assistant_message",
        "prompt_response", "agent_id", "agent_transcript_path", "messages", "thread-id", "input-messages",
        "last-assistant-message", "stop_hook_active", "type"]), max_size=8))}
    if draw(st.booleans()):
        body.setdefault("session_id", draw(st.sampled_from([SID, "019eb1a9-bc39-7571-b68f-9e5ed2678d73", "s-1"])))
        body.setdefault("cwd", str(sb.project))
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.binary(max_size=300))
    if kind == 1:
        return json.dumps(draw(JSON)).encode()
    raw = json.dumps(body, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    return raw[:draw(st.integers(0, len(raw)))] if kind == 2 else raw


@budget(200)
@given(data=st.data(), now=fk.clock())
def _hooks(sb, data, now):
    fresh(sb, now)
    harness = data.draw(st.one_of(st.sampled_from(HARNESSES), fk.text(8)), label="harness")
    event = data.draw(st.one_of(st.sampled_from(EVENTS.get(harness, ["Stop"]) + ["", "bogus"]), fk.text(10)),
                      label="event")
    extra = data.draw(st.one_of(st.just([]), fk.number().map(lambda b: ["--budget", b]),
                                st.sampled_from([["--budget", "small"], ["--budget"], ["--weird"]])), label="extra")
    stdin = hook_payload(data.draw, sb)
    args = ["hook", event, "--harness", harness, *extra]
    if harness == "codex" and event == "notify":
        args.append(stdin.decode("utf-8", "surrogateescape"))
        stdin = b""
    log = sb.home / "logs" / "hooks.log"
    r = invoke(args, stdin)
    verdict(sb, args, r, hook_harness=harness)
    logged = log.read_text("utf-8", "replace") if log.exists() else ""
    if "Traceback" in logged:
        fake = fk.Result(r.code, r.out, logged, None)
        owner = known(args, fake)
        if owner is None:
            raise AssertionError(f"chrollo {args!r} with {stdin[:300]!r}: the hook logged a traceback\n{logged[-3000:]}")
        FOUND.append((owner, args, "hook logged a traceback"))


def test_hooks_always_exit_0_with_valid_or_empty_output(sb):
    _hooks(sb)


# ----------------------------------------------------------------------------- MCP

def mcp_line(draw, sb) -> bytes:
    tool = draw(st.sampled_from(["read_memory", "read_memory_file", "nonsuch", ""]))
    num = st.one_of(st.integers(-2**40, 2**40), st.sampled_from([0, 1, 50, 51, 2000, 2001, 1.0, 5.5, 1e308, -0.0, True,
                                                                 None, "5", " 5 ", "x", "", [], {}])),
    arg = {"read_memory": {"query": st.one_of(words(), fk.text(100), st.sampled_from(["x" * 5000, "refund " * 300]),
                                              JSON), "limit": num[0]},
           "read_memory_file": {"path": st.one_of(sb.read_paths(), JSON), "line": num[0], "before": num[0],
                                "after": num[0]}}.get(tool, {"x": JSON})
    args = {k: draw(v) for k, v in arg.items() if draw(st.integers(0, 4))}
    msg = {"jsonrpc": "2.0", "id": draw(st.one_of(st.integers(0, 9), fk.text(5))), "method": "tools/call",
           "params": {"name": tool, "arguments": args if draw(st.integers(0, 20)) else draw(JSON)}}
    if draw(st.integers(0, 10)) == 0:
        msg = draw(JSON)
    return json.dumps(msg).encode("utf-8", "surrogatepass")


@budget(300)
@given(data=st.data(), now=fk.clock())
def _mcp(sb, data, now):
    from chrollo.mcp_server import INTERNAL_ERROR, Server

    fresh(sb, now)
    where = data.draw(st.sampled_from([None, str(sb.vault), str(sb.scratch / "nope"), str(sb.outside / "fifo.md")]))
    line = mcp_line(data.draw, sb)
    reply = Server(where).handle_line(line)
    text = json.dumps(reply)  # what goes on the wire must be JSON
    counted("mcp tools/call")
    for r in reply if isinstance(reply, list) else [reply]:
        assert r is None or r.get("error", {}).get("code") != INTERNAL_ERROR, f"{line[:500]!r} -> {text[:2000]}"
    assert sb.snapshot_outside() == sb.outside_before


def test_mcp_tools_answer_every_argument(sb):
    _mcp(sb)


# ----------------------------------------------------------------------------- real processes

def process_args(draw, sb):
    which = draw(st.sampled_from(["search", "read", "stats", "hook", "mcp", "demo", "doctor", "serve"]))
    if which in ("search", "read", "stats"):
        return {"search": search_args, "read": read_args, "stats": stats_args}[which](draw, sb), b""
    if which == "hook":
        h = draw(st.sampled_from(HARNESSES))
        return ["hook", draw(st.sampled_from(EVENTS[h])), "--harness", h], hook_payload(draw, sb)
    if which == "mcp":
        lines = b"\n".join(mcp_line(draw, sb) for _ in range(draw(st.integers(1, 4))))
        init = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n'
        return ["mcp", *draw(st.sampled_from([[], ["--dir", str(sb.vault)], ["--dir", "/proc/x"]]))], init + lines + b"\n"
    if which == "demo":
        return ["demo", *draw(st.sampled_from([[], ["--keep", str(sb.scratch / "kept")]]))], b""
    if which == "doctor":
        return ["doctor", *options(draw, [("--harness", st.sampled_from(HARNESSES + ["x"])), ("--json", None)], 2)], b""
    # serve: only values that cannot serve (a serve that starts would run until killed)
    return ["mesh", "serve", "--port", draw(st.sampled_from(["-1", "65536", "99999999999", "x"]))], b""


@budget(20, cap=5)  # (a process costs ~10 in-process runs: the long run takes 100, not 500)
@given(data=st.data(), now=fk.clock())
def _processes(sb, data, now):
    fresh(sb, now)
    args, stdin = data.draw(st.composite(lambda draw: process_args(draw, sb))(), label="args")
    env = dict(sb.env(), **({"CHROLLO_NOW": now} if now else {}))
    t0 = time.monotonic()
    r = spawn(args, env, sb.project, stdin, timeout=90)
    if time.monotonic() - t0 > 1:
        SLOW.append((round(time.monotonic() - t0, 1), args))
    if args[0] == "mcp":
        counted("mcp")
        replies = [json.loads(x) for x in r.out.splitlines() if x.strip()]
        assert r.code == 0 and all(isinstance(x, (dict, list)) for x in replies), r
        assert "Traceback" not in r.err, r
        return
    verdict(sb, args, r, **({"hook_harness": args[3]} if args[0] == "hook" else {}))


def test_real_processes_keep_the_output_contract(sb):
    _processes(sb)


# ----------------------------------------------------------------------------- faults (#44)

FAULT_NOW = "2026-11-01T12:00:00"
SIGNALS = {"SIGINT": fk.signal.SIGINT, "SIGTERM": fk.signal.SIGTERM, "SIGKILL": fk.signal.SIGKILL}


def transcripts(sb: Sandbox) -> Path:
    """A folder of 120 small generic transcripts (built once, outside the sandbox's live part):
    an import of it takes long enough to be interrupted midway."""
    src = sb.tmp / "transcripts"
    if not src.exists():
        src.mkdir()
        for i in range(120):
            lines = [{"role": "user" if k % 2 == 0 else "assistant", "content": f"fault note {i} turn {k} refund race",
                      "timestamp": f"2026-05-{1 + i % 28:02d}T10:{k:02d}:00Z", **({"session_id": f"fault-{i:04d}"} if k == 0 else {})}
                     for k in range(6)]
            (src / f"t{i:04d}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return src


FORGETS = {  # (what a forget of the fault runs is asked to do) -> its arguments
    "lines": ["forget", "--lines", "refund", "--yes"],  # scrubs 160 files, renames the format-2 ones
    "range": ["forget", "--since", "2026-05-03", "--until", "2026-05-25", "--yes"],  # deletes ~120 sessions
    "secrets": ["forget", "--secrets", "--yes"],
}


def forgettable(sb: Sandbox) -> None:
    """160 more sessions in the vault (half format 2: the title, and so the name, holds
    "refund"; a key to find), and an index of it all — a forget of them takes long enough to
    be interrupted midway. Built once outside the sandbox, copied in."""
    from conftest import write_session

    src = sb.tmp / "forgettable"
    if not src.exists():
        for i in range(160):
            write_session(src, f"f0{i:06d}-0000-4000-8000-{i:012d}", f"2026-05-{1 + i % 28:02d}T11:{i % 60:02d}:00", [
                ("user", "11:00:00", f"refund race {i} with sk_live_51H8{i:04d}bbbbccccddddeeee"),
                ("agent", "11:00:20", [f"note {i}: lock the refund", "nothing else"])],
                cwd=str(sb.live / "project"), fmt=1 + i % 2)
    for p in src.iterdir():
        shutil.copy2(p, sb.vault / p.name)
    assert spawn(["index"], dict(sb.env(), CHROLLO_NOW=FAULT_NOW), sb.project).code == 0


def fault_command(sb: Sandbox, kind: str, harness: str) -> list:
    if kind in FORGETS:
        return FORGETS[kind]
    if kind == "index":
        return ["index", "--rebuild"]
    if kind == "import":
        return ["import", "jsonl", "--source", str(transcripts(sb))]
    if kind == "install":
        return ["install", harness]
    shared = sb.scratch / "shared"
    shared.mkdir(exist_ok=True)
    return ["mesh", "sync", "--folder", str(shared)]


def outcome(sb: Sandbox, kind: str, harness: str) -> dict:
    """(exit code, what it leaves) of an uninterrupted command of ``kind``: the vault's session
    files (import) or the harness's config files (install); {} for the others. Once per kind
    and harness."""
    key = (kind, harness if kind == "install" else "")
    if key not in BASELINE:
        sb.reset()
        sb._clean = None  # (the next example starts from the template again)
        env = dict(sb.env(), CHROLLO_NOW=FAULT_NOW)
        prepare(sb, kind, env)
        r = spawn(fault_command(sb, kind, harness), env, sb.project)
        assert r.code in (0, 1) and "Traceback" not in r.err, r  # (1: the sandbox's odd gemini settings)
        BASELINE[key] = r.code, leaves(sb, kind)
    return BASELINE[key]


BASELINE: dict = {}


def prepare(sb: Sandbox, kind: str, env: dict) -> None:
    """What a command of ``kind`` starts from, beyond the sandbox."""
    if kind == "mesh":
        assert spawn(["mesh", "init", "--name", "fuzz"], env, sb.project).code == 0
    if kind in FORGETS:
        forgettable(sb)


def leaves(sb: Sandbox, kind: str) -> dict:
    if kind == "import" or kind in FORGETS:  # (every file, a hidden temporary one too)
        return {p.relative_to(sb.vault).as_posix(): p.read_bytes() for p in sb.vault.rglob("*")
                if p.is_file() and not p.is_symlink() and "/.chrollo-index" not in p.as_posix()}
    if kind == "install":
        user = sb.live / "user"
        return {p.relative_to(user).as_posix(): p.read_bytes() for p in user.rglob("*") if p.is_file()}
    return {}


@budget(16, cap=4)
@given(kind=st.sampled_from(["index", "import", "install", "mesh", *FORGETS]), harness=st.sampled_from(HARNESSES),
       sig=st.sampled_from(sorted(SIGNALS)), after=st.floats(0.01, 1.5))
def _faults(sb, kind, harness, sig, after):
    code, base = outcome(sb, kind, harness)
    fresh(sb, FAULT_NOW)
    sb._clean = None  # (an interrupted run may leave what reset's fingerprint cannot see)
    env = dict(sb.env(), CHROLLO_NOW=FAULT_NOW)
    prepare(sb, kind, env)
    before = leaves(sb, kind)
    args = fault_command(sb, kind, harness)
    stopped = fk.run_stopped(args, env, sb.project, SIGNALS[sig], after)
    counted(f"fault {kind} {sig}")
    what = f"chrollo {args!r} stopped by {sig} after {after:.2f} s: {stopped!r}"
    assert stopped.seconds is not None, f"{what}: it hung"
    assert not stopped.orphans, f"{what}: a process of it outlived it"
    assert "Traceback" not in stopped.err, f"{what}: a traceback"
    if kind in FORGETS:  # each session forgotten whole or left as it was: never half of it
        half = forget_halves(leaves(sb, kind), before, base)
        assert not half, f"{what}: half-forgotten: {half[:5]}"
    again = spawn(args, env, sb.project)  # the next command of its kind works …
    assert again.code == code and "Traceback" not in again.err, f"{what}; then: {again!r}"
    if kind == "index" or kind in FORGETS:  # … takes no lock left held, the index answers as the scan does
        from chrollo.index.build import building

        assert not building(str(sb.vault))
        for q in (["refund", "race"], ["lock", "the"], ["note"]):
            hits = [spawn(["search", *q, "-n", "50", "--json"], dict(env, CHROLLO_INDEX=flag), sb.project).out
                    for flag in ("1", "0")]
            assert json.loads(hits[0]).get("hits") == json.loads(hits[1]).get("hits") is not None, \
                f"{what}: search {q} differs: {hits[0][:1000]} / {hits[1][:1000]}"
    if kind != "index":  # … and leaves what an uninterrupted one does (nothing half-written)
        got = leaves(sb, kind)
        differ = sorted(k for k in set(got) | set(base) if got.get(k) != base.get(k))
        assert not differ, f"{what}: {differ[:5]} differ from an uninterrupted run's, e.g. " \
                           f"{got.get(differ[0], b'(none)')[:1500]!r} instead of {base.get(differ[0], b'(none)')[:1500]!r}"
    assert sb.snapshot_outside() == sb.outside_before, what


def forget_halves(now: dict, before: dict, done: dict) -> list:
    """The files of an interrupted forget whose bytes are neither as they were nor as a whole
    forget leaves them — under any name, and its links to other files aside: a rename and
    the links that follow it may lag (the next forget makes them); hidden temporary files
    aside (a SIGKILL leaves one; the next forget removes it)."""
    import re

    def ident(name):  # (folder, start and id prefix: what a rename keeps)
        head, _, tail = name.rpartition("/")
        return head, tail[:17], tail.rsplit("_", 1)[-1]

    def unlinked(data):
        return re.sub(rb"(?m)^(previous|parent): .*$", b"", data)
    whole = {ident(k): unlinked(v) for k, v in done.items()}
    return [name for name, data in now.items() if not name.rpartition("/")[2].startswith(".")
            and before.get(name) != data and whole.get(ident(name)) != unlinked(data)]


@pytest.mark.skipif(not fk.sys.platform.startswith("linux"), reason="Linux /proc")
def test_long_commands_stopped_by_a_signal_leave_nothing_broken(sb):
    _faults(sb)


def capture(sb: Sandbox, env: dict, event: str, text: str, fsize: int | None = None):
    """One codex hook call of the fault session (a prompt, or an answer: a turn)."""
    body = {"session_id": "019f0000-full-4000-8000-000000000001", "transcript_path": None, "cwd": str(sb.project),
            "hook_event_name": event, **({"prompt": text} if event == "UserPromptSubmit" else
                                         {"last_assistant_message": text})}
    return fk.spawn_in(["hook", event, "--harness", "codex"], dict(env, **({"FUZZ_FSIZE": str(fsize)} if fsize is not None else {})),
                       sb.project, "here", stdin=json.dumps(body).encode())


FULL = {"capture": None, "import": "import", "index": "index", **{k: k for k in FORGETS}}  # kind -> fault kind


@budget(12, cap=4)
@given(kind=st.sampled_from(sorted(FULL)), room=st.sampled_from([0, 1, 512, 4096, 65536, 1 << 20]),
       size=st.integers(1, 40))
def _full_disk(sb, kind, room, size):
    """A command on a full disk (no file may grow past ``room`` bytes): a clear error or done,
    exit 0/1 (a hook 0, silent), no traceback, nothing half-written; with room again the next
    run catches up — what an uninterrupted run leaves, search answering as the scan."""
    fault = FULL[kind]
    code, base = outcome(sb, fault, "codex") if fault else (0, {})
    fresh(sb, FAULT_NOW)
    sb._clean = None
    env = dict(sb.env(), CHROLLO_NOW=FAULT_NOW)
    if fault:
        prepare(sb, fault, env)
    before = leaves(sb, "import")
    answer = "full disk answer " * size * 200
    if kind == "capture":
        assert capture(sb, env, "UserPromptSubmit", "the full disk question").code == 0
        r = capture(sb, env, "Stop", answer, room)
        args = ["hook", "Stop"]
    else:
        args = fault_command(sb, fault, "codex") + (["--json"] if kind != "index" else ["--json"])
        r = fk.spawn_in(args, dict(env, FUZZ_FSIZE=str(room)), sb.project, "here")
    counted(f"full disk {kind}")
    what = f"chrollo {args!r} with files limited to {room} bytes: {r!r}"
    assert "Traceback" not in r.err, what
    if kind == "capture":
        assert r.code == 0 and r.out.strip() == "", what
    else:
        assert r.code in (0, 1), what
        if r.code == 1:
            assert set(json.loads(r.out)["error"]) == {"kind", "message", "hint"}, what
    log = sb.home / "logs" / "hooks.log"
    logged = log.read_text("utf-8", "replace") if log.exists() else ""
    assert "Traceback" not in logged, f"{what}\n--- hooks.log\n{logged[-3000:]}"
    now = leaves(sb, "import")  # nothing half-written: each file as it was or whole
    hidden = [k for k in now if k.rpartition("/")[2].startswith(".")]
    assert not hidden, f"{what}: {hidden}"
    if fault in FORGETS:
        assert not forget_halves(now, before, base), what
    # with room again, the next run catches up
    if kind == "capture":
        assert capture(sb, env, "UserPromptSubmit", "the question after").code == 0
        assert capture(sb, env, "Stop", "the answer after").code == 0
        from chrollo.session import read_session

        mine = [p for p in sb.vault.glob("*.md") if "019f0000" in p.name]
        assert len(mine) == 1, what
        texts = [t.text for t in read_session(mine[0]).turns]
        assert "the answer after" in texts[-1] and "the question after" in texts[-2], (what, texts[-4:])
        return
    again = spawn(fault_command(sb, fault, "codex"), env, sb.project)
    assert again.code == code and "Traceback" not in again.err, f"{what}; then: {again!r}"
    from chrollo.index.build import building

    assert not building(str(sb.vault))
    if fault != "index":
        got = leaves(sb, fault)
        differ = sorted(k for k in set(got) | set(base) if got.get(k) != base.get(k))
        assert not differ, f"{what}: {differ[:5]} differ from a run with room"
    hits = [spawn(["search", "refund", "race", "-n", "50", "--json"], dict(env, CHROLLO_INDEX=flag), sb.project).out
            for flag in ("1", "0")]
    assert json.loads(hits[0]).get("hits") == json.loads(hits[1]).get("hits") is not None, what


def test_commands_on_a_full_disk_fail_clearly_and_the_next_run_catches_up(sb):
    _full_disk(sb)


@budget(40, cap=5)
@given(data=st.data(), mode=st.sampled_from(["deleted", "read-only"]))
def _odd_cwd(sb, data, mode):
    from conftest import without_root_bypass

    fresh(sb, FAULT_NOW)
    name = data.draw(st.sampled_from(["search", "read", "stats", "config", "recall", "init"]), label="command")
    build = {"search": search_args, "read": read_args, "stats": stats_args, "config": config_args,
             "recall": recall_args, "init": init_args}[name]
    args = data.draw(st.composite(lambda draw: build(draw, sb))(), label="args")
    env = dict(sb.env(), CHROLLO_NOW=FAULT_NOW)
    if mode == "deleted":
        r = fk.spawn_in(args, env, sb.scratch / "gone", "deleted")
    else:
        sb.project.chmod(0o555)
        try:
            r = fk.spawn_in(args, env, sb.project, "here", prefix=without_root_bypass())
        finally:
            sb.project.chmod(0o755)
    verdict(sb, args, r)
    if mode == "deleted" and not any(a.startswith(("/", ".", "~")) or "/" in a for a in args[1:]):
        assert "path you gave" not in r.err, f"chrollo {args!r} from a deleted folder: {r!r}"


def test_commands_from_a_deleted_or_read_only_working_folder_keep_the_contract(sb):
    _odd_cwd(sb)


def test_report_what_belongs_to_others():
    """Last: what the fuzzer met that another helper's open item covers (printed, never hidden)."""
    print(f"fuzz: {sum(COUNT.values())} examples: " + ", ".join(f"{k} {v}" for k, v in sorted(COUNT.items())))
    for secs, args in sorted(SLOW, key=lambda x: -x[0])[:20]:
        print(f"fuzz: slow ({secs} s): chrollo {[a[:80] for a in args]!r}")
    for owner, args, problem in FOUND:
        print(f"fuzz: known ({owner}): chrollo {args!r}: {problem}")
    assert all(owner in fk.KNOWN.values() for owner, _a, _p in FOUND)
