"""Codex CLI (``codex exec``) against the fake OpenAI Responses server.

Config (``~/.codex/config.toml``): a ``fake`` model provider with ``wire_api = "responses"``
at the server, update checks and analytics off. Codex runs ``hooks.json`` hooks only once
the user trusted them (the TUI's "Hooks need review" writes ``[hooks.state."<path>:<event>:…"]
trusted_hash``); ``codex exec`` skips untrusted hooks silently. The suite does what a CI
user does: ``--dangerously-bypass-hook-trust`` (``bypass_trust=False`` runs without it;
:meth:`trust` writes the approval the TUI would).
Sessions: ``~/.codex/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl``; ``--json`` prints the id.
"""
from __future__ import annotations

import json

from ..kit.world import ROOT
from .base import Driver, Result, json_lines

MODEL = "gpt-5.4"


class Codex(Driver):
    name = "codex"
    extra_args: list = []   # on every run (the package turns plugins on)
    mcp_wait = {"args": ("-c", "mcp_servers.chrollo.required=true")}

    def configure(self) -> None:
        cfg = self.w.home / ".codex" / "config.toml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text(f'''model = "{MODEL}"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "Fake model (chrollo e2e)"
base_url = "{self.w.server.url}/v1"
wire_api = "responses"
env_key = "FAKE_MODEL_API_KEY"
request_max_retries = 2
stream_max_retries = 3
stream_idle_timeout_ms = 30000

[analytics]
enabled = false

[feedback]
enabled = false

# features that reach chatgpt.com / github.com at start-up (plugin and app catalogues)
[features]
apps = false
plugins = false
remote_plugin = false
plugin_sharing = false
in_app_updates = false
''', "utf-8")

    def env(self) -> dict:
        return {"FAKE_MODEL_API_KEY": "sk-e2e-fake", "CODEX_DISABLE_UPDATE_CHECK": "1"}

    def config_files(self) -> list:
        return [self.w.home / ".codex" / "hooks.json", self.w.home / ".codex" / "config.toml"]

    def package_commands(self) -> tuple:
        """The repository is a marketplace (``.agents/plugins/marketplace.json``) named chrollo;
        plugins are a feature this suite's config turns off (their catalogue sync reaches out)."""
        on = ["--enable", "plugins"]
        self.extra_args = on
        self.own_traffic = ("github.com:443", "api.github.com:443", "chatgpt.com:443")  # curated plugins sync
        self.mcp_wait = {}   # (`-c mcp_servers.chrollo.required=true` would declare a second server)
        return ([["codex", "plugin", "marketplace", "add", ROOT, *on], ["codex", "plugin", "add", "chrollo@chrollo", *on]],
                [["codex", "plugin", "remove", "chrollo@chrollo", *on], ["codex", "plugin", "marketplace", "remove", "chrollo", *on]])

    def run(self, prompt: str, *, resume: str | None = None, cont: bool = False, timeout: float = 180,
            bypass_trust: bool = True, args: tuple = (), **env) -> Result:
        cmd = ["codex", "exec"]
        if resume or cont:
            cmd += ["resume"]
        cmd += ["--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", *self.extra_args, *args]
        if bypass_trust:
            cmd += ["--dangerously-bypass-hook-trust"]
        if resume:
            cmd += [resume]
        elif cont:
            cmd += ["--last"]
        cmd += [prompt]
        p = self._exec(cmd, timeout, **env)
        sid, text = None, ""
        for ev in json_lines(p.stdout):
            if ev.get("type") == "thread.started":
                sid = ev.get("thread_id")
            item = ev.get("item") or {}
            if ev.get("type") == "item.completed" and item.get("type") == "agent_message":
                text = item.get("text") or ""
        return Result(p, sid, text)

    def trust(self) -> None:
        """Trust chrollo's hooks the way Codex's TUI does: the ``[hooks.state."…"]
        trusted_hash`` tables ``chrollo doctor`` prints for them, appended to config.toml."""
        report = json.loads(self.w.chrollo("doctor", "--json", "--harness", "codex", check=False).stdout)
        fix = report["harnesses"]["codex"].get("fix") or ""
        lines = fix.split(":\n", 1)[1] if ":\n" in fix else ""
        assert "trusted_hash" in lines, fix
        cfg = self.w.home / ".codex" / "config.toml"
        cfg.write_text(cfg.read_text("utf-8") + "\n" + lines.strip() + "\n", "utf-8")

    def transcripts(self) -> list:
        return sorted((self.w.home / ".codex" / "sessions").rglob("*.jsonl"))
