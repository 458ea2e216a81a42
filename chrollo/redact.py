"""Secrets out of text: the mesh redacts every file before it leaves the machine, and capture
can redact turns before they are written (``chrollo config`` ``redact_capture``, off by default).

Small API (reused by the privacy features)::

    r = Redactor.from_config(home)      # default rules + $CHROLLO_HOME/redact.json
    text, counts = r.redact(text)       # counts: {rule id: n}
    r.redact_bytes(data) -> bytes
    r.digest                            # changes whenever the rules do (caches key on it)

Rules come from two sources, both data: the regex detectors of **detect-secrets** (Yelp's
maintained rule set: AWS, Azure storage, basic-auth URLs, GitHub, GitLab, JWT, Slack, Stripe,
SendGrid, npm, PyPI, Twilio, Discord, Telegram, Square, Mailchimp, IBM, SoftLayer, Cloudant,
Artifactory, OpenAI) and :data:`RULES`, gitleaks-style rules (id, regex, keywords) for what
detect-secrets does not cover (bearer headers, passwords on command lines, ``ya29.`` OAuth
tokens, Hugging Face, Docker, Anthropic, newer key formats, PEM blocks, ``password=``
assignments). Like gitleaks, a rule's regex runs only on text holding one of its keywords —
a substring test is ~100x cheaper than a regex scan, and most text holds no secret.
detect-secrets is imported on first use (never by the hook unless capture redaction is on).
A match is replaced by ``[REDACTED:<rule id>]``; where a rule captures the secret in a group,
only that group is replaced (``postgres://app:[REDACTED:url-password]@db``).

``$CHROLLO_HOME/redact.json`` (or the older ``mesh/redact.json``): ``{"extra": {"id": "regex"},
"disable": ["id", …]}``.
"""
from __future__ import annotations

import hashlib
import json
import os
import re

# gitleaks-style rules: id -> (regex, keywords). A group 1, when present, is the secret.
RULES = {
    # (no capturing group: the whole block is the secret — a group around " BLOCK" once made
    # only that word go, and a PGP key's body was sent)
    "private-key": (r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
                    ("private key",)),
    "aws-access-key-id": (r"\b((?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|A3T[A-Z0-9])[0-9A-Z]{16})\b",
                          ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "a3t")),
    "aws-secret-access-key": (r"(?i)aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})",
                              ("secret_access", "secretaccess")),
    "google-api-key": (r"\b(AIza[0-9A-Za-z_\-]{35})", ("aiza",)),
    "google-oauth-token": (r"\b(ya29\.[0-9A-Za-z_\-]{20,})", ("ya29.",)),
    "github-token": (r"\b((?:gh[pousr]_[A-Za-z0-9]{30,255})|github_pat_[A-Za-z0-9_]{22,255})", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    "gitlab-token": (r"\b(gl(?:pat|dt|ft|soat|rt|cbt|ptt|agent|oas)-[A-Za-z0-9_\-]{20,})",
                     ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glptt-", "glagent-", "gloas-")),
    "anthropic-key": (r"\b(sk-ant-[A-Za-z0-9_\-]{20,})", ("sk-ant-",)),
    "openai-key": (r"\b(sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,})", ("sk-",)),
    "stripe-key": (r"\b((?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,})", ("_live_", "_test_")),
    "slack-token": (r"\b(xox[abposre]-[A-Za-z0-9-]{10,})", ("xox",)),
    "slack-webhook": (r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,})", ("hooks.slack.com",)),
    "discord-webhook": (r"(https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,})", ("discord",)),
    "sendgrid-key": (r"\b(SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{20,})", ("sg.",)),
    "npm-token": (r"\b(npm_[A-Za-z0-9]{30,})", ("npm_",)),
    "huggingface-token": (r"\b(hf_[A-Za-z0-9]{30,})", ("hf_",)),
    "docker-pat": (r"\b(dckr_pat_[A-Za-z0-9_\-]{20,})", ("dckr_pat_",)),
    "pypi-token": (r"\b(pypi-AgE[A-Za-z0-9_\-]{50,})", ("pypi-",)),
    "azure-storage-key": (r"(?i)AccountKey=([A-Za-z0-9+/=]{40,})", ("accountkey=",)),
    "azure-sas": (r"[?&]sig=([A-Za-z0-9%+/=]{30,})", ("sig=",)),
    "shopify-token": (r"\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})", ("shpat_", "shpca_", "shppa_", "shpss_")),
    "digitalocean-token": (r"\b(do[opr]_v1_[a-f0-9]{64})", ("_v1_",)),
    "databricks-token": (r"\b(dapi[a-f0-9]{32}(?:-\d)?)\b", ("dapi",)),
    "linear-key": (r"\b(lin_api_[A-Za-z0-9]{30,})", ("lin_api_",)),
    "notion-token": (r"\b((?:secret_|ntn_)[A-Za-z0-9]{40,})", ("secret_", "ntn_")),
    "atlassian-token": (r"\b(ATATT3[A-Za-z0-9_\-=]{50,})", ("atatt3",)),
    "postman-key": (r"\b(PMAK-[a-f0-9]{24}-[a-f0-9]{34})", ("pmak-",)),
    "newrelic-key": (r"\b(NRAK-[A-Z0-9]{27})", ("nrak-",)),
    "grafana-token": (r"\b(gl(?:sa|c)_[A-Za-z0-9_=+/]{32,})", ("glsa_", "glc_")),
    "mailgun-key": (r"\b(key-[a-f0-9]{32})\b", ("key-",)),
    "square-token": (r"\b(sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,})", ("sq0",)),
    "age-key": (r"\b(AGE-SECRET-KEY-1[0-9A-Z]{58})", ("age-secret-key",)),
    "tailscale-key": (r"\b(tskey-[a-z]+-[A-Za-z0-9]{10,}-[A-Za-z0-9]{20,})", ("tskey-",)),
    "supabase-token": (r"\b(sbp_[a-f0-9]{40})", ("sbp_",)),
    "groq-key": (r"\b(gsk_[A-Za-z0-9]{40,})", ("gsk_",)),
    "replicate-token": (r"\b(r8_[A-Za-z0-9]{30,})", ("r8_",)),
    "sentry-dsn": (r"https://([a-f0-9]{32})@[a-z0-9.\-]*sentry\.io", ("sentry.io",)),
    "jwt": (r"\b(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})", ("eyj",)),
    # credentials in URLs: scheme://user:PASSWORD@host (DATABASE_URL, redis://, amqp://, git over https)
    "url-password": (r"\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@\"'`]{1,64}:([^\s@/\"'`]{1,128})@[^\s\"'`]", ("://",)),
    "auth-header": (r"(?i)\b(?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+([A-Za-z0-9._~+/=\-]{8,})",
                    ("authorization",)),
    "bearer-token": (r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{20,}=*)", ("bearer",)),
    "okta-token": (r"\bSSWS\s+([A-Za-z0-9_\-]{30,})", ("ssws",)),
    # passwords on command lines: mysql -pSECRET, curl -u user:SECRET, --password SECRET
    "cli-password": (r"(?:\bmysql(?:dump|admin)?\b[^\n|;&]*?\s-p|\bcurl\b[^\n|;&]*?\s(?:-u|--user)\s+[^\s:]+:|"
                     r"\s--(?:password|passwd|pass|token|secret|api-key|client-secret)(?:=|\s+))(?!-)([^\s\"'`|;&]{4,})",
                     ("mysql", "curl", "--pass", "--token", "--secret", "--api-key", "--client-secret")),
    # password=…, DB_PASSWORD: …, "api_key": "…", GITHUB_TOKEN=… — a literal value (letters and
    # digits, 6+), not code (`os.environ[…]`, `${VAR}`, `tokenizer.encode(…)`), not a count
    # (`max_tokens=512`), under a key that does not name something else (`token_count`, `secret_name`)
    "password-assignment": (r"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|"
                            r"client[_-]?secret|auth[_-]?key|private[_-]?key)[a-z0-9_]*"
                            + "".join(f"(?<!_{w})" for w in ("name", "type", "url", "uri", "id", "path", "file",
                                                              "count", "version", "length", "size", "limit",
                                                              "ttl", "env", "field", "header", "ref", "hash",
                                                              "provider", "endpoint", "expiry", "prefix"))
                            + r"[\"']?\s*(?::=|=>|[:=])\s*[\"']?(?![$<{(\[])"
                            r"(?=[^\s\"'`,;]*\d)(?=[^\s\"'`,;]*[a-z])(?=([^\s\"'`,;$<>{}()\[\]]{6,}))\1(?![(\[.\w])",
                            ("pass", "pwd", "secret", "token", "api", "access", "client", "auth", "private")),
}
# detect-secrets detectors left out: public IPs are not secrets; the private-key one only
# matches the BEGIN line (our rule takes the whole block).
SKIP_DETECTORS = {"IPPublicDetector", "PrivateKeyDetector"}
# Keywords gating each detect-secrets detector (gitleaks-style prefilter); None = always run.
DS_KEYWORDS = {
    "ArtifactoryDetector": ("akc", "artifactory"), "AWSKeyDetector": ("akia", "asia", "abia", "acca", "a3t", "aws"),
    "AzureStorageKeyDetector": ("accountkey",), "BasicAuthDetector": ("://",), "CloudantDetector": ("cloudant",),
    "DiscordBotTokenDetector": None, "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "GitLabTokenDetector": ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "gr1348941"),
    "IbmCloudIamDetector": ("ibm", "iam_"), "IbmCosHmacDetector": ("cos_hmac", "cos-hmac", "ibm"), "JwtTokenDetector": ("eyj",),
    "MailchimpDetector": ("-us",), "NpmDetector": ("_authtoken",), "OpenAIDetector": ("t3blbkfj",),
    "PypiTokenDetector": ("pypi-",), "SendGridDetector": ("sg.",), "SlackDetector": ("xox", "hooks.slack"),
    "SoftlayerDetector": ("softlayer",), "SquareOAuthDetector": ("sq0",), "StripeDetector": ("k_live_",),
    "TelegramBotTokenDetector": None, "TwilioKeyDetector": ("AC", "SK"),
}


def detect_secrets_rules() -> dict:
    """{"ds-<detector>-<n>": (compiled regex, keywords)} from detect-secrets' regex detectors
    ({} if it is not installed: chrollo's own rules still apply)."""
    try:
        import importlib
        import inspect
        import pkgutil

        import detect_secrets.plugins as plugins
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:
        return {}
    out = {}
    for m in pkgutil.iter_modules(plugins.__path__):
        try:
            mod = importlib.import_module(f"detect_secrets.plugins.{m.name}")
        except Exception:  # noqa: BLE001 — one broken detector never costs the others
            continue
        for name, cls in inspect.getmembers(mod, inspect.isclass):
            if (cls.__module__ != mod.__name__ or not issubclass(cls, RegexBasedDetector)
                    or cls is RegexBasedDetector or name in SKIP_DETECTORS):
                continue
            rid = re.sub(r"[^a-z0-9]+", "-", str(getattr(cls, "secret_type", name)).lower()).strip("-")
            for i, rx in enumerate(getattr(cls, "denylist", ())):
                out[f"{rid}-{i + 1}" if i else rid] = (rx, DS_KEYWORDS.get(name))
    return out


def _config(home: str) -> dict:
    from .layout import redact_rule_files

    for path in redact_rule_files(home):
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as e:
            from .errors import ChrolloError

            raise ChrolloError("bad_config", f"{path} is not valid JSON ({e})")
        return data if isinstance(data, dict) else {}
    return {}


class Redactor:
    def __init__(self, extra: dict | None = None, disable=(), use_detect_secrets: bool = True):
        rules = {rid: (re.compile(rx), kws) for rid, (rx, kws) in RULES.items()}
        for rid, rule in (detect_secrets_rules() if use_detect_secrets else {}).items():
            rules["ds-" + rid if rid in rules else rid] = rule
        for rid, rx in (extra or {}).items():
            rules[str(rid)] = (re.compile(rx), None)
        for rid in disable:
            rules.pop(rid, None)
        # detect-secrets after ours: ours name the kind more precisely and replace only the secret
        self.rules = [(rid, rx, tuple(kws) if kws else None) for rid, (rx, kws) in rules.items()]
        ident = [(rid, rx.pattern, kws) for rid, rx, kws in self.rules]
        try:
            import detect_secrets

            ident.append(getattr(detect_secrets, "__version__", None) or _ds_version())
        except ImportError:
            pass
        self.digest = hashlib.sha256(json.dumps(ident, default=str).encode()).hexdigest()[:16]

    @classmethod
    def from_config(cls, home: str) -> "Redactor":
        cfg = _config(home)
        extra, disable = cfg.get("extra") or {}, cfg.get("disable") or []
        if not isinstance(extra, dict) or not isinstance(disable, list):
            from .errors import ChrolloError

            raise ChrolloError("bad_config", "redact.json: extra must be an object, disable a list")
        return cls(extra, disable)

    def redact(self, text: str) -> tuple[str, dict]:
        """(text with every secret replaced, {rule id: count}). A rule's regex runs only on the
        lines holding one of its keywords (the whole text for multi-line rules)."""
        counts: dict = {}
        low = text.lower()
        absent: set = set()  # keywords not in the text: each is looked for once, not once per rule
        for rid, rx, kws in self.rules:
            if kws:
                kws = [k for k in kws if k not in absent]
                for k in kws:
                    if k not in (text if k != k.lower() else low):
                        absent.add(k)
                kws = [k for k in kws if k not in absent]
                if not kws:
                    continue
            if rid in ANCHORED:
                text, n = _anchored(rx, text, low, kws, rid)
                if n:
                    counts[rid] = n
                    low = text.lower()
                    absent.clear()
                continue
            if kws is None:
                spans = [(0, len(text))]
            elif rid in MULTILINE:
                spans = [(0, len(text))]
            else:
                spans = _lines(text, low, kws)
            if not spans:
                continue
            n = 0

            def sub(m, rid=rid):
                nonlocal n
                whole = m.group(0)
                if "[REDACTED:" in whole:
                    return whole
                g = next((i for i in range(1, (m.re.groups or 0) + 1) if m.group(i)), None)
                n += 1
                if g is None:
                    return f"[REDACTED:{rid}]"
                s = m.start()
                a, b = m.span(g)
                return whole[: a - s] + f"[REDACTED:{rid}]" + whole[b - s:]
            out, last = [], 0
            for a, b in spans:
                out += [text[last:a], rx.sub(sub, text[a:b])]
                last = b
            if n:
                out.append(text[last:])
                text = "".join(out)
                low = text.lower()
                absent.clear()  # (a marker could hold a keyword)
                counts[rid] = n
        return text, counts

    def redact_bytes(self, data: bytes) -> bytes:
        return self.redact(data.decode("utf-8", "replace"))[0].encode("utf-8")


MULTILINE = {"private-key"}
ANCHORED = {"password-assignment"}  # tried only where a keyword starts (its regex begins with one)


def _anchored(rx, text: str, low: str, keywords, rid: str) -> tuple[str, int]:
    spans = []
    for k in keywords:
        i = low.find(k)
        while i >= 0:
            m = rx.match(text, i)
            if m:
                spans.append(m.span(1))
            i = low.find(k, i + 1)
    last, out = 0, []
    for a, b in sorted(set(spans)):
        if a < last:
            continue
        out += [text[last:a], f"[REDACTED:{rid}]"]
        last = b
    return ("".join(out) + text[last:], len(out) // 2) if out else (text, 0)


def _lines(text: str, low: str, keywords) -> list:
    """Merged (start, end) spans of the lines holding any keyword (found at C speed; a keyword
    with capitals is matched case-sensitively)."""
    spans = []
    for k in keywords:
        src = text if k != k.lower() else low
        i = src.find(k)
        while i >= 0:
            a = text.rfind("\n", 0, i) + 1
            b = text.find("\n", i)
            b = len(text) if b < 0 else b
            spans.append((a, b))
            i = src.find(k, b)
    if len(spans) < 2:
        return spans
    spans.sort()
    merged = [spans[0]]
    for a, b in spans[1:]:
        if a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _ds_version() -> str:
    try:
        from importlib.metadata import version

        return version("detect-secrets")
    except Exception:  # noqa: BLE001
        return "?"
