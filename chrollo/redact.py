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

import bisect
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
    # formats #34 found reaching a peer (after each vendor's documented format, as gitleaks has them)
    "slack-app-token": (r"\b(xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)", ("xapp-",)),
    "vault-token": (r"\b(h[vb]s\.[A-Za-z0-9_\-]{24,})", ("hvs.", "hvb.")),
    "google-oauth-client-secret": (r"\b(GOCSPX-[A-Za-z0-9_\-]{28})", ("gocspx-",)),
    "terraform-cloud-token": (r"\b([a-z0-9]{14}\.atlasv1\.[a-z0-9\-_=]{60,70})", ("atlasv1",)),
    "pulumi-token": (r"\b(pul-[a-f0-9]{40})", ("pul-",)),
    "webhook-signing-secret": (r"\b(whsec_[A-Za-z0-9+/=]{24,})", ("whsec_",)),
    "brevo-key": (r"\b(xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16})", ("xkeysib-",)),
    "flyio-token": (r"\b((?:fm[12]_|fo1_)[A-Za-z0-9+/=_\-]{40,})", ("fm1_", "fm2_", "fo1_")),
    "google-refresh-token": (r"(?<![\w/])(1//0[A-Za-z0-9_\-]{40,})", ("1//0",)),
    "doppler-token": (r"\b(dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44})", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.")),
    "sentry-user-token": (r"\b(sntry[us]_[A-Za-z0-9+/=_]{40,})", ("sntryu_", "sntrys_")),
    "planetscale-token": (r"\b(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,64})", ("pscale_",)),
    "netlify-token": (r"\b(nf[pc]_[A-Za-z0-9]{36,})", ("nfp_", "nfc_")),
    "render-key": (r"\b(rnd_[A-Za-z0-9]{32,})", ("rnd_",)),
    "prefect-key": (r"\b(pnu_[A-Za-z0-9]{36})", ("pnu_",)),
    "rubygems-key": (r"\b(rubygems_[a-f0-9]{48})", ("rubygems_",)),
    "dynatrace-token": (r"\b(dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64})", ("dt0c01.",)),
    "easypost-key": (r"\b(EZ[AT]K[A-Za-z0-9]{54})", ("ezak", "eztk")),
    "flutterwave-secret": (r"\b(FLWSECK(?:_TEST)?-[a-f0-9]{32}-X)", ("flwseck",)),
    "clojars-token": (r"\b(CLOJARS_[a-z0-9]{60})", ("clojars_",)),
    "shippo-token": (r"\b(shippo_(?:live|test)_[a-f0-9]{40})", ("shippo_",)),
    "typeform-token": (r"\b(tfp_[A-Za-z0-9_\-.=]{59})", ("tfp_",)),
    "huggingface-org-token": (r"\b(api_org_[A-Za-z0-9]{34})", ("api_org_",)),
    "putty-private-key": (r"PuTTY-User-Key-File-\d:[\s\S]*?(?:Private-MAC:\s*[0-9a-fA-F]+|\Z)", ("putty-user-key-file",)),
    "der-private-key": (r"\b(MII[A-Za-z0-9+/]{60,}={0,2})", ("MII",)),
    "jwk-private-key": (r"\"d\"\s*:\s*\"([A-Za-z0-9_\-]{20,})\"", ('"d"',)),
    "config-password": (r"(?i)(?:<(?:password|passwd|secret|api_?key|token)>([^<\s]{4,})</|"
                        r"\bAPP_KEY=base64:([A-Za-z0-9+/=]{32,})|:_auth\s*=\s*([A-Za-z0-9+/=]{12,})|"
                        r"\"auth\"\s*:\s*\"([A-Za-z0-9+/=]{12,})\"|client-key-data:\s*([A-Za-z0-9+/=]{40,})|"
                        r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S{4,}))",
                        ("<password>", "<passwd>", "<secret>", "<apikey>", "<api_key>", "<token>", "app_key=",
                         "_auth", '"auth"', "client-key-data", "machine")),
    # credentials in URLs: scheme://user:PASSWORD@host (DATABASE_URL, redis://, amqp://, git over https)
    "url-password": (r"\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@\"'`]{1,64}:([^\s@/\"'`]{1,128})@[^\s\"'`]", ("://",)),
    "auth-header": (r"(?i)\b(?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+([A-Za-z0-9._~+/=\-]{8,})",
                    ("authorization",)),
    "bearer-token": (r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{20,}=*)", ("bearer",)),
    "okta-token": (r"\bSSWS\s+([A-Za-z0-9_\-]{30,})", ("ssws",)),
    # passwords on command lines: mysql -pSECRET, curl -u user:SECRET, --password SECRET
    "cli-password": (r"(?:\bmysql(?:dump|admin)?\b[^\n|;&]*?\s-p|\bcurl\b[^\n|;&]*?\s(?:-u|--user)\s+[^\s:]+:|"
                     r"\b(?:docker|podman|helm|oras)\s+(?:registry\s+)?login\b[^\n|;&]*?\s-p\s*|"
                     r"\bsshpass\b[^\n|;&]*?\s-p\s*|\bredis-cli\b[^\n|;&]*?\s-a\s+|"
                     r"\bldap(?:search|add|modify|delete|passwd|whoami)\b[^\n|;&]*?\s-w\s+|"
                     r"\bhtpasswd\b[^\n|;&]*?\s-\w*b\w*\s+\S+\s+\S+\s+|\baz\s+login\b[^\n|;&]*?\s(?:-p|--password)\s+|"
                     r"\baws\s+configure\s+set\s+aws_secret_access_key\s+|\bopenssl\b[^\n|;&]*?\spass:|"
                     r"\s--(?:password|passwd|passphrase|pass|token|secret|api-key|client-secret)(?:=|\s+))"
                     r"(?!-)['\"]?([^\s\"'`|;&]{4,})",
                     ("mysql", "curl", "--pass", "--token", "--secret", "--api-key", "--client-secret", "login",
                      "sshpass", "redis-cli", "ldap", "htpasswd", "configure set", "pass:")),
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
    "DiscordBotTokenDetector": ("discord",), "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), "GitLabTokenDetector": ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "gr1348941"),
    "IbmCloudIamDetector": ("ibm", "iam_"), "IbmCosHmacDetector": ("cos_hmac", "cos-hmac", "ibm"), "JwtTokenDetector": ("eyj",),
    "MailchimpDetector": ("-us",), "NpmDetector": ("_authtoken",), "OpenAIDetector": ("t3blbkfj",),
    "PypiTokenDetector": ("pypi-",), "SendGridDetector": ("sg.",), "SlackDetector": ("xox", "hooks.slack"),
    "SoftlayerDetector": ("softlayer",), "SquareOAuthDetector": ("sq0",), "StripeDetector": ("k_live_",),
    "TelegramBotTokenDetector": (":aa",), "TwilioKeyDetector": ("AC", "SK"),
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
        self._automata = None

    @classmethod
    def from_config(cls, home: str) -> "Redactor":
        cfg = _config(home)
        extra, disable = cfg.get("extra") or {}, cfg.get("disable") or []
        if not isinstance(extra, dict) or not isinstance(disable, list):
            from .errors import ChrolloError

            raise ChrolloError("bad_config", "redact.json: extra must be an object, disable a list")
        return cls(extra, disable)

    def _prefilter(self):
        """Two multi-literal automata (Aho-Corasick, DFA) over every rule's keywords: lowercase
        ones matched in the lowercased text, ones with capitals as written. One pass over the
        text finds every keyword of every rule."""
        if self._automata is None:
            lower, exact = {}, {}
            for i, (_rid, _rx, kws) in enumerate(self.rules):
                for k in kws or ():
                    (exact if k != k.lower() else lower).setdefault(k, []).append(i)
            self._automata = (_Keywords(lower), _Keywords(exact))
        return self._automata

    def redact(self, text: str) -> tuple[str, dict]:
        """(text with every secret replaced, {rule id: count}). One pass finds every rule's
        keywords; a rule's regex runs only on the lines holding one of them (the whole text
        for multi-line rules and rules without keywords); every replacement is made in one
        final pass, an earlier rule's match winning over a later one it overlaps."""
        if not text:
            return text, {}
        lower, exact = self._prefilter()
        raw = text.encode("utf-8", "surrogatepass")
        hits = lower.find(raw.lower()) + exact.find(raw)  # [(byte offset, rule indexes)]
        if hits and not text.isascii():
            hits = _char_offsets(raw, hits)
        where: dict = {}  # rule index -> positions where one of its keywords starts
        for p, rules in hits:
            for i in rules:
                where.setdefault(i, []).append(p)
        chosen: list = []  # sorted, non-overlapping (start, end, rule id)
        starts: list = []
        for i, (rid, rx, kws) in enumerate(self.rules):
            if kws:
                pos = where.get(i)
                if not pos:
                    continue
                if rid in ANCHORED:
                    found = (rx.match(text, p) for p in sorted(set(pos)))
                    spans = None
                elif rid in MULTILINE:
                    spans = [(0, len(text))]
                else:
                    spans = _line_spans(text, pos)
            else:
                spans = [(0, len(text))]
            if spans is not None:
                found = (m for a, b in spans for m in rx.finditer(text, a, b))
            for m in found:
                if m is None:
                    continue
                g = next((j for j in range(1, (m.re.groups or 0) + 1) if m.group(j)), None)
                a, b = m.span(g) if g is not None else m.span()
                if a == b:
                    continue
                k = bisect.bisect_left(starts, a)
                if (k > 0 and chosen[k - 1][1] > a) or (k < len(chosen) and chosen[k][0] < b):
                    continue  # overlaps what an earlier rule took
                starts.insert(k, a)
                chosen.insert(k, (a, b, rid))
        if not chosen:
            return text, {}
        out, last, counts = [], 0, {}
        for a, b, rid in chosen:
            out += [text[last:a], f"[REDACTED:{rid}]"]
            last = b
            counts[rid] = counts.get(rid, 0) + 1
        out.append(text[last:])
        return "".join(out), counts

    def redact_bytes(self, data: bytes) -> bytes:
        return self.redact(data.decode("utf-8", "replace"))[0].encode("utf-8")


MULTILINE = {"private-key", "putty-private-key"}
ANCHORED = {"password-assignment"}  # tried only where a keyword starts (its regex begins with one)


class _Keywords:
    """Where any of ``{keyword: [rule index]}`` occurs in a byte string: ahocorasick-rs (a
    Rust Aho-Corasick DFA, overlapping matches) — one pass at ~60 MB/s where testing each
    keyword on its own cost a pass per keyword; a regex alternation if it is not installed."""

    def __init__(self, keywords: dict):
        self.words = [k.encode() for k in keywords]
        self.rules = [tuple(v) for v in keywords.values()]
        self.ac = self.rx = None
        if not self.words:
            return
        try:
            import ahocorasick_rs as ar

            self.ac = ar.BytesAhoCorasick(self.words, implementation=ar.Implementation.DFA)
        except ImportError:
            self.rx = re.compile(b"(?=(" + b"|".join(re.escape(w) for w in self.words) + b"))")

    def find(self, data: bytes) -> list:
        if self.ac is not None:
            return [(start, self.rules[k]) for k, start, _end in self.ac.find_matches_as_indexes(data, overlapping=True)]
        if self.rx is None:
            return []
        out = []
        for m in self.rx.finditer(data):  # (every keyword starting here, not only the first)
            out += [(m.start(), self.rules[k]) for k, w in enumerate(self.words) if data.startswith(w, m.start())]
        return out


def _char_offsets(raw: bytes, hits: list) -> list:
    """``hits`` with byte offsets into ``raw`` (UTF-8) turned into character offsets, in one
    pass (a keyword is ASCII, so each offset falls on a character boundary)."""
    out, last_b, last_c = [], 0, 0
    for b, rules in sorted(hits, key=lambda h: h[0]):
        last_c += len(raw[last_b:b].decode("utf-8", "surrogatepass"))
        last_b = b
        out.append((last_c, rules))
    return out


def _line_spans(text: str, positions: list) -> list:
    """Merged (start, end) spans of the lines holding the given positions."""
    spans, last_end = [], -1
    for p in sorted(positions):
        if p < last_end:
            continue
        a = text.rfind("\n", 0, p) + 1
        b = text.find("\n", p)
        b = len(text) if b < 0 else b
        if spans and a <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(b, spans[-1][1]))
        else:
            spans.append((a, b))
        last_end = b
    return spans


def _ds_version() -> str:
    try:
        from importlib.metadata import version

        return version("detect-secrets")
    except Exception:  # noqa: BLE001
        return "?"
