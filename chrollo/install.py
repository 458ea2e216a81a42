"""Register chrollo with a harness's user config, and take it out again.

``install(harness)`` / ``uninstall(harness)`` do both parts below in one step (pi: its
extension carries the hooks and the tools); ``only="hooks"`` or ``only="mcp"`` picks one.

``install_hooks``/``uninstall_hooks`` add or remove the capture and recall hooks
(``chrollo hook <event> --harness H``, by absolute path, with each event's timeout) in the
harness's ``hooks_config()`` — or write its extension whole; ``install_mcp``/``uninstall_mcp``
add or remove the ``chrollo`` MCP server in its ``mcp_config()`` (JSON ``mcpServers`` or a
TOML ``[mcp_servers.chrollo]`` block). Which file, which events, which format: the harness's
adapter says (:mod:`chrollo.harness`); this module names no harness.

Contract: idempotent; everything else in the file is kept; uninstall removes exactly what
install added. The file's bytes before the first install are saved in
``$CHROLLO_HOME/state/install/``: if the file is still exactly what chrollo wrote, uninstall
puts those bytes back (or deletes a file chrollo created) — also where the harness has only
added its own keys since (an adapter's ``OWN_KEYS``: Qwen Code's ``"$version"``); if someone
edited it since, only chrollo's entries are taken out.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from pathlib import Path

from . import jsonc
from . import vault as _vault
from .errors import ChrolloError, UsageError

SERVER_NAME = "chrollo"
_TOML_START = "# >>> chrollo mcp (added by `chrollo install codex --mcp`; `chrollo uninstall codex --mcp` removes it)"
_TOML_END = "# <<< chrollo mcp"


class Change:
    """What one install/uninstall step did to one file. (A plain class, not a dataclass: a
    package's hook imports this module on every prompt, and dataclasses costs ~40 ms.)"""

    __slots__ = ("harness", "config", "action", "part")

    def __init__(self, harness: str, config: str, action: str, part: str = "hooks"):
        self.harness, self.config = harness, config
        # "installed", "updated", "unchanged", "removed", "restored", "absent", "kept",
        # "skipped" (not done: --config names another part's file)
        self.action = action
        self.part = part   # "hooks" (capture + recall; pi: the extension) or "mcp" (the read_memory tool)

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


def parts(harness: str, only: str | None = None, config=None) -> list:
    """What ``install``/``uninstall`` touch: hooks and the MCP server, or ``only`` one of them.
    pi gets no MCP server (its extension registers the tools; one in pi's own MCP client too
    would offer them twice); ``config`` names one file, so it means the hooks unless
    ``only="mcp"`` — Gemini keeps both in that one file."""
    if only == "mcp":
        mcp_config_path(harness)  # refuses pi and unknown harnesses
        return ["mcp"]
    hooks_config_path(harness)
    mod = _profile(harness)
    one_file = mod.MCP is not None and mod.mcp_config() == mod.hooks_config()
    return ["hooks"] if only == "hooks" or mod.MCP is None or (config and not one_file) else ["hooks", "mcp"]


def left_out(harness: str, only: str | None = None, config=None) -> list:
    """The part ``config`` (one file) cannot hold, as a "skipped" Change: a harness that keeps
    the tool in another file than the hooks (Claude Code, Codex) gets no tool — and that is said."""
    mod = _profile(harness)
    if config and only is None and mod.MCP is not None and mod.mcp_config() != mod.hooks_config():
        return [Change(harness, str(mcp_config_path(harness)), "skipped", "mcp")]
    return []


def install(harness: str, only: str | None = None, config=None) -> list:
    """Also creates the vault (owner-only): memory right after install is empty, not missing —
    search, stats and read_memory answer before the first capture."""
    if config:  # (a mistyped path: its folders were created and success reported)
        folder = Path(os.path.expanduser(config)).parent
        if not folder.is_dir():
            raise UsageError(f"no such folder: {folder} (for --config {config})",
                             "Check the path: chrollo creates a missing config file, not its folders.",
                             kind="bad_config")
    changes = [(install_hooks if p == "hooks" else install_mcp)(harness, config)
               for p in parts(harness, only, config)] + left_out(harness, only, config)
    _vault.ensure_dir(Path(_vault.memories_path()))
    return changes


def uninstall(harness: str, only: str | None = None, config=None) -> list:
    """In reverse order of ``install``: where both parts share a file (Gemini), each restore
    then finds the bytes it wrote, and the file comes back byte for byte."""
    return [(uninstall_hooks if p == "hooks" else uninstall_mcp)(harness, config)
            for p in reversed(parts(harness, only, config))] + left_out(harness, only, config)


def found_harnesses() -> dict:
    """{harness: why it counts as on this machine} for ``install --all``: its command is on
    PATH or its own folder exists (``~/.claude``, ``~/.codex``, ``~/.gemini``, ``~/.pi/agent``)."""
    from .executables import which
    from .harness import profiles

    found = {}
    for mod in profiles():
        binary = which(mod.BINARY)
        if binary or os.path.isdir(mod.home_dir()):
            found[mod.NAME] = binary or mod.home_dir()
    return found


def install_all(only: str | None = None) -> dict:
    """``install --all``: every harness found on this machine, except where chrollo's own
    package for it is installed (its hooks already run: installing both would only make the
    package's stand down). {harness: [Change] or the reason it was skipped}."""
    from .harness import adapter

    out = {}
    for h in found_harnesses():
        pkg = adapter(h).package()
        out[h] = f"its package {pkg['id']} is installed" if pkg and pkg["enabled"] else install(h, only)
    return out


def server_command() -> list:
    """How a harness should start the server: this installation's ``chrollo mcp``."""
    return chrollo_command() + ["mcp"]


def _profile(harness: str):
    """The harness's adapter (:mod:`chrollo.harness`), or a usage error naming the known ones."""
    from .harness import adapter, names

    if harness not in names():
        raise UsageError(f"unknown harness {harness!r}", f"One of: {', '.join(names())}.", kind="bad_harness")
    return adapter(harness)


def mcp_config_path(harness: str) -> Path:
    """The user-level config file that lists a harness's MCP servers."""
    mod = _profile(harness)
    if mod.MCP is None:
        from .harness import profiles

        others = "|".join(m.NAME for m in profiles() if m.MCP)
        raise UsageError(f"chrollo registers no MCP server for {harness}: {mod.NO_MCP}",
                         f"Use `chrollo install {others} --mcp`.", kind="no_mcp")
    return Path(mod.mcp_config())


def install_mcp(harness: str, config: str | os.PathLike | None = None) -> Change:
    path = Path(os.path.expanduser(config)) if config else mcp_config_path(harness)
    was = _read(path)
    change = _install("mcp", harness, path, lambda text: _add(harness, text, path))
    if change.action == "installed" and was and SERVER_NAME in _servers(was, harness):
        change.action = "updated"
    return change


def uninstall_mcp(harness: str, config: str | os.PathLike | None = None) -> Change:
    path = Path(os.path.expanduser(config)) if config else mcp_config_path(harness)
    return _uninstall("mcp", harness, path, lambda text: SERVER_NAME in _servers(text, harness),
                      lambda text: _toml_remove(text) if _profile(harness).MCP == "toml" else _json_remove(text, path, harness))


# ----------------------------------------------------------------------------- hooks

def chrollo_command() -> list:
    """This installation's ``chrollo`` (absolute, so a harness's PATH does not matter)."""
    script = Path(sys.executable).with_name("chrollo")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "chrollo"]


def hook_command(harness: str, event: str) -> str:
    import shlex

    return " ".join(map(shlex.quote, chrollo_command())) + f" hook {event} --harness {harness}"


def recorded_configs(kind: str = "hooks") -> list:
    """(harness, path) of every file chrollo installed into and still has a record of — those
    named with ``--config`` among them — whose file still exists."""
    from .layout import install_record

    folder = os.path.dirname(install_record(kind, "x"))
    try:
        names = sorted(n for n in os.listdir(folder) if n.startswith(f"{kind}-") and n.endswith(".json"))
    except OSError:
        return []
    out = []
    for n in names:
        rec = _vault.read_json(os.path.join(folder, n))
        if isinstance(rec, dict) and isinstance(rec.get("harness"), str) and isinstance(rec.get("path"), str) \
                and os.path.isfile(rec["path"]):
            out.append((rec["harness"], rec["path"]))
    return out


def hooks_config_path(harness: str) -> Path:
    """The user-level file that holds a harness's hooks (or its extension)."""
    return Path(_profile(harness).hooks_config())


def install_hooks(harness: str, config: str | os.PathLike | None = None) -> Change:
    path = Path(os.path.expanduser(config)) if config else hooks_config_path(harness)
    mod = _profile(harness)
    if mod.HOOKS == "extension":
        return _install("hooks", harness, path, lambda text: _extension_add(mod, text, path))
    return _install("hooks", harness, path, lambda text: _hooks_add(harness, text, path))


def _extension_add(mod, text: str | None, path: Path) -> str:
    """chrollo's extension file, written whole: only where there is none yet or it is chrollo's
    (a file of the user's at that path — or the target of a link there — is never replaced;
    the long fuzz run's `install pi --config <a link to another file>` overwrote that file)."""
    if text is not None and mod.EXTENSION_MARK not in text:
        noun = getattr(mod, "EXTENSION_NOUN", "extension")
        raise ChrolloError("bad_config", f"{path} exists and is not chrollo's {noun}: it is left as it is",
                           "Move it away, or pass --config with a path of its own for chrollo's file.")
    return mod.extension_text(chrollo_command())


def uninstall_hooks(harness: str, config: str | os.PathLike | None = None) -> Change:
    path = Path(os.path.expanduser(config)) if config else hooks_config_path(harness)
    mod = _profile(harness)
    if mod.HOOKS == "extension":
        # Only a file that is still chrollo's is deleted; an edited one is left to its owner.
        return _uninstall("hooks", harness, path, lambda text: mod.EXTENSION_MARK in text, None)
    return _uninstall("hooks", harness, path, lambda text: bool(installed_events(harness, text)),
                      lambda text: _hooks_remove(harness, text, path))


def installed_events(harness: str, text: str | None) -> dict:
    """{event: command} for the chrollo hooks a config text holds (an extension: its events)."""
    mod = _profile(harness)
    if mod.HOOKS == "extension":
        return {e: "extension" for e, _t in mod.EVENTS} if text and mod.EXTENSION_MARK in text else {}
    try:
        data = jsonc.loads(text) if text and text.strip() else {}
    except ValueError:
        return {}
    hooks = data.get("hooks") if isinstance(data, dict) else None
    found = {}
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for g in groups if isinstance(groups, list) else []:
            for h in (g.get("hooks") if isinstance(g, dict) else None) or []:
                if isinstance(h, dict) and _is_ours(h.get("command"), harness):
                    found[event] = h["command"]
    return found


def _is_ours(command, harness: str) -> bool:
    """Whether a hook ``command`` is one :func:`hook_command` writes: a program that is chrollo
    (a file named ``chrollo``, or a Python's ``-m chrollo``), then ``hook EVENT --harness
    HARNESS`` and nothing else — not another tool's hook that merely mentions chrollo."""
    if not isinstance(command, str) or not command.endswith(f"--harness {harness}"):
        return False
    import re
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return False
    prog, tail = words[:-4], words[-4:]
    if tail[:1] != ["hook"] or tail[2:] != ["--harness", harness] or not re.fullmatch(r"[A-Za-z]+", tail[1]):
        return False
    if len(prog) == 1:
        return os.path.basename(prog[0]) == "chrollo"
    return len(prog) == 3 and prog[1:] == ["-m", "chrollo"] \
        and re.fullmatch(r"(python|pypy)[0-9.]*", os.path.basename(prog[0])) is not None


def _hooks_add(harness: str, text: str | None, path: Path) -> str | None:
    data = _json_load(text, path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ChrolloError("bad_config", f"hooks in {path} is not an object")
    changed = False
    mod = _profile(harness)
    for event, timeout in mod.EVENTS:
        entry = {"type": "command", "command": hook_command(harness, event), "timeout": timeout}
        if getattr(mod, "NAMED_HOOKS", False):
            entry = {"name": f"chrollo-{event}", **entry}
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ChrolloError("bad_config", f"hooks.{event} in {path} is not a list")
        ours = [g for g in groups if isinstance(g, dict) and any(
            isinstance(h, dict) and _is_ours(h.get("command"), harness) for h in g.get("hooks") or [])]
        if ours == [{"hooks": [entry]}]:
            continue
        groups[:] = [g for g in groups if g not in ours] + [{"hooks": [entry]}]
        changed = True
    if not changed:
        return text
    return jsonc.dumps_into(text, data)  # (a file with comments keeps them)


def _hooks_remove(harness: str, text: str, path: Path) -> str:
    data = _json_load(text, path)
    hooks = data.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            if not isinstance(groups, list):
                continue
            for g in groups:
                if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                    g["hooks"] = [h for h in g["hooks"] if not (isinstance(h, dict) and _is_ours(h.get("command"), harness))]
            groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
            if not groups:
                del hooks[event]
        if not hooks:
            del data["hooks"]
    return jsonc.dumps_into(text, data)  # (a file with comments keeps them)


# ----------------------------------------------------------------------------- the edit protocol

def _install(kind: str, harness: str, path: Path, add) -> Change:
    """Write ``add(current text)``; the first time, save the bytes it replaces."""
    before = _read(path)
    after = add(before)
    if after == before:
        return Change(harness, str(path), "unchanged", kind)
    rec = _record(path, kind)
    saved = _vault.read_json(rec) or None
    if saved is None:
        saved = {"path": str(path), "original": before, "restorable": True}
    elif _sha(before) != saved.get("written"):
        saved["restorable"] = False  # edited since chrollo wrote it: uninstall removes only our entry
    saved["harness"] = harness  # (doctor checks hooks installed with --config, found by this)
    saved["written"] = _sha(after)
    _write(path, after)
    _vault.write_private(str(rec), json.dumps(saved))
    return Change(harness, str(path), "installed" if before is None or saved["original"] == before
                  else "updated", kind)


def _uninstall(kind: str, harness: str, path: Path, present, remove) -> Change:
    """Restore the saved bytes if the file is as chrollo left it, else ``remove`` our part."""
    now = _read(path)
    rec = _record(path, kind)
    saved = _vault.read_json(rec) or None
    if saved is not None and saved.get("restorable") and now is not None and _sha(now) == saved["written"]:
        if saved["original"] is None:
            path.unlink()
        else:
            _write(path, saved["original"])
        rec.unlink()  # (a file chrollo created is removed; one it changed gets its bytes back)
        return Change(harness, str(path), "removed" if saved["original"] is None else "restored", kind)
    if now is None or not present(now) or remove is None:
        if saved is not None:
            rec.unlink()
        return Change(harness, str(path), "absent" if now is None or not present(now) else "kept", kind)
    left = remove(now)
    if saved is not None and saved.get("restorable") and _only_own_keys_differ(harness, left, saved["original"]):
        # The harness only added its own keys since (Qwen Code's "$version" at its first start,
        # which it adds again): the user's bytes come back as they were.
        if saved["original"] is None:
            path.unlink()
        else:
            _write(path, saved["original"])
        rec.unlink()
        return Change(harness, str(path), "removed" if saved["original"] is None else "restored", kind)
    _write(path, left)
    if saved is not None:
        rec.unlink()
    return Change(harness, str(path), "removed", kind)


def _only_own_keys_differ(harness: str, text: str, original: str | None) -> bool:
    """Does ``text`` (the config with chrollo's part taken out) hold what ``original`` held, but
    for top-level keys the harness writes into its config itself (its adapter's ``OWN_KEYS``)?"""
    own = getattr(_profile(harness), "OWN_KEYS", ())
    if not own:
        return False
    try:
        now, was = (jsonc.loads(t) if t and t.strip() else {} for t in (text, original))
    except ValueError:
        return False
    if not isinstance(now, dict) or not isinstance(was, dict):
        return False
    return {k: v for k, v in now.items() if k not in own} == {k: v for k, v in was.items() if k not in own}


# ----------------------------------------------------------------------------- formats

def _entry(harness: str) -> dict:
    cmd = server_command()
    mod = _profile(harness)
    if hasattr(mod, "mcp_entry"):   # (a harness whose entries are shaped otherwise: OpenCode's)
        return mod.mcp_entry(cmd)
    return {**mod.MCP_ENTRY, "command": cmd[0], "args": cmd[1:]}


def _key(harness: str) -> str:
    """The JSON object a harness lists its MCP servers in (``mcpServers`` unless it says)."""
    return getattr(_profile(harness), "MCP_KEY", "mcpServers")


def _json_load(text: str | None, path: Path) -> dict:
    if not text or not text.strip():
        return {}
    try:
        data = jsonc.loads(text)  # comments allowed: Gemini CLI reads its settings that way
    except ValueError as e:
        raise ChrolloError("bad_config", f"{path} is not valid JSON ({e})",
                           "Fix or move the file, then run the command again.")
    if not isinstance(data, dict):
        raise ChrolloError("bad_config", f"{path} does not hold a JSON object")
    return data


def _add(harness: str, text: str | None, path: Path) -> str | None:
    return _toml_add(text, path) if _profile(harness).MCP == "toml" else _json_add(text, path, harness)


def _json_add(text: str | None, path: Path, harness: str) -> str | None:
    data = _json_load(text, path)
    key = _key(harness)
    servers = data.get(key)
    if servers is None:
        servers = data[key] = {}
    if not isinstance(servers, dict):
        raise ChrolloError("bad_config", f"{key} in {path} is not an object")
    entry = _entry(harness)
    if servers.get(SERVER_NAME) == entry:
        return text
    servers[SERVER_NAME] = entry
    return jsonc.dumps_into(text, data)  # (a file with comments keeps them)


def _json_remove(text: str, path: Path, harness: str) -> str:
    data = _json_load(text, path)
    key = _key(harness)
    servers = data.get(key)
    if isinstance(servers, dict):
        servers.pop(SERVER_NAME, None)
        if not servers:
            del data[key]
    return jsonc.dumps_into(text, data)  # (a file with comments keeps them)


def _toml_block() -> str:
    cmd = server_command()
    return "\n".join([_TOML_START, f"[mcp_servers.{SERVER_NAME}]", f"command = {json.dumps(cmd[0])}",
                      f"args = {json.dumps(cmd[1:])}", _TOML_END, ""])


_TOML_BLOCK_RE = re.compile(r"\n?" + re.escape(_TOML_START) + r".*?" + re.escape(_TOML_END) + r"\n?", re.S)


def _toml_add(text: str | None, path: Path) -> str:
    text = text or ""
    block = _toml_block()
    if _TOML_START in text:
        current = _TOML_BLOCK_RE.search(text)
        if current and current.group().strip() == block.strip():
            return text
        text = _toml_remove(text)  # a stale block: ours out, whatever Codex wrote into it stays
    if re.search(rf"^\s*\[mcp_servers\.{SERVER_NAME}\]", text, re.M):
        raise ChrolloError("bad_config", f"{path} already defines [mcp_servers.{SERVER_NAME}] by hand",
                           "Remove it, or keep it and skip `chrollo install codex --mcp`.")
    sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
    return text + sep + block


_TOML_TABLE_RE = re.compile(r"\s*\[\[?\s*([^\]]*?)\s*\]")


def _toml_remove(text: str) -> str:
    """``text`` without chrollo's markers and its ``[mcp_servers.chrollo]`` table (and that
    table's sub-tables). Only those: Codex appends its own tables where the file ends, which
    can be inside chrollo's block (``[tui]`` after its first run), and they stay."""
    if not text.strip():
        return text
    out, ours, cut = [], False, False
    for line in text.split("\n"):
        if line in (_TOML_START, _TOML_END):
            ours, cut = False, True
            continue
        m = _TOML_TABLE_RE.match(line)
        if m:
            name = m.group(1).replace('"', "").replace(" ", "")
            ours = name == f"mcp_servers.{SERVER_NAME}" or name.startswith(f"mcp_servers.{SERVER_NAME}.")
        if ours:
            cut = True
        elif not (cut and not line.strip() and (not out or not out[-1].strip())):
            out.append(line)  # (a blank line left doubled where our lines went is dropped)
            cut = cut and not line.strip()
    return "\n".join(out).strip("\n") + "\n"


def registered_server(harness: str, text: str | None) -> list | None:
    """The command line of the ``chrollo`` MCP server a config text registers, or None."""
    if not text:
        return None
    if _profile(harness).MCP == "toml":
        m = _TOML_BLOCK_RE.search(text)
        cmd = re.search(r'^command = (".*")$', m.group(), re.M) if m else None
        args = re.search(r"^args = (\[.*\])$", m.group(), re.M) if m else None
        try:
            return [json.loads(cmd.group(1)), *json.loads(args.group(1))] if cmd and args else None
        except ValueError:
            return None
    try:
        entry = jsonc.loads(text).get(_key(harness), {}).get(SERVER_NAME)
    except (ValueError, AttributeError):
        return None
    if isinstance(entry, dict) and isinstance(entry.get("command"), list) and entry["command"] \
            and all(isinstance(c, str) for c in entry["command"]):   # (one list: OpenCode's)
        return list(entry["command"])
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    args = entry.get("args") or []
    return [entry["command"], *map(str, args)] if isinstance(args, list) else None


def _servers(text: str, harness: str) -> set:
    if _profile(harness).MCP == "toml":
        return {SERVER_NAME} if _TOML_START in text else set()
    try:
        data = jsonc.loads(text) if text.strip() else {}
    except ValueError:
        return set()
    servers = data.get(_key(harness)) if isinstance(data, dict) else None
    return set(servers) if isinstance(servers, dict) else set()


# ----------------------------------------------------------------------------- files

def _read(path: Path) -> str | None:
    """The config's text (None: no such file). Opened non-blocking and only if it is a regular
    file: a FIFO given as --config would block the install forever."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ChrolloError("bad_config", f"cannot read {path}: {e.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ChrolloError("bad_config", f"{path} is not a regular file",
                               "Pass the harness's config file (JSON, or TOML for Codex).")
        try:
            return fh.read().decode("utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ChrolloError("bad_config", f"cannot read {path}: {e}") from None


def _write(path: Path, text: str) -> None:
    """Replace ``path``'s text atomically (a temporary beside it, renamed over it). A symlink
    (dotfiles keep settings.json in a repository) is written through: its target is
    replaced, the link stays a link."""
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    try:
        _vault.make_private_dirs(str(path.parent))  # (a harness's own folder, made 0700 if missing)
        mode = path.stat().st_mode & 0o777 if path.exists() else _vault.FILE_MODE
        tmp = path.with_name(f".{path.name}.chrollo-{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as e:  # (a folder that cannot be written: /proc, read-only, a name too long)
        raise ChrolloError("bad_config", f"cannot write {path}: {e.strerror}",
                           "Pass a config file in a folder you can write.") from None


def _sha(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()


def _record(path: Path, kind: str) -> Path:
    # (os.fsencode: a path from argv may hold undecodable bytes, as lone surrogates)
    key = hashlib.sha256(os.fsencode(path.resolve() if path.exists() else path.absolute())).hexdigest()[:24]
    from .layout import install_record

    return Path(install_record(kind, key))
