"""Secrets out of text: the mesh redacts every file before it leaves the machine, and capture
can redact turns before they are written (``chrollo config`` ``redact_capture``, off by default).

Small API (reused by the privacy features)::

    r = Redactor.from_config(home)      # default rules + $CHROLLO_HOME/redact.json, + the cache
    text, counts = r.redact(text)       # counts: {rule id: n}
    r.redact_bytes(data) -> bytes       # through the cache (content hash -> redacted bytes)
    r.digest                            # changes whenever the rules do (caches key on it)
    forget_cached(home, [raw bytes…])   # forget drops what the cache holds of a file

**Rules, all data**, tried in this order (the first names a span that several find):

1. :data:`RULES`, chrollo's own, for what is said in conversation that the rule sets miss:
   passwords on command lines (``docker login -p``, ``sshpass -p``, ``redis-cli -a``,
   ``pass:`` …), config files (``.netrc``, ``.pgpass``, XML ``<password>``, connection strings,
   ``APP_KEY``, npm ``_auth``, docker ``"auth"``, ``client-key-data``), key material (PEM and
   PuTTY blocks, base64 DER bodies without headers, a JWK's private members);
   and vendors' documented token formats (Doppler, PlanetScale, Dynatrace, Sentry, …);
2. the regex detectors of **detect-secrets** (imported on first use);
3. ``$CHROLLO_HOME/redact.json`` (or ``mesh/redact.json``): ``{"extra": {"id": "regex"},
   "disable": ["id", …]}``.

**One pass for every keyword.** Every rule names literals one of which each match holds (its
keywords). One Aho-Corasick automaton over all of them (``ahocorasick-rs``) finds, in a single
pass over the lowercased text, where each occurs; then only the rules whose keyword occurred
run, and only on the lines that hold it — or, for a rule whose regex starts at its keyword
(chrollo's assignments), only *at* the keyword. A rule whose
regex starts with a literal needs no keyword (the regex engine's own literal search is as fast).
Most text holds no secret; this is what makes redaction cost little.

A match is replaced by ``[REDACTED:<rule id>]``; where a rule captures the secret in a group,
only that group is (``postgres://app:[REDACTED:url-password]@db``). Spans found by several
rules are merged, so a secret is never half-replaced.

**Cache.** :meth:`Redactor.redact_bytes` keeps the redacted output of each file, keyed by the
SHA-256 of its raw bytes and the rules' digest (``layout.redaction_cache_file``), so an
unchanged file is never redacted twice. Only redacted output is kept (for a file with nothing
to redact, nothing but its hash: most files); ``forget`` drops a
forgotten file's entry (and SQLite overwrites freed pages: ``secure_delete``).
"""
from __future__ import annotations

import hashlib
import json
import os
import re

# chrollo's own rules: id -> (regex, keywords[, options]). A group 1, when present, is the secret
# (options "group": n names another). options: "at": the regex starts at a keyword (it is tried
# only there); "multiline": the match may span lines; "check": a function the secret must pass;
# "case": the keywords are as written (the regex is case-sensitive: "canvas" is no "ANVA" key).
_CODE_WORDS = {"required", "optional", "string", "str", "none", "null", "true", "false", "undefined",
               "password", "passwd", "secret", "hidden", "masked", "redacted", "example", "changeit_later",
               "placeholder", "your_password", "yourpassword", "<password>", "prompt", "stdin", "empty",
               "not_set", "notset", "unset", "missing", "nullable", "boolean", "integer", "number", "object"}


def _literal(value: str) -> bool:
    """A value said, not code: not a type, a reference, a call or a dotted name."""
    low = value.lower().strip("'\"")
    if low in _CODE_WORDS or re.fullmatch(r"[a-z_][\w]*(?:\.[a-z_]\w*)+", low) or low.startswith(("env.", "process.")):
        return False
    return not re.fullmatch(r"[*x.•]+|\w+_(?:file|path|name|env)", low)


_B64 = r"[A-Za-z0-9+/]"
RULES = {
    # the whole block (no group: a group around " BLOCK" once made only that word go)
    "private-key": (r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
                    ("-----begin",), {"multiline": True, "at": True}),
    "putty-private-key": (rf"Private-Lines:\s*\d+\s*\n(?:{_B64}{{8,}}=*\s*\n?)+(?:Private-MAC:\s*[0-9a-fA-F]+)?",
                          ("private-lines:",), {"multiline": True, "at": True}),
    # a DER private key pasted as base64 without its PEM lines: PKCS#8 RSA, PKCS#1 RSA, SEC1 EC, Ed25519
    "der-private-key": (r"\b(?:MII[A-Za-z0-9+/]{1,3}(?:IBADANBgkqhkiG9w0BAQEFAAS|IBAAKCA[QgY]EA)|MHcCAQEEI|MC4CAQAwBQYDK2Vw)"
                        rf"{_B64}*=*(?:\s*\n\s*{_B64}{{16,}}=*)*",
                        ("ibadanbgkqhkig9w0baqefaas", "ibaakcaqea", "ibaakcagea", "ibaakcayea", "mhccaqeei",
                         "mc4caqawbqydk2vw"), {"multiline": True}),
    # a JWK's private members (RSA d p q dp dq qi, EC/OKP d, symmetric k)
    "jwk-private": (r"\"(?:d|p|q|dp|dq|qi|k)\"\s*:\s*\"([A-Za-z0-9_\-]{16,})\"",
                    ('"d"', '"p"', '"q"', '"dp"', '"dq"', '"qi"', '"k"'), {"at": True}),
    "aws-access-key-id": (r"\b((?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|A3T[A-Z0-9])[0-9A-Z]{16})\b",
                          ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "A3T"), {"case": True}),
    "aws-secret-access-key": (r"(?i)aws_?secret_?access_?key[\"']?\s*(?:[:=]\s*|\s+)[\"']?([A-Za-z0-9/+=]{40})",
                              ("aws_secret_access", "awssecretaccess", "aws_secretaccess", "awssecret_access"), {"at": True}),
    "google-api-key": (r"\b(AIza[0-9A-Za-z_\-]{35})", ("aiza",)),
    "google-oauth-token": (r"\b(ya29\.[0-9A-Za-z_\-]{20,})", ("ya29.",)),
    "google-refresh-token": (r"(?<![\w/])(1//0[0-9A-Za-z_\-]{30,})", ("1//0",)),
    "google-client-secret": (r"\b(GOCSPX-[0-9A-Za-z_\-]{20,})", ("gocspx-",)),
    "github-token": (r"\b((?:gh[pousr]_[A-Za-z0-9]{30,255})|github_pat_[A-Za-z0-9_]{22,255})", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    "gitlab-token": (r"\b(gl(?:pat|dt|ft|soat|rt|cbt|ptt|agent|oas)-[A-Za-z0-9_\-]{20,})",
                     ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glptt-", "glagent-", "gloas-")),
    "anthropic-key": (r"\b(sk-ant-[A-Za-z0-9_\-]{20,})", ("sk-ant-",)),
    "openai-key": (r"\b(sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,})", ("sk-",)),
    "stripe-key": (r"\b((?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,})", ("_live_", "_test_")),
    "webhook-signing-secret": (r"\b(whsec_[A-Za-z0-9+/=_\-]{20,})", ("whsec_",)),
    "slack-token": (r"\b(xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{20,})", ("xox", "xapp-")),
    "slack-webhook": (r"(https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,})", ("hooks.slack.com",)),
    "discord-webhook": (r"(https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,})", ("discord",)),
    "sendgrid-key": (r"\b(SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{20,})", ("sg.",)),
    "brevo-key": (r"\b(x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16})", ("xkeysib-", "xsmtpsib-")),
    "vault-token": (r"\b(hv[sbr]\.[A-Za-z0-9_\-]{20,})", ("hvs.", "hvb.", "hvr.")),
    "terraform-cloud-token": (r"\b([A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,})", (".atlasv1.",)),
    "pulumi-token": (r"\b(pul-[a-f0-9]{40})\b", ("pul-",)),
    "flyio-token": (r"\b((?:fm[12][ar]?|fo1)_[A-Za-z0-9+/=_\-]{30,})", ("fm1_", "fm2_", "fm1a_", "fm2a_", "fm1r_", "fm2r_", "fo1_")),
    "npm-token": (r"\b(npm_[A-Za-z0-9]{30,})", ("npm_",)),
    "huggingface-token": (r"\b(hf_[A-Za-z0-9]{30,})", ("hf_",)),
    "docker-pat": (r"\b(dckr_pat_[A-Za-z0-9_\-]{20,})", ("dckr_pat_",)),
    # vendors' documented token prefixes (each vendor's API-token documentation)
    "doppler-token": (r"\b(dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44})", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit.")),
    "planetscale-token": (r"\b(pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,64})", ("pscale_",)),
    "onepassword-sa-token": (r"\b(ops_eyJ[A-Za-z0-9+/=]{250,})", ("ops_eyj",)),
    "shippo-token": (r"\b(shippo_(?:live|test)_[a-f0-9]{40})", ("shippo_",)),
    "dynatrace-token": (r"\b(dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64})", ("dt0c01.",)),
    "easypost-key": (r"\b(EZ[AT]K[A-Za-z0-9]{54})", ("ezak", "eztk")),
    "flutterwave-key": (r"\b(FLW(?:SECK|PUBK)(?:_TEST)?-[a-h0-9]{32}-X)", ("flwseck", "flwpubk")),
    "artifactory-key": (r"\b(AKCp[A-Za-z0-9]{69})", ("akcp",)),
    "prefect-key": (r"\b(pnu_[A-Za-z0-9]{36})", ("pnu_",)),
    "readme-key": (r"\b(rdme_[a-z0-9]{70})", ("rdme_",)),
    "rubygems-key": (r"\b(rubygems_[a-f0-9]{48})", ("rubygems_",)),
    "clojars-token": (r"\b(CLOJARS_[a-z0-9]{60})", ("clojars_",)),
    "frameio-token": (r"\b(fio-u-[A-Za-z0-9_=\-]{64})", ("fio-u-",)),
    "infracost-key": (r"\b(ico-[A-Za-z0-9]{32})\b", ("ico-",)),
    "duffel-token": (r"\b(duffel_(?:test|live)_[A-Za-z0-9_\-=]{43})", ("duffel_",)),
    "sentry-user-token": (r"\b(sntry[us]_[A-Za-z0-9+/=_\-]{40,})", ("sntryu_", "sntrys_")),
    "datadog-app-key": (r"(?i)\b(?:dd|datadog)_?app(?:lication)?_?key[\"']?\s*[:=]\s*[\"']?([a-f0-9]{40})\b",
                        ("dd_app", "ddapp", "datadog_app", "datadogapp"), {"at": True}),
    "algolia-admin-key": (r"(?i)\balgolia[\w.\-]{0,20}?(?:key|secret)[\"']?\s*[:=]\s*[\"']?([a-f0-9]{32})\b",
                          ("algolia",), {"at": True}),
    "pypi-token": (r"\b(pypi-AgE[A-Za-z0-9_\-]{50,})", ("pypi-",)),
    "azure-storage-key": (r"(?i)AccountKey=([A-Za-z0-9+/=]{40,})", ("accountkey=",)),
    "azure-sas": (r"[?&]sig=([A-Za-z0-9%+/=]{30,})", ("sig=",)),
    "azure-ad-client-secret": (r"(?<![\w~.])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34})(?![\w~.\-])", ("q~",)),
    # an Azure DevOps PAT is 52 base32 letters, said next to where it goes
    "azure-devops-pat": (r"(?i)(?:azure_devops\w*|ado_\w*|devops\w*pat\w*|\bpat)[\"']?\s*[:=]\s*[\"']?([a-z2-7]{52})\b|"
                         r"https://[^\s:/@]+:([a-z2-7]{52})@dev\.azure\.com",
                         ("azure_devops", "ado_", "devops", 'pat"', "pat'", "pat:", "pat=", "pat ", "pat\t",
                          "dev.azure.com")),
    "shopify-token": (r"\b(shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})", ("shpat_", "shpca_", "shppa_", "shpss_")),
    "digitalocean-token": (r"\b(do[opr]_v1_[a-f0-9]{64})", ("_v1_",)),
    "databricks-token": (r"\b(dapi[a-f0-9]{32}(?:-\d)?)\b", ("dapi",)),
    "linear-key": (r"\b(lin_(?:api|wh)_[A-Za-z0-9]{30,})", ("lin_api_", "lin_wh_")),
    "notion-token": (r"\b((?:secret_|ntn_)[A-Za-z0-9]{40,})", ("secret_", "ntn_")),
    "atlassian-token": (r"\b(ATATT3[A-Za-z0-9_\-=]{50,})", ("atatt3",)),
    "postman-key": (r"\b(PMAK-[a-f0-9]{24}-[a-f0-9]{34})", ("pmak-",)),
    "newrelic-key": (r"\b(NRAK-[A-Z0-9]{27})", ("nrak-",)),
    "grafana-token": (r"\b(gl(?:sa|c)_[A-Za-z0-9_=+/]{32,})", ("glsa_", "glc_")),
    "mailgun-key": (r"\b(key-[a-f0-9]{32})\b", ("key-",)),
    "square-token": (r"\b(sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,}|EAAA[A-Za-z0-9_\-]{56,})", ("sq0", "eaaa")),
    "age-key": (r"\b(AGE-SECRET-KEY-1[0-9A-Z]{58})", ("age-secret-key",)),
    "tailscale-key": (r"\b(tskey-[a-z]+-[A-Za-z0-9]{10,}-[A-Za-z0-9]{20,})", ("tskey-",)),
    "supabase-token": (r"\b(sbp_[a-f0-9]{40})", ("sbp_",)),
    "groq-key": (r"\b(gsk_[A-Za-z0-9]{40,})", ("gsk_",)),
    "replicate-token": (r"\b(r8_[A-Za-z0-9]{30,})", ("r8_",)),
    "perplexity-key": (r"\b(pplx-[A-Za-z0-9]{40,})", ("pplx-",)),
    "xai-key": (r"\b(xai-[A-Za-z0-9]{70,})", ("xai-",)),
    "netlify-token": (r"\b(nf[pcu]_[A-Za-z0-9]{36,})", ("nfp_", "nfc_", "nfu_")),
    "heroku-key": (r"\b(HRKU-[A-Za-z0-9_\-]{40,})", ("hrku-",)),
    "sentry-dsn": (r"https://([a-f0-9]{32})@[a-z0-9.\-]*sentry\.io", ("sentry.io",)),
    "jwt": (r"\b(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})", ("eyj",)),
    # credentials in URLs: scheme://user:PASSWORD@host (DATABASE_URL, redis://, amqp://, git over https)
    "url-password": (r"\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@\"'`]{1,64}:([^\s@/\"'`]{1,128})@[^\s\"'`]", ("://",)),
    "auth-header": (r"(?i)\b(?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|digest)\s+([A-Za-z0-9._~+/=\-]{8,})",
                    ("authorization",)),
    "bearer-token": (r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{20,}=*)", ("bearer",)),
    "okta-token": (r"\bSSWS\s+([A-Za-z0-9_\-]{30,})", ("ssws",)),
    # passwords on command lines: mysql -pSECRET, curl -u user:SECRET, --password SECRET,
    # docker login -p, sshpass -p, redis-cli -a, ldapsearch -w, htpasswd -b FILE USER PASS,
    # az login -p, mongosh -p, smbclient -U user%PASS, openssl … pass:PASS, gpg --passphrase
    "cli-password": (r"(?:\bmysql(?:dump|admin)?\b[^\n|;&]*?\s-p|\bcurl\b[^\n|;&]*?\s(?:-u|--user)\s+[^\s:]+:|"
                     r"\b(?:docker|podman|nerdctl|buildah|skopeo)\s+login\b[^\n|;&]*?\s-p\s+|"
                     r"\bsshpass\s+(?:-[a-oq-z]\S*\s+)*-p\s*|\bredis-cli\b[^\n|;&]*?\s(?:-a|--pass)\s+|"
                     r"\bldap[a-z]+\b[^\n|;&]*?\s-w\s+|\bhtpasswd\s+(?:-[a-zA-Z]+\s+)*-[a-zA-Z]*b[a-zA-Z]*\s+(?:-[a-zA-Z]+\s+)*\S+\s+\S+\s+|"
                     r"\baz\s+login\b[^\n|;&]*?\s(?:-p|--password)\s+|\bmongo(?:sh)?\b[^\n|;&]*?\s-p\s+|"
                     r"\bsmbclient\b[^\n|;&]*?\s-U\s+[^\s%]+%|(?<![\w-])pass:|"
                     r"\baws\s+configure\s+set\s+\S*(?:secret|token|password)\S*\s+|"
                     r"\s--(?:password|passwd|pass|passphrase|token|secret|api-key|apikey|auth-token|access-token|client-secret)(?:=|\s+))"
                     r"(?!-)['\"]?([^\s\"'`|;&]{4,})",
                     ("mysql", "curl", " login", "sshpass", "redis-cli", "ldap", "htpasswd", "mongo", "smbclient",
                      "pass:", "configure", "--pass", "--token", "--secret", "--api", "--apikey", "--auth-token",
                      "--access-token", "--client-secret")),
    "xml-password": (r"(?i)<(password|passwd|secret|token|api[_-]?key|client[_-]?secret|private[_-]?key)>([^<\s][^<]{2,})</\1>",
                     ("<password>", "<passwd>", "<secret>", "<token>", "<apikey>", "<api_key>", "<api-key>",
                      "<client_secret>", "<client-secret>", "<clientsecret>", "<private_key>", "<privatekey>"), {"group": 2}),
    # Password=…; in ADO/ODBC/JDBC connection strings ($, spaces and all, up to the ;)
    "connection-string-password": (r"(?i);\s*(?:password|pwd)\s*=\s*(?![\s;{$])([^;\n\"']{3,})|"
                                   r"(?:^|[\s\"'])(?:password|pwd)\s*=\s*(?![\s;{$])([^;\n\"']{3,});",
                                   ("password=", "pwd=", "password =", "pwd =")),
    "laravel-app-key": (r"\bAPP_KEY\s*=\s*[\"']?(base64:[A-Za-z0-9+/=]{20,}|[A-Za-z0-9]{32})", ("app_key",)),
    "npm-auth": (r"(?i)(?:^|[\s:])_auth(?:token)?\s*=\s*[\"']?([^\s\"'$]{8,})", ("_auth",)),
    "docker-auth": (r"\"(?:auth|identitytoken|password)\"\s*:\s*\"([A-Za-z0-9+/=_.\-]{12,})\"", ('"auth"', '"identitytoken"', '"password"')),
    "kubeconfig-client-key": (r"(?i)client-key-data\s*:\s*[\"']?([A-Za-z0-9+/=]{20,})", ("client-key-data",)),
    # ~/.pgpass: host:port:database:user:password (the port or a * says it is one)
    "pgpass-line": (r"(?<![\w:.*-])[\w.*-]+:(?:\d{2,5}|\*):[^\s:]+:[^\s:]+:(\S+)", (":5432:", ":6432:", ":5433:", ":*:")),
    # ~/.netrc: machine HOST [login USER] password PASS (on one line or several)
    "netrc-password": (r"\bmachine\s+\S+\s+(?:login\s+\S+\s+)?password\s+(\S+)", ("machine",), {"multiline": True, "at": True}),
    # password=…, DB_PASSWORD: …, "api_key": "…", GITHUB_TOKEN=… — a literal value (letters and
    # digits, 6+), not code (`os.environ[…]`, `${VAR}`, `tokenizer.encode(…)`), not a count
    # (`max_tokens=512`), under a key that does not name something else (`token_count`, `secret_name`)
    "password-assignment": (r"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|"
                            r"client[_-]?secret|auth[_-]?key|private[_-]?key)[a-z0-9_]*"
                            + "".join(f"(?<!_{w})" for w in ("name", "type", "url", "uri", "id", "path", "file",
                                                              "count", "version", "length", "size", "limit",
                                                              "ttl", "env", "field", "header", "ref", "hash",
                                                              "provider", "endpoint", "expiry", "prefix"))
                            + r"(?:[\"']\]|[\"'])?\s*(?::=|=>|[:=])\s*[\"']?(?![$<{(\[])"
                            r"(?=[^\s\"'`,;]*\d)(?=[^\s\"'`,;]*[a-z])(?=([^\s\"'`,;$<>{}()\[\]]{6,}))\1(?![(\[.\w])",
                            # (the keywords the regex can start with: a bare "auth", "api" or "client" was
                            # tried at every "author", "rapid" and "client" of coding transcripts)
                            ("pass", "pwd", "secret", "token", *(f"{a}{s}{b}" for a, b in (
                                ("api", "key"), ("access", "key"), ("client", "secret"), ("auth", "key"), ("private", "key"))
                                for s in ("", "_", "-"))), {"at": True}),
    # a password or secret said without digits (`password: correcthorsebattery`, `pass = …`,
    # `define('DB_PASSWORD', '…')`): the key must end in the word, the value must be a literal
    "password-literal": (r"(?i)(?:password|passwd|passphrase|pwd|secret(?:[_-]?key(?:[_-]?base)?)?|(?<![\w-])pass(?=\s*=))"
                         r"(?![\w-])(?:[\"']\]|[\"'])?\s*(?::=|=>|[:=]|,(?=\s*[\"']))\s*"
                         r"(?:\"(?![$<{%*(\[])([^\"\n]{6,}?)\"|'(?![$<{%*(\[])([^'\n]{6,}?)'|"
                         r"(?![$<{%*(\[\"'])([^\s\"'`,;<>(){}\[\]]{6,})(?=[\s,;`'\")]|$))",
                         ("password", "passwd", "passphrase", "pwd", "secret", "pass"),
                         {"at": True, "check": _literal}),
    # the same said as YAML, the value on the line after its key (`password:` then an indented
    # `  hunter2…`, or a block scalar `token: |`): a scalar alone on its line, indented deeper
    # than the key — not a mapping (`name: x`), a list, a reference or code (`if token:`)
    "yaml-secret-next-line": (r"(?im)^([ \t]*)(?:-[ \t]+)?[\"']?[\w.-]*?(?:pass|pwd|secret|token|api[_-]?key|"
                              r"access[_-]?key|auth[_-]?key|private[_-]?key)[\w-]*[\"']?[ \t]*:[ \t]*(?:[|>][-+]?[ \t]*)?\r?\n"
                              r"\1[ \t]+(\"(?![$<{%*(\[])[^\"\n]{6,}\"|'(?![$<{%*(\[])[^'\n]{6,}'|"
                              r"(?![$<{%*(\[\"'#-])[^\s\"'`,;<>(){}\[\]]{5,}[^\s\"'`,;<>(){}\[\]:])[ \t]*\r?$",
                              ("pass", "pwd", "secret", "token", *(f"{a}{s}{b}" for a, b in (
                                  ("api", "key"), ("access", "key"), ("auth", "key"), ("private", "key"))
                                  for s in ("", "_", "-"))), {"multiline": True, "group": 2, "check": _literal}),
    "nuget-key": (r"\b(oy2[a-z0-9]{43})\b", ("oy2",)),
    "render-key": (r"\b(rnd_[A-Za-z0-9]{32,})", ("rnd_",)),
    "huggingface-org-token": (r"\b(api_org_[A-Za-z0-9]{34,})", ("api_org_",)),
    "typeform-token": (r"\b(tfp_[A-Za-z0-9_\-.=]{40,})", ("tfp_",)),
    "algolia-key": (r"(?i)algoliasearch\(\s*['\"][A-Z0-9]{10}['\"]\s*,\s*['\"]([a-f0-9]{32})['\"]", ("algoliasearch(",)),
}
# detect-secrets detectors left out: public IPs are not secrets; the private-key one only
# matches the BEGIN line (our rule takes the whole block).
SKIP_DETECTORS = {"IPPublicDetector", "PrivateKeyDetector"}
# Keywords gating each detect-secrets detector; None = none needed (the regex starts with a
# literal, which the regex engine finds as fast as the automaton) or none possible.
DS_KEYWORDS = {
    "ArtifactoryDetector": ("akc", "artifactory"), "AWSKeyDetector": ("akia", "asia", "abia", "acca", "a3t", "aws"),
    "AzureStorageKeyDetector": ("accountkey",), "BasicAuthDetector": ("://",), "CloudantDetector": ("cloudant",),
    "DiscordBotTokenDetector": None, "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLabTokenDetector": ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "gr1348941"),
    "IbmCloudIamDetector": ("ibm", "iam_"), "IbmCosHmacDetector": ("cos_hmac", "cos-hmac", "ibm"), "JwtTokenDetector": ("eyj",),
    "MailchimpDetector": ("-us",), "NpmDetector": ("_authtoken",), "OpenAIDetector": ("t3blbkfj",),
    "PypiTokenDetector": ("pypi-",), "SendGridDetector": ("sg.",), "SlackDetector": ("xox", "hooks.slack"),
    "SoftlayerDetector": ("softlayer",), "SquareOAuthDetector": ("sq0",), "StripeDetector": ("k_live_",),
    "TelegramBotTokenDetector": (":aa",), "TwilioKeyDetector": None,
}


def detect_secrets_rules(cache: str | None = None) -> dict:
    """{"<detector>[-<n>]": (regex, flags, keywords)} from detect-secrets' regex detectors
    ({} if it is not installed: the other rules still apply). With ``cache`` (a JSON file), the
    detectors' regexes are kept there as data for the installed version, so a process that
    finds them there never imports detect-secrets (~0.15-0.25 s: it imports requests)."""
    version = _ds_version()
    if version is None:
        return {}
    found = _read_ds_cache(cache, version) if cache else None
    if found is None:
        found = _ds_detectors()
        if cache and found:
            _write_ds_cache(cache, version, found)
    out = {}
    for name, rid, patterns in found:
        if name in SKIP_DETECTORS:
            continue
        for i, (rx, flags) in enumerate(patterns):
            out[f"{rid}-{i + 1}" if i else rid] = (rx, flags, DS_KEYWORDS.get(name))
    return out


def _ds_detectors() -> list:
    """[(class name, rule id, [(regex, flags), …])] of detect-secrets' regex detectors."""
    try:
        import importlib
        import inspect
        import pkgutil

        import detect_secrets.plugins as plugins
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:
        return []
    out = []
    for m in pkgutil.iter_modules(plugins.__path__):
        try:
            mod = importlib.import_module(f"detect_secrets.plugins.{m.name}")
        except Exception:  # noqa: BLE001 — one broken detector never costs the others
            continue
        for name, cls in inspect.getmembers(mod, inspect.isclass):
            if cls.__module__ != mod.__name__ or not issubclass(cls, RegexBasedDetector) or cls is RegexBasedDetector:
                continue
            rid = re.sub(r"[^a-z0-9]+", "-", str(getattr(cls, "secret_type", name)).lower()).strip("-")
            pats = [(rx.pattern, rx.flags) if hasattr(rx, "pattern") else (str(rx), 0)
                    for rx in getattr(cls, "denylist", ())]
            out.append((name, rid, [(p, f) for p, f in pats if isinstance(p, str)]))
    return sorted(out)


def _read_ds_cache(path: str, version: str):
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if data.get("detect-secrets") != version:
            return None
        return [(str(n), str(r), [(str(p), int(f)) for p, f in pats]) for n, r, pats in data["detectors"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # missing or damaged: made again


def _write_ds_cache(path: str, version: str, found: list) -> None:
    from .homedir import write_private

    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        write_private(path, json.dumps({"detect-secrets": version, "detectors": found}))
    except OSError:
        pass  # a cache: never fatal


_SURROGATE = re.compile("[\ud800-\udfff]")


# A rule without keywords runs over every text: a cheap regex any of its matches must hold,
# tried first, spares most texts the whole rule (Discord's token — [MNO] then 23-25 word
# characters — took a third of the time of the whole redaction of ordinary session text).
_GATES = {"discord-bot-token": re.compile(r"\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}")}


class _Rule:
    __slots__ = ("id", "pattern", "flags", "_rx", "keywords", "group", "at", "multiline", "check", "case")

    def __init__(self, rid, pattern, keywords, group=None, at=False, multiline=False, check=None, flags=0,
                 case=False):
        self.id, self.pattern, self.flags, self._rx, self.keywords = rid, pattern, flags, None, keywords
        self.group, self.at, self.multiline, self.check, self.case = group, at, multiline, check, case

    @property
    def rx(self):
        """The compiled regex, compiled the first time it is needed (most text needs few rules:
        compiling all ~130 cost a re-publish ~0.1 s for nothing)."""
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return self._rx

    @rx.setter
    def rx(self, value):
        self._rx = value

    def secret(self, m, line: str):
        """The (start, end) of the secret in m, or None when the match is allowed."""
        g = self.group or next((i for i in range(1, (m.re.groups or 0) + 1) if m.group(i)), 0)
        a, b = m.span(g)
        if a < 0:
            return None
        if self.check and not self.check(m.group(g)):
            return None
        return a, b


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
    def __init__(self, extra: dict | None = None, disable=(), use_detect_secrets: bool = True,
                 cache: str | None = None, rule_sets: str | None = None):
        rules: dict = {}
        for rid, (rx, kws, *opt) in RULES.items():
            o = opt[0] if opt else {}
            rules[rid] = _Rule(rid, rx, kws, o.get("group"), o.get("at", False),
                               o.get("multiline", False), check=o.get("check"), case=o.get("case", False))
        ds = detect_secrets_rules(rule_sets) if use_detect_secrets else {}
        for rid, (rx, flags, kws) in ds.items():
            rules["ds-" + rid if rid in rules else rid] = _Rule(rid, rx, kws, flags=flags)
        for rid, rx in (extra or {}).items():
            rules[str(rid)] = _Rule(str(rid), re.compile(rx), None)  # (compiled now: a bad one is told at once)
            rules[str(rid)].pattern = rules[str(rid)].rx.pattern
        for rid in disable:  # an id names the rule of that id in every set
            for key in (rid, "ds-" + str(rid)):
                rules.pop(key, None)
        for rid, r in rules.items():
            r.id = rid
        self.rules = list(rules.values())
        ident = [(r.id, r.pattern, r.keywords, r.group) for r in self.rules]
        ident.append(_ds_version() or "?" if use_detect_secrets else None)
        self.digest = hashlib.sha256(json.dumps(ident, default=str).encode()).hexdigest()[:16]
        self._always = [i for i, r in enumerate(self.rules) if not r.keywords]
        words: dict = {}
        for i, r in enumerate(self.rules):
            for k in r.keywords or ():
                words.setdefault(k.lower(), []).append((i, k if r.case else None))
        self._words = list(words)
        self._word_rules = [words[w] for w in self._words]  # [(rule index, the keyword as written, or None)]
        self._at = [r.at for r in self.rules]
        self._automaton = None
        self.cache = cache
        self._db = None

    @classmethod
    def from_config(cls, home: str) -> "Redactor":
        from .layout import redaction_cache_file, redaction_rule_sets_file

        cfg = _config(home)
        extra, disable = cfg.get("extra") or {}, cfg.get("disable") or []
        if not isinstance(extra, dict) or not isinstance(disable, list):
            from .errors import ChrolloError

            raise ChrolloError("bad_config", "redact.json: extra must be an object, disable a list")
        return cls(extra, disable, cache=redaction_cache_file(home), rule_sets=redaction_rule_sets_file(home))

    def _find(self, text: str):
        """[(start, end, rule index)] of every secret in text."""
        low = text.lower()
        if len(low) != len(text):  # (a few letters lowercase to two characters)
            low = text.translate(_ASCII_LOWER)
        if self._automaton is None:
            import ahocorasick_rs

            # a DFA: more memory (~1 MB for these keywords), fastest to run (2-4x an NFA here)
            self._automaton = ahocorasick_rs.AhoCorasick(self._words, implementation=ahocorasick_rs.Implementation.DFA)
        at: dict = {}      # rule index -> keyword positions (rules tried at their keyword)
        lines: dict = {}   # rule index -> keyword positions (rules tried on the lines holding one)
        kind = self._at
        try:
            matches = self._automaton.find_matches_as_indexes(low, overlapping=True)
        except UnicodeEncodeError:
            # undecodable bytes read with surrogateescape (forget scrubs raw files): the automaton
            # takes UTF-8 only, and a surrogate is no keyword's letter (positions stay the same)
            matches = self._automaton.find_matches_as_indexes(_SURROGATE.sub("\ufffd", low), overlapping=True)
        hits: dict = {}  # keyword -> its positions (one cheap step a match; rules per keyword after)
        for w, s, _e in matches:
            got = hits.get(w)
            if got is None:
                hits[w] = [s]
            else:
                got.append(s)
        for w, positions in hits.items():
            for i, exact in self._word_rules[w]:
                found_at = positions if exact is None else [s for s in positions if text.startswith(exact, s)]
                if found_at:
                    (at if kind[i] else lines).setdefault(i, []).extend(found_at)
        found = []
        n = len(text)
        for i, positions in at.items():
            rule = self.rules[i]
            match = rule.rx.match
            for p in sorted(set(positions)):
                if rule.multiline:  # (pos/endpos: no copy; a block is bounded by WINDOW)
                    m = rule.rx.match(text, p, min(n, p + WINDOW))
                    span = m and rule.secret(m, m.group(0))
                    if span:
                        found.append((span[0], span[1], i))
                    continue
                b = text.find("\n", p)
                m = match(text, p, n if b < 0 else b)  # ($ is the line's end; lookbehinds see before p)
                if m:
                    a = text.rfind("\n", 0, p) + 1
                    span = rule.secret(m, text[a:m.end()])
                    if span:
                        found.append((span[0], span[1], i))
        for i, positions in lines.items():
            rule = self.rules[i]
            done = -1
            for p in sorted(positions):
                if p < done:
                    continue
                a = text.rfind("\n", 0, p) + 1
                b = text.find("\n", p)
                b = n if b < 0 else b
                done = b
                if rule.multiline:  # a match that starts on this line, however far it goes
                    m = rule.rx.search(text, a, min(n, b + WINDOW))
                    span = m and m.start() <= b and rule.secret(m, m.group(0))
                    if span:
                        found.append((span[0], span[1], i))
                        done = max(b, m.end())
                    continue
                line = text[a:b]
                for m in rule.rx.finditer(line):
                    span = rule.secret(m, line)
                    if span:
                        found.append((span[0] + a, span[1] + a, i))
        for i in self._always:
            rule = self.rules[i]
            gate = _GATES.get(rule.id)
            if gate is not None and not gate.search(text):
                continue
            for m in rule.rx.finditer(text):
                span = rule.secret(m, m.group(0))
                if span:
                    found.append((*span, i))
        return found

    def redact(self, text: str) -> tuple[str, dict]:
        """(text with every secret replaced, {rule id: count}). Spans that overlap are merged
        and named by the first rule (in rule order) among them."""
        found = self._find(text)
        if not found:
            return text, {}
        found.sort()
        merged = []
        for a, b, i in found:
            if a == b:
                continue
            if merged and a < merged[-1][1]:
                m = merged[-1]
                merged[-1] = [m[0], max(m[1], b), min(m[2], i)]
            else:
                merged.append([a, b, i])
        out, last, counts = [], 0, {}
        for a, b, i in merged:
            rid = self.rules[i].id
            out += [text[last:a], f"[REDACTED:{rid}]"]
            counts[rid] = counts.get(rid, 0) + 1
            last = b
        out.append(text[last:])
        return "".join(out), counts

    def redact_bytes(self, data: bytes) -> bytes:
        """data as it may leave the machine; through the cache when there is one."""
        return self.redact_many([data])[0]

    def redact_many(self, datas: list, pool: "Pool | None" = None, keys: list | None = None) -> list:
        """[redact_bytes(d) for d in datas], through the cache; with a :meth:`pool`, what the
        cache does not hold is redacted on every core when there is enough of it. ``keys``: the
        sha256 hex digests of ``datas``, if the caller has them. A data that holds no secret is
        returned as it is (the same object)."""
        return self.redact_later(datas, pool, keys)()

    def redact_later(self, datas: list, pool: "Pool | None" = None, keys: list | None = None):
        """:meth:`redact_many`, in two steps: what a pool does starts now, and the function
        returned gives the list (so the caller reads the next files meanwhile)."""
        if self.cache:
            keys = keys or [hashlib.sha256(d).hexdigest() for d in datas]
        else:
            keys = [None] * len(datas)
        out = [self._cache_get(k, d) if k else None for k, d in zip(keys, datas)]
        todo = [i for i, o in enumerate(out) if o is None]
        work = [datas[i] for i in todo]
        started = pool.start(work) if pool is not None and (pool.running or sum(map(len, work)) >= POOL_MIN_BYTES) \
            else None

        def finish() -> list:
            done = pool.gather(started) if started is not None else None
            if done is None:
                done = [_redact_raw(self, d) for d in work]
            else:
                done = [d if o is None else o for d, o in zip(work, done)]
            for i, o in zip(todo, done):
                out[i] = o
            if self.cache and todo:
                # b"": the output is the input (most files) — nothing of it is kept twice
                self._cache_put_many([(keys[i], b"" if out[i] is datas[i] else out[i]) for i in todo])
            return out
        return finish

    def pool(self) -> "Pool":
        """Worker processes for :meth:`redact_many` (started on first need; ``with`` closes them)."""
        return Pool(self)

    # -- the cache: content sha256 -> redacted bytes, per rules digest (SQLite, stdlib)
    def _conn(self):
        if self._db is None:
            self._db = _open_cache(self.cache)
        return self._db

    def _cache_get(self, key: str, data: bytes):
        try:
            row = self._conn().execute("SELECT out FROM redacted WHERE sha = ? AND rules = ?",
                                       (key, self.digest)).fetchone()
        except Exception:  # noqa: BLE001 — a damaged or locked cache is bypassed, never fatal
            return None
        if row is None:
            return None
        return bytes(row[0]) or data  # (b"": nothing to redact in it)

    def _cache_put_many(self, pairs: list) -> None:
        """Keep (content sha256, redacted bytes) pairs, in one transaction."""
        try:
            db = self._conn()
            with db:
                db.execute("BEGIN")
                db.executemany("DELETE FROM redacted WHERE sha = ? AND rules != ?", [(k, self.digest) for k, _o in pairs])
                db.executemany("INSERT OR REPLACE INTO redacted (sha, rules, out) VALUES (?, ?, ?)",
                               [(k, self.digest, o) for k, o in pairs])
        except Exception:  # noqa: BLE001
            pass


def _redact_raw(redactor: "Redactor", data: bytes) -> bytes:
    """data redacted; data itself (the same object) when that changes nothing."""
    out = redactor.redact(data.decode("utf-8", "replace"))[0].encode("utf-8")
    return data if out == data else out


POOL_MIN_BYTES = 32 << 20  # less to redact than this: a pool's start-up (up to ~0.3 s a worker) costs more than it saves


class Pool:
    """Processes redacting with the same rules as a :class:`Redactor`, one per core (at most
    4), forked (:mod:`chrollo.workers`: Ctrl-C kills them, none prints a traceback or keeps
    an inherited lock) each time :meth:`start` is given enough work; never on a single core."""

    def __init__(self, redactor: "Redactor"):
        self.redactor, self.live, self.used = redactor, [], False
        self.workers = min(os.cpu_count() or 1, 4)

    @property
    def running(self) -> bool:
        """Whether workers were started (the caller then keeps a batch going while it reads)."""
        return self.used

    def map(self, datas: list) -> list | None:
        """The redacted bytes of each (in order; None where nothing changed), or None when
        there is one core only or a worker failed."""
        return self.gather(self.start(datas))

    def start(self, datas: list):
        """Hand ``datas`` to workers forked now; :meth:`gather` the result. None (redacted in
        this process) on one core, or from a process of several threads (the LAN server
        publishes from one of its threads: a fork copies locks other threads may hold)."""
        import threading

        from .workers import Running

        if self.workers < 2 or threading.active_count() > 1:
            return None
        redactor = self.redactor
        run = Running(lambda data: _worker_redact(redactor, data), datas, self.workers)
        self.live.append(run)
        self.used = True
        return run

    def gather(self, started) -> list | None:
        if started is None:
            return None
        try:
            return started.ordered()
        except Exception:  # noqa: BLE001 — a worker that died (memory, a signal): redacted here instead
            self.workers = 1
            return None
        finally:
            started.close()
            self.live.remove(started)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self.live:  # (started, never gathered: an error or Ctrl-C on the way)
            self.live.pop().close()


def _worker_redact(redactor: "Redactor", data: bytes) -> bytes | None:
    """The redacted bytes, or None when they are data's (nothing pickled back for nothing)."""
    out = _redact_raw(redactor, data)
    return None if out is data else out


_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}
WINDOW = 1 << 15  # how far a multi-line secret (a PEM or PuTTY block, a .netrc entry) may reach


def _open_cache(path: str):
    import sqlite3

    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    os.close(fd)
    db = sqlite3.connect(path, timeout=5, isolation_level=None)
    db.execute("PRAGMA secure_delete = ON")
    db.execute("PRAGMA synchronous = OFF")  # disposable: a lost write is redacted again
    db.execute("CREATE TABLE IF NOT EXISTS redacted (sha TEXT NOT NULL, rules TEXT NOT NULL, out BLOB NOT NULL,"
               " PRIMARY KEY (sha, rules))")
    return db


def forget_cached(home: str, contents) -> None:
    """Drop the cached redactions of these raw file contents (forget: nothing of a forgotten
    file stays, not even redacted). Never fatal."""
    from .layout import redaction_cache_file

    path = redaction_cache_file(home)
    if not os.path.exists(path):
        return
    try:
        db = _open_cache(path)
        with db:
            db.executemany("DELETE FROM redacted WHERE sha = ?", [(hashlib.sha256(c).hexdigest(),) for c in contents])
        db.close()
    except Exception:  # noqa: BLE001
        pass


def _ds_version() -> str | None:
    """The installed detect-secrets' version (None if it is not installed), read from its
    ``__version__.py``: importlib.metadata costs ~0.1 s of imports, this nothing."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("detect_secrets")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    try:
        with open(os.path.join(os.path.dirname(spec.origin), "__version__.py"), encoding="utf-8") as fh:
            m = re.search(r"""VERSION\s*=\s*['"]([^'"]+)['"]""", fh.read())
        return m.group(1) if m else "?"
    except OSError:
        return "?"
