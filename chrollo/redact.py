"""Secrets out of a session file before it leaves the machine (mesh serve, git sync).

The default set (each a named pattern, replaced by ``[REDACTED:<name>]``): AWS access key
ids and secret keys, Google API keys, GitHub and GitLab tokens, OpenAI and Anthropic keys,
Slack tokens, PEM private-key blocks, JWTs, and ``password=``-style assignments (password,
passwd, secret, token, api_key, … followed by ``=`` or ``:`` and a value). Configure in
``$CHROLLO_HOME/mesh/redact.json``: ``{"extra": {"name": "regex", …}, "disable": ["name", …]}``.
Redaction is applied to what is sent, never to your own files.
"""
from __future__ import annotations

import json
import os
import re

DEFAULT_PATTERNS = {
    "aws-access-key-id": r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[0-9A-Z]{16}\b",
    "aws-secret-access-key": r"(?i)\baws_?secret_?access_?key\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}",
    "google-api-key": r"\bAIza[0-9A-Za-z_\-]{35}\b",
    "github-token": r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
    "gitlab-token": r"\bglpat-[A-Za-z0-9_\-]{20,}\b",
    "anthropic-key": r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
    "openai-key": r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
    "slack-token": r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
    "private-key": r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|$)",
    "jwt": r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    # password=…, DB_PASSWORD: …, "api_key": "…", GITHUB_TOKEN=… (from the keyword on)
    "password-assignment": (r"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|"
                            r"client[_-]?secret|auth[_-]?token)[\"']?\s*[:=]\s*[\"']?"
                            r"(?!\[REDACTED)[^\s\"'`,;]{4,}"),
}


# Literal hints (in lower case): a pattern runs only on text that contains one of its hints —
# a substring test is ~100x cheaper than a regex scan, and most text has no secret at all.
HINTS = {
    "aws-access-key-id": ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva"),
    "aws-secret-access-key": ("secret_access", "secretaccess"),
    "google-api-key": ("aiza",), "github-token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab-token": ("glpat-",), "anthropic-key": ("sk-ant-",), "openai-key": ("sk-",),
    "slack-token": ("xox",), "private-key": ("private key",), "jwt": ("eyj",),
}
# The assignment pattern is tried only where one of these words starts (see Redactor.redact).
ANCHORS = {"password-assignment": ("pass", "pwd", "secret", "token", "api", "access", "client", "auth")}


class Redactor:
    def __init__(self, patterns: dict | None = None):
        import hashlib

        self.digest = hashlib.sha256(json.dumps(patterns or DEFAULT_PATTERNS, sort_keys=True).encode()).hexdigest()[:16]
        self.patterns = [(name, re.compile(rx), HINTS.get(name), ANCHORS.get(name))
                         for name, rx in (patterns or DEFAULT_PATTERNS).items()]

    @classmethod
    def from_config(cls, home: str) -> "Redactor":
        pats = dict(DEFAULT_PATTERNS)
        try:
            with open(os.path.join(home, "mesh", "redact.json"), encoding="utf-8") as fh:
                cfg = json.load(fh)
        except FileNotFoundError:
            return cls(pats)
        except (OSError, ValueError) as e:
            from ..errors import ChrolloError

            raise ChrolloError("bad_config", f"mesh/redact.json is not valid JSON ({e})")
        for name in cfg.get("disable", []):
            pats.pop(name, None)
        pats.update(cfg.get("extra", {}))
        return cls(pats)

    def redact(self, text: str) -> tuple[str, dict]:
        """(text with every secret replaced, {pattern name: count})."""
        counts: dict = {}
        low = text.lower()
        for name, rx, hints, anchors in self.patterns:
            if hints and not any(h in low for h in hints):
                continue
            if anchors:
                spans = self._anchored(rx, text, low, anchors)
                for a, b in reversed(spans):
                    text = text[:a] + f"[REDACTED:{name}]" + text[b:]
                n = len(spans)
            else:
                text, n = rx.subn(f"[REDACTED:{name}]", text)
            if n:
                counts[name] = n
                low = text.lower()
        return text, counts

    @staticmethod
    def _anchored(rx, text: str, low: str, anchors) -> list:
        """Non-overlapping spans where ``rx`` matches starting at one of the anchor words."""
        spans = []
        for word in anchors:
            i = low.find(word)
            while i >= 0:
                m = rx.match(text, i)
                if m:
                    spans.append(m.span())
                i = low.find(word, i + 1)
        out: list = []
        for a, b in sorted(spans):
            if out and a < out[-1][1]:
                out[-1] = (out[-1][0], max(b, out[-1][1]))
            else:
                out.append((a, b))
        return out

    def redact_bytes(self, data: bytes) -> bytes:
        return self.redact(data.decode("utf-8", "replace"))[0].encode("utf-8")
