"""``chrollo doctor``: is everything wired, and does each installed hook really work?

For every harness it reads the user config (as ``chrollo install`` would write it), then
*fires each installed hook command* the way the harness would — a shell command with a
sample payload on stdin — against a throwaway CHROLLO_HOME holding one sample memory, so
your real vault is never touched. A recall hook must answer in its harness's channel with a
recall block; capture hooks must write the sample turn; every hook must exit 0. The
read_memory tool is checked the same way: the registered MCP command is started and must
answer ``initialize``, list read_memory and find the sample memory (pi: its extension's
``chrollo search --compact``).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from . import install as _install
from . import vault as _vault
from .fileformat import RECALL_HEADER
from .harness import adapter, names
from .output import plural

SAMPLE_SID = "doctor00-0000-4000-8000-000000000000"
SAMPLE_PROMPT = "which port does the staging reverse proxy listen on?"
SAMPLE_ANSWER = "Port 8443."
TIMEOUT = 30


def diagnose(harnesses=None, configs: dict | None = None) -> dict:
    """The full report (see ``chrollo doctor --json``); ``ok`` is False if an installed hook fails."""
    configs = configs or {}
    report = {"ok": True, "checks": _general(), "harnesses": {}, "configs": []}
    with tempfile.TemporaryDirectory(prefix="chrollo-doctor-") as tmp:
        for h in harnesses or names():
            r = _harness(h, configs.get(h), Path(tmp) / h)
            report["harnesses"][h] = r
            report["ok"] &= r["status"] not in ("broken", "untrusted")
        # hooks written with `install --config FILE` (found by install's records): fired as well
        for i, (h, path) in enumerate(_install.recorded_configs()):
            if h not in (harnesses or names()) or _same_file(path, configs.get(h) or _install.hooks_config_path(h)):
                continue
            r = {"harness": h, **_harness(h, path, Path(tmp) / f"config-{i}")}
            if r["fix"].startswith(f"chrollo install {h}"):
                r["fix"] = r["fix"].replace(f"chrollo install {h}", f"chrollo install {h} --config {path}", 1)
            report["configs"].append(r)
            report["ok"] &= r["status"] not in ("broken", "untrusted")
    report["ok"] &= all(c["status"] != "failed" for c in report["checks"])
    return report


def _same_file(a, b) -> bool:
    return os.path.realpath(os.path.expanduser(os.fspath(a))) == os.path.realpath(os.path.expanduser(os.fspath(b)))


def _check(name: str, status: str, detail: str, fix: str = "") -> dict:
    return {"name": name, "status": status, "detail": detail, "fix": fix}


def _general() -> list:
    from .errors import ChrolloError
    from .rg import rg_path

    out = []
    # a bad CHROLLO_RG is fixed by unsetting it, not by reinstalling the wheel
    fix = ("unset CHROLLO_RG (chrollo then uses its own rg), or point it at a ripgrep 14 binary"
           if os.environ.get("CHROLLO_RG") else "pip install --force-reinstall 'ripgrep<15'")
    try:
        rg = rg_path()
        ver = subprocess.run([rg, "--version"], capture_output=True, text=True, timeout=10).stdout
        if ver.startswith("ripgrep"):
            out.append(_check("ripgrep", "ok", f"{rg} ({ver.split(chr(10))[0]})"))
        else:
            out.append(_check("ripgrep", "failed", f"{rg} is not ripgrep (`{rg} --version` does not say so)", fix))
    except (ChrolloError, OSError, subprocess.SubprocessError) as e:
        out.append(_check("ripgrep", "failed", str(e), fix))
    home = _vault.home_path()
    if os.path.lexists(home) and not os.path.isdir(home):
        out.append(_check("home", "failed", f"{home} (CHROLLO_HOME) is not a folder: nothing can be captured "
                          "or kept", "point CHROLLO_HOME at a folder, or move the file away"))
    vault, source = _vault.vault_source()
    why = {"CHROLLO_MEMORIES_DIR": "set by CHROLLO_MEMORIES_DIR", "project": "this project's .chrollo/",
           "config": "set by `chrollo config vault`", "default": "the default"}[source]
    if os.path.isdir(vault):
        ok = os.access(vault, os.W_OK)
        n = sum(1 for _ in _vault.iter_session_files(Path(vault)))
        out.append(_check("vault", "ok" if ok else "failed",
                          f"{vault} ({why}; {plural(n, 'session file')}{'' if ok else ', not writable'})",
                          "" if ok else f"chmod u+rwx {vault}"))
        mode = os.stat(vault).st_mode & 0o777
        if mode & 0o077:  # (chrollo never changes the mode of a folder it did not create)
            out.append(_check("vault permissions", "warn", f"{vault} is readable by others (mode {mode:o})",
                              f"chmod 700 {vault}"))
        out.append(_index_check(vault))
    elif os.path.lexists(vault):
        out.append(_check("vault", "failed", f"{vault} ({why}) is not a folder", f"move {vault} away"))
    else:
        up = _nearest_existing(vault)
        if os.path.isdir(up) and os.access(up, os.W_OK | os.X_OK):
            out.append(_check("vault", "ok", f"{vault} ({why}; created on the first captured turn)"))
        else:
            out.append(_check("vault", "failed", f"{vault} ({why}) cannot be created: {up} is "
                              + ("not writable" if os.path.isdir(up) else "not a folder"),
                              "" if os.path.isdir(up) else f"move {up} away, or use another vault"))
    out.append(_obsidian_check(vault))
    out += _project_check()
    out += _repository_check()
    from .layout import log_file

    log = Path(log_file("hooks"))
    errors = _recent_errors(log)
    out.append(_check("hook log", "warn" if errors else "ok",
                      f"{plural(errors, 'hook error')} in the last 24 h ({log})" if errors else f"no recent errors ({log})",
                      f"see {log}" if errors else ""))
    out.append(_privacy())
    return out


def _nearest_existing(path: str) -> str:
    """``path``, or its nearest ancestor that exists (the one walk up: homedir.walk_up)."""
    return _vault.walk_up(path, os.path.lexists) or path


def _index_check(vault: str) -> dict:
    """How much of the vault the search index holds as it is now (docs/index.md)."""
    from .index.store import status

    s = status(vault)
    fix = "chrollo index"
    if not s["usable"]:
        what = "damaged or of another version" if s["exists"] else "none yet"
        return _check("search index", "warn" if s["files"] else "ok",
                      f"{what}: searches read every file ({plural(s['files'], 'file')})", fix if s["files"] else "")
    left = s["files"] - s["indexed"]
    return _check("search index", "ok" if left <= max(10, s["files"] // 100) else "warn",
                  f"{s['indexed']} of {plural(s['files'], 'file')} indexed ({s['index_bytes'] >> 20} MB); "
                  "the others are searched directly", fix if left else "")


def _privacy() -> dict:
    """What is kept out of memory (excluded projects, forgotten sessions and lines)."""
    from .privacy import rules

    r = rules(reload=True)
    bits = [f"excluded projects: {', '.join(r.exclude)}" if r.exclude
            else "no excluded projects (`chrollo exclude add PATH` keeps one out)"]
    if r.sessions or r.lines:
        bits.append(f"{len(r.sessions)} forgotten sessions, {len(r.lines)} forgotten line patterns")
    bits.append(f"redaction at capture {'on' if r.redact_capture else 'off'}")
    return _check("privacy", "ok", "; ".join(bits))


def _repository_check() -> list:
    """The repository the cwd is in, as sessions started here will record it (#34)."""
    from .obsidian import project_name
    from .repository import identify

    here = _vault.working_folder()
    repo = identify(here) if here else None
    if repo is None:
        return []
    how = "its remote" if not repo.key.startswith("root:") else "its root commit (no network remote)"
    return [_check("repository", "ok", f"{repo.key} (from {how}): sessions here are project "
                   f"[[{project_name(repo.root, repo.key)}]], with every clone's on other machines")]


def _project_check() -> list:
    """The .chrollo/ of the project around the cwd, if any: used, or ignored and why."""
    from . import project_trust as trust

    here = _vault.working_folder()
    root = _vault.find_project(here) if here else None
    if root is None:
        return []
    state, why = trust.status(root)
    vault = os.path.join(root, ".chrollo", "memories")
    if state == trust.TRUSTED:
        return [_check("project vault", "ok", f"{vault} (trusted)")]
    fix = (f"cd {root} && chrollo init   # if this project is yours" if state != trust.UNSAFE
           else "replace it with a real folder you own, then: chrollo init")
    return [_check("project vault", "warn", f"ignored: {why} (the global vault is used)", fix)]


def _obsidian_check(vault: str) -> dict:
    """Can Obsidian show the memory? (It never shows dot-folders such as ~/.chrollo.)"""
    from .obsidian import visibility

    v = visibility(vault)
    move = 'chrollo config vault ~/Notes/"Agent memory"  (a folder inside your Obsidian vault)'
    if v["visible"]:
        return _check("obsidian", "ok", f"visible in the Obsidian vault {v['obsidian_vault']} "
                      f"as {v['relative']}/ (chrollo.base lists every session)")
    if v["obsidian_vault"]:
        return _check("obsidian", "warn", f"inside the Obsidian vault {v['obsidian_vault']} but hidden: "
                      f"Obsidian never shows the dot-folder {v['hidden_by'][0]}", move)
    hidden = f" (and inside the dot-folder {v['hidden_by'][0]})" if v["hidden_by"] else ""
    return _check("obsidian", "ok", f"not inside an Obsidian vault{hidden}: open {vault} as a "
                  f"vault, or move memory into yours: {move}")


def _recent_errors(log: Path) -> int:
    try:
        lines = log.read_text("utf-8", "replace").splitlines()
    except OSError:
        return 0
    since = (dt.datetime.now() - dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S")
    return sum(1 for ln in lines if ln[:19] >= since and " error: " in ln[:400])


def _read(path: Path) -> str | None:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _harness(h: str, config, tmp: Path) -> dict:
    from . import packages

    path = Path(os.path.expanduser(config)) if config else _install.hooks_config_path(h)
    text = _read(path)
    events = _install.installed_events(h, text)
    mod = adapter(h)
    pkg = None if config else packages.find(h)
    # chrollo's package runs where `chrollo install` has not written hooks (else it stands down)
    own = pkg if pkg and pkg["enabled"] and not events else None
    if own and mod.HOOKS == "extension":
        path = Path(own["extension"])
        text = _read(path)
        events = _install.installed_events(h, text)
    elif own:
        events = packages.hook_commands(own)
    r = {"config": own["root"] if own else str(path), "installed": bool(events), "events": sorted(events),
         "fired": [], "mcp": _tool(h, text, tmp, own)}
    if pkg:
        r["package"] = packages.describe(pkg)
    cli = packages.findable_cli()
    if own and cli is None:
        r.update(status="broken", fix=f"The {h} package cannot find chrollo: install it with one of: "
                 f"{packages.HOW_TO_INSTALL}, or set CHROLLO_BIN to its path.")
        return r
    commands = events if own and mod.HOOKS != "extension" else _commands(h, text, events) if events else {}
    env = {**own["env"], "CHROLLO_BIN": cli} if own else {}   # the chrollo the package's shim finds
    for event, cmd in commands.items():
        r["fired"].append(_fire(h, event, cmd, tmp, env))
    expected = {e for e, _t in mod.EVENTS if _t is not None}
    missing = sorted(expected - set(events))
    broken = [f for f in r["fired"] if not f["ok"]]
    tool = r["mcp"]
    if broken:
        r.update(status="broken", fix=f"chrollo install {h}   # rewrites the hooks; details: {broken[0]['detail']}")
    elif tool["registered"] and not tool["ok"]:
        r.update(status="broken", fix=f"chrollo install {h}   # re-registers the tool; details: {tool['detail']}")
    elif not events and not tool["registered"]:
        r.update(status="missing", fix=f"chrollo install {h}")
    elif not events:
        r.update(status="partial", fix=f"chrollo install {h}   # adds capture and recall")
    elif missing:
        r.update(status="partial", fix=f"chrollo install {h}   # adds {', '.join(missing)}")
    elif not tool["registered"]:
        r.update(status="partial", fix=f"chrollo install {h}   # adds the read_memory tool")
    else:
        r.update(status="ok", fix="")
    if hasattr(mod, "doctor_check") and r["status"] in ("ok", "partial"):
        mod.doctor_check(r, str(path), lambda c: _install._is_ours(c, h), own)
    if own and r["status"] in ("missing", "broken", "partial"):   # the package is fixed by reinstalling it
        r.update(status="broken", fix=f"the {h} package ({own['root']}) does not work: reinstall it "
                 f"(`{own['remove']}`, then install it again); details: {r['fix'].partition('details: ')[2] or r['status']}")
    _package_checks(h, r, pkg, own, events)
    _freshness(h, r)
    return r


def _package_checks(h: str, r: dict, pkg, own, events) -> None:
    """Both ways at once (say which to remove), and a package whose version is not the CLI's."""
    from . import __version__

    if pkg and pkg["enabled"] and not own and events and r["status"] not in ("broken", "untrusted"):
        r.update(status="duplicate", fix=(
            f"chrollo is installed twice for {h}: its package ({pkg['id']}) and `chrollo install` "
            f"({_which_runs(h)}). Remove one: `chrollo uninstall {h}` "
            f"to keep the package, or `{pkg['remove']}`."))
    elif own and pkg["version"] != __version__ and r["status"] in ("ok", "partial", "stale"):
        r.update(status="mismatch", fix=(
            f"the {h} package is version {pkg['version']} but the chrollo CLI is {__version__}: "
            f"update the older one (the package: reinstall it from the new release; the CLI: "
            f"install it again from an updated clone: uv tool install --reinstall . / pipx install --force . / pip install .)."))


def _which_runs(h: str) -> str:
    """With both installed, what runs (nothing twice either way)."""
    if getattr(adapter(h), "LOADS_ONE_EXTENSION", False):
        return f"{h} loads chrollo's extension once"
    return "only the latter's hooks run; the package's stand down"


def _freshness(h: str, r: dict) -> None:
    """When the hooks last captured a turn, against the harness's own activity: installed
    hooks that no longer fire (a harness update) are a warning, not a failure."""
    from .freshness import check

    r["capture"] = check(h)
    if r["capture"]["stale"] and r["status"] == "ok":
        r.update(status="stale", fix=r["capture"]["message"])


def _tool(h: str, hooks_text: str | None, tmp: Path, pkg: dict | None = None) -> dict:
    """Is read_memory registered for ``h`` (by ``chrollo install`` or, ``pkg``, by chrollo's
    package), and does it answer from the sample memory?"""
    mod = adapter(h)
    if pkg and mod.MCP is not None:
        from .packages import findable_cli, mcp_command

        cmd = mcp_command(pkg)
        if cmd is None:
            return {"registered": False, "ok": False, "config": pkg["root"], "ms": 0, "detail": "not in the package"}
        env = {**pkg["env"], "CHROLLO_BIN": findable_cli() or ""}   # the chrollo the package's shim finds
        return {"registered": True, "config": pkg["root"], **_probe(cmd, _mcp_calls(), tmp, env)}
    if mod.MCP is None:  # the harness's extension registers the tools: probe its chrollo
        if not hooks_text or "read_memory" not in hooks_text:
            return {"registered": False, "ok": False, "config": "", "ms": 0, "detail": "not installed"}
        base = _extension_chrollo(mod, hooks_text)
        return {"registered": True, "config": f"{h} extension",
                **_probe(base + ["search", "--compact", SAMPLE_PROMPT], None, tmp)}
    path = _install.mcp_config_path(h)
    cmd = _install.registered_server(h, _read(path))
    if cmd is None:
        return {"registered": False, "ok": False, "config": str(path), "ms": 0, "detail": "not installed"}
    return {"registered": True, "config": str(path), **_probe(cmd, _mcp_calls(), tmp)}


def _mcp_calls() -> str:
    """What a harness sends the MCP server: initialize, tools/list, one read_memory call."""
    calls = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                 "protocolVersion": "2025-06-18", "capabilities": {},
                 "clientInfo": {"name": "chrollo-doctor", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "read_memory", "arguments": {"query": SAMPLE_PROMPT}}}]
    return "".join(json.dumps(c) + "\n" for c in calls)


def _probe(cmd: list, mcp_input: str | None, tmp: Path, extra_env: dict | None = None) -> dict:
    """Run ``cmd`` against the sample memory; with ``mcp_input``, as an MCP server."""
    tmp.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        p = subprocess.run(cmd, input=(mcp_input or "").encode(), capture_output=True,
                           env={**_sample_vault(tmp), **(extra_env or {})}, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"ok": False, "ms": TIMEOUT * 1000, "detail": f"timed out after {TIMEOUT}s"}
    except OSError as e:
        return {"ok": False, "ms": 0, "detail": f"cannot start {cmd[0]}: {e.strerror or e}"}
    ms = round(1000 * (time.monotonic() - started))
    out = p.stdout.decode("utf-8", "replace")
    if mcp_input is None:
        text, fail = out, None if p.returncode == 0 else f"exit {p.returncode}"
    else:
        replies = {}
        for line in out.splitlines():
            try:
                msg = json.loads(line)
                replies[msg.get("id")] = msg
            except (ValueError, AttributeError):
                pass
        tools = [t.get("name") for t in replies.get(2, {}).get("result", {}).get("tools", [])]
        call = replies.get(3, {}).get("result", {})
        text = "".join(c.get("text", "") for c in call.get("content", []) if isinstance(c, dict))
        fail = ("no answer to initialize" if "result" not in replies.get(1, {}) else
                "read_memory is not listed" if "read_memory" not in tools else
                f"read_memory failed: {text[:200]}" if call.get("isError") else None)
    if fail is None and "8443" not in text:
        fail = "read_memory did not find the sample memory"
    if fail and p.stderr.strip():
        fail += f" ({p.stderr.decode('utf-8', 'replace').strip()[-200:]})"
    return {"ok": fail is None, "ms": ms, "detail": fail or "ok"}


def _commands(h: str, text: str, events: dict) -> dict:
    """event → shell command to fire (an extension: its chrollo, called as its shim does)."""
    mod = adapter(h)
    if mod.HOOKS != "extension":
        return events
    import shlex

    base = _extension_chrollo(mod, text)
    return {e: " ".join(map(shlex.quote, base)) + f" hook {e} --harness {h}" for e in events}


def _extension_chrollo(mod, text: str) -> list:
    """The chrollo command line an installed extension runs (the shipped file: the one it finds)."""
    from .packages import findable_cli

    cmd = mod.extension_command(text)
    return [findable_cli() or "chrollo"] if cmd == ["chrollo"] else cmd


def _sample_vault(tmp: Path) -> dict:
    """A throwaway CHROLLO_HOME with one memory; the env that points a hook at it."""
    from .session import SessionMeta, Turn, render_frontmatter, render_turn, session_file_name

    home = tmp / "home"
    vault = home / "memories"
    if not vault.exists():
        vault.mkdir(parents=True, mode=0o700)
        t = dt.datetime(2026, 1, 5, 10, 0, 0)
        meta = SessionMeta("sample00-0000-4000-8000-000000000000", t, "doctor", str(tmp))
        # written directly, not through SessionWriter: that would record it in the real state/
        (vault / session_file_name(meta)).write_text(render_frontmatter(meta) + "".join(map(render_turn, [
            Turn.user("the staging reverse proxy port keeps changing", t),
            Turn.agent(["The staging reverse proxy listens on port 8443; nginx forwards it to the app."], t)])))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHROLLO_")}
    env.update(CHROLLO_HOME=str(home), CHROLLO_MEMORIES_DIR=str(vault))
    return env


def _action(h: str, event: str) -> str | None:
    from .harness import normalise_event

    return adapter(h).expected_events().get(normalise_event(event))


def _fire(h: str, event: str, cmd: str, tmp: Path, extra_env: dict | None = None) -> dict:
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**_sample_vault(tmp), **(extra_env or {})}
    started = time.monotonic()
    try:
        payload = adapter(h).sample_payload(event, SAMPLE_SID, str(tmp), SAMPLE_PROMPT, SAMPLE_ANSWER)
        p = subprocess.run(cmd, shell=True, input=json.dumps(payload).encode(),
                           capture_output=True, env=env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"event": event, "ok": False, "ms": TIMEOUT * 1000, "detail": f"timed out after {TIMEOUT}s"}
    ms = round(1000 * (time.monotonic() - started))
    out = p.stdout.decode("utf-8", "replace")
    fail = None
    if p.returncode != 0:
        fail = f"exit {p.returncode}: {p.stderr.decode('utf-8', 'replace').strip()[-200:] or 'no message'}"
    elif _action(h, event) == "recall":
        text = adapter(h).recall_text(out)
        if text is None:
            fail = f"reply is not the {h} JSON channel: {out[:120]!r}"
        elif RECALL_HEADER not in text:
            fail = "no recall for a prompt the sample memory answers (see `chrollo hook --help`)"
    elif out.strip():
        fail = f"printed output on a capture event: {out[:120]!r}"
    elif _action(h, event) == "capture":
        vault = Path(env["CHROLLO_MEMORIES_DIR"])
        if not any(SAMPLE_SID[:8] in f.name for f in vault.glob("*.md")):
            fail = "the sample turn was not written to the (temporary) vault"
    return {"event": event, "ok": fail is None, "ms": ms, "detail": fail or "ok"}
