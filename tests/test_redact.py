"""Redaction (chrollo/redact.py): a corpus of realistic secrets in conversation, ordinary
developer text that must come through, rules as configuration, and what the rules invalidate."""
from __future__ import annotations

import json
import os

import pytest

from chrollo.redact import Redactor
from secret_corpus import ISSUE34_KINDS, ISSUE_KINDS, KINDS, ordinary, secrets


@pytest.fixture(scope="module")
def redactor():
    return Redactor()


def _survives(out: str, value: str) -> bool:
    return value in out or (len(value) >= 16 and value[-12:] in out)


def test_the_corpus_is_big_and_varied():
    """≥ 300 secrets of ≥ 100 formats as said in conversation, ≥ 5,000 ordinary lines."""
    corpus = secrets()
    assert len(corpus) >= 300 and len({k for k, _t, _v in corpus}) >= 100
    assert len(ordinary()) >= 5000
    assert set(ISSUE_KINDS) <= set(KINDS) and len(ISSUE_KINDS) == 16
    assert set(ISSUE34_KINDS) <= set(KINDS) and len(ISSUE34_KINDS) >= 37


def test_corpus_recall_is_at_least_99_percent_and_every_reviewed_format_is_caught(redactor):
    """Before (rules tuned on their own corpus): 64.8% of this corpus (573 secrets then), and 33 of the 37 formats
    the #34 review sent to a peer (`docker login -p`, `hvs.`, `.netrc`, PuTTY, a JWK's "d"…)."""
    corpus = secrets()
    missed = [(kind, text) for kind, text, value in corpus if _survives(redactor.redact(text)[0], value)]
    assert 1 - len(missed) / len(corpus) >= 0.99, missed
    assert not [k for k, _ in missed if k in ISSUE_KINDS or k in ISSUE34_KINDS], missed


def test_ordinary_developer_text_is_left_alone(redactor):
    lines = ordinary()
    touched = [(line, out) for line in lines for out, counts in [redactor.redact(line)] if counts]
    assert len(touched) / len(lines) <= 0.001, touched[:10]


def test_only_the_secret_goes_and_the_sentence_stays(redactor):
    out, counts = redactor.redact("connect with postgres://app:Sup3rS3cret!@db:5432/app then run the migration")
    assert out == "connect with postgres://app:[REDACTED:url-password]@db:5432/app then run the migration"
    assert counts == {"url-password": 1}
    out, _ = redactor.redact("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----\nafter")
    assert out == "[REDACTED:private-key]\nafter"


def test_detect_secrets_rules_are_in_use(redactor):
    ids = {r.id for r in redactor.rules}
    assert {"basic-auth-credentials", "mailchimp-access-key", "square-oauth-secret"} <= ids
    out, counts = redactor.redact("mailchimp key 0123456789abcdef0123456789abcdef-us12 for the newsletter")
    assert "0123456789abcdef0123456789abcdef" not in out and counts


def test_rules_are_configurable_and_their_digest_changes(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    base = Redactor.from_config(str(home))
    (home / "redact.json").write_text(json.dumps({"extra": {"ticket": r"TICKET-\d+"}, "disable": ["jwt", "json-web-token"]}))
    r = Redactor.from_config(str(home))
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    out, counts = r.redact(f"see TICKET-4242 and {jwt}")
    assert counts == {"ticket": 1} and jwt in out
    assert r.digest != base.digest


def test_changing_the_rules_invalidates_the_published_manifest(tmp_path, monkeypatch):
    """A manifest hash computed under old rules would make peers refuse the file: new rules,
    new hashes (and a new sequence number)."""
    from chrollo.mesh.identity import Identity
    from chrollo.mesh.manifests import publish

    home, vault = tmp_path / "home", tmp_path / "home" / "memories"
    vault.mkdir(parents=True)
    monkeypatch.setenv("CHROLLO_HOME", str(home))
    (vault / "2026-01-01_000000_aaaa.md").write_text("[2026-01-01 00:00:00] [User]\nsee TICKET-4242 today\n")
    ident = Identity.generate("alpha")
    first = publish(ident, "alpha", str(vault), str(home))
    (home / "redact.json").write_text(json.dumps({"extra": {"ticket": r"TICKET-\d+"}}))
    second = publish(ident, "alpha", str(vault), str(home))
    assert first.entries[0]["sha256"] != second.entries[0]["sha256"]
    assert b"TICKET-4242" not in second.data("2026-01-01_000000_aaaa.md")
    assert json.loads(second.envelope) != json.loads(first.envelope)


def test_capture_redaction_is_a_setting_off_by_default(home):
    from conftest import write_session

    secret = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    vault = home / "memories"
    f = write_session(vault, "cap00001-x", "2026-10-01T10:00:00", [("user", "10:00:00", f"my key is {secret}")])
    assert secret in f.read_text()  # off by default: the vault keeps what was said
    home.mkdir(exist_ok=True)
    (home / "privacy.json").write_text(json.dumps({"redact_capture": True}))
    g = write_session(vault, "cap00002-x", "2026-10-01T11:00:00", [("user", "11:00:00", f"my key is {secret}")])
    text = g.read_text()
    assert secret not in text and "my key is [REDACTED:stripe-key]" in text


def test_a_pgp_private_key_block_goes_whole(redactor):
    """Only " BLOCK" of the BEGIN line was replaced once (a capturing group), and the body sent."""
    body = "lQOYBGVx3mABCADkq8Ud9ZbJ2yK0m1+Vf4p7nQz/8XWc1kT0a9s2LrB3xH6eYv0p\n=Xq3r"
    block = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{body}\n-----END PGP PRIVATE KEY BLOCK-----"
    out, counts = redactor.redact(f"here is my key:\n{block}\nkeep it safe")
    assert out == "here is my key:\n[REDACTED:private-key]\nkeep it safe" and counts == {"private-key": 1}


# ----------------------------------------------------------------------------- rules as data

VENDOR_PREFIXED = ["doppler-token", "dynatrace-token", "easypost-key", "planetscale-token", "prefect-key",
                   "readme-key", "rubygems-key", "clojars-token", "frameio-token", "infracost-key", "duffel-token",
                   "shippo-token", "flutterwave-key", "sentry-user-token", "onepassword-sa-token"]


def test_vendor_token_formats_are_caught_said_in_a_sentence(redactor):
    """Tokens known by their vendor's documented prefix are caught in running text, and with
    detect-secrets off too (they are chrollo's own rules, data in RULES)."""
    from chrollo.redact import RULES

    assert set(VENDOR_PREFIXED) <= set(RULES)
    only = [(k, t, v) for k, t, v in secrets() if k in VENDOR_PREFIXED]
    assert len({k for k, _t, _v in only}) == len(VENDOR_PREFIXED)
    said = [(f"the new one is {v} now", v) for _k, _t, v in only]
    for r in (redactor, Redactor(use_detect_secrets=False)):
        assert [v for t, v in said if _survives(r.redact(t)[0], v)] == []


class _Counting:
    """A compiled regex that counts how often it is asked to look (to see the prefilter work)."""

    def __init__(self, rx):
        self.rx, self.calls = rx, 0
        self.pattern, self.groups = rx.pattern, rx.groups

    def _count(self, name):
        def call(*a, **k):
            self.calls += 1
            return getattr(self.rx, name)(*a, **k)
        return call

    def __getattr__(self, name):
        return self._count(name)


def test_one_pass_finds_the_keywords_and_only_their_rules_run():
    """No rule's regex runs on text that holds none of its keywords; a rule whose keyword occurs
    once runs once (on that line or at that place), however long the text."""
    r = Redactor()
    for rule in r.rules:
        rule.rx = _Counting(rule.rx)
    quiet = "\n".join(f"step {i}: rebuilt the widget cache and reran the suite" for i in range(2000))
    r.redact(quiet)
    ran = {rule.id: rule.rx.calls for rule in r.rules if rule.rx.calls}
    assert set(ran) <= {rule.id for rule in r.rules if not rule.keywords}, ran
    secret = "hvs." + "CAESIJ" + "x7Yq2Lm9Zt4Vb8Nw3Kp6Rd1Fs5Gh0Jc"
    out, counts = r.redact(quiet + f"\nthe vault token is {secret}\n" + quiet)
    assert secret not in out and counts.get("vault-token") == 1
    by_id = {rule.id: rule.rx.calls for rule in r.rules}
    assert by_id["vault-token"] == 1 and by_id["slack-webhook"] == 0


def test_every_match_of_chrollos_rules_holds_a_keyword():
    """The prefilter is exact: a match without one of its rule's keywords would be lost."""
    import re

    from chrollo.redact import RULES

    text = "\n".join(t for _k, t, _v in secrets()) + "\n" + "\n".join(ordinary())
    for rid, (rx, kws, *opt) in RULES.items():
        case = bool(opt and opt[0].get("case"))
        for m in re.finditer(rx, text):
            near = text[max(0, m.start() - 40):m.end()]
            assert any(k in near if case else k.lower() in near.lower() for k in kws), (rid, m.group(0)[:80])



def test_a_publisher_that_has_the_rule_sets_as_data_never_imports_detect_secrets(tmp_path):
    """Making a Redactor imported detect-secrets (~0.2 s: it imports requests) and compiled
    every rule (~0.1 s) — the whole cost of a re-publish or one new turn on a folder. Now the
    detectors' regexes are kept as data for the installed version, rules compile when their
    keyword first occurs, and detect-secrets' rules still apply."""
    import subprocess
    import sys

    home = tmp_path / "h"
    home.mkdir()
    probe = ("import sys; from chrollo.redact import Redactor; r = Redactor.from_config(sys.argv[1]); "
             "d = r.digest; print(r.redact('mailchimp key 0123456789abcdef0123456789abcdef-us12 ok')[0]); "
             "print('detect_secrets' in sys.modules, sum(x._rx is not None for x in r.rules), d == r.digest)")
    runs = [subprocess.run([sys.executable, "-c", probe, str(home)], capture_output=True, text=True, timeout=60)
            for _ in range(2)]
    for p in runs:
        assert p.returncode == 0, p.stderr
        assert "0123456789abcdef0123456789abcdef" not in p.stdout and "[REDACTED:" in p.stdout
    assert runs[0].stdout.split()[-3] == "True"  # the first one reads detect-secrets itself
    imported, compiled, same = runs[1].stdout.split()[-3:]
    assert imported == "False" and same == "True" and int(compiled) < 10, runs[1].stdout
    assert Redactor.from_config(str(home)).digest == Redactor().digest



_EVERY_CORE = """
import sys
sys.path.insert(0, sys.argv[2])
import chrollo.redact as R
from chrollo.redact import Redactor
from secret_corpus import ordinary, secrets

R.POOL_MIN_BYTES = 0
lines = [t for _k, t, _v in secrets()] + ordinary()[:2000]
datas = [("\\n".join(lines[i::7]) + "\\nsee TICKET-77 now\\n").encode() for i in range(7)]
cache = sys.argv[1]
r = Redactor(extra={"ticket": r"TICKET-\\d+"}, cache=cache)
plain = [Redactor(extra={"ticket": r"TICKET-\\d+"}).redact_bytes(d) for d in datas]
with r.pool() as pool:
    if pool.workers < 2:
        sys.exit(3)
    assert pool.map([b"x"]) is not None  # (workers start)
    got = r.redact_many(datas, pool)
assert got == plain and all(b"[REDACTED:ticket]" in g for g in got)
assert Redactor(extra={"ticket": r"TICKET-\\d+"}, cache=cache).redact_many(datas) == plain  # from the cache
"""


def test_redacting_on_every_core_gives_the_same_bytes(tmp_path):
    """Publishing redacts what the cache does not hold in worker processes (one per core) when
    there is enough of it: the same rules (detect-secrets' and redact.json's included), the
    same bytes, in order, and the cache filled as if redacted here. (In a process of its own:
    a process with other threads — pytest's, after some tests — redacts in-process.)"""
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-c", _EVERY_CORE, str(tmp_path / "redacted.sqlite"),
                        str(os.path.dirname(__file__))], capture_output=True, text=True, timeout=300)
    if p.returncode == 3:
        pytest.skip("one core: no worker processes")
    assert p.returncode == 0, p.stderr


# ----------------------------------------------------------------------------- the cache

def test_redacted_output_is_cached_by_content_hash_and_holds_no_secret(tmp_path, monkeypatch):
    home = tmp_path / "h"
    home.mkdir()
    r = Redactor.from_config(str(home))
    secret = "ghp_" + "Zq8Lm2Vx7TwPr4nYs9dHf3jKc6Bv1Na0Qe5R"
    raw = f"[User]\nmy token is {secret} for the deploy\n".encode()
    first = r.redact_bytes(raw)
    assert secret.encode() not in first and b"[REDACTED:github-token]" in first
    calls = []
    real = Redactor.redact
    monkeypatch.setattr(Redactor, "redact", lambda self, text: calls.append(text) or real(self, text))
    again = Redactor.from_config(str(home))  # a new process: the cache is on disk
    assert again.redact_bytes(raw) == first and calls == []
    assert again.redact_bytes(raw + b"more\n") and len(calls) == 1  # other bytes, redacted anew
    from chrollo.layout import redaction_cache_file

    cache = redaction_cache_file(str(home))
    blob = open(cache, "rb").read()
    assert secret.encode() not in blob and raw not in blob
    assert oct(os.stat(cache).st_mode & 0o777) == "0o600"
    other = Redactor(extra={"ticket": r"TICKET-\d+"}, cache=cache)  # other rules: never a stale hit
    assert other.digest != again.digest
    assert other.redact_bytes(raw) == first and len(calls) == 2


def test_forget_leaves_nothing_of_a_session_in_the_cache(home):
    """chrollo forget drops the file's cached redaction too (secure_delete: the bytes go). A
    file with nothing to redact leaves only its hash in the cache, never its text."""
    import hashlib
    import sqlite3
    import subprocess
    import sys

    from conftest import cli_env, write_session

    from chrollo.layout import redaction_cache_file

    phrase = "the layoff list for the berlin office"
    f = write_session(home / "memories", "fgt00001-x", "2026-10-01T10:00:00",
                      [("user", "10:00:00", phrase + ", the wiki password=Lay0ffList42")])
    plain = write_session(home / "memories", "fgt00002-x", "2026-10-01T11:00:00",
                          [("user", "10:00:00", "the reorg memo for the munich office")])
    r = Redactor.from_config(str(home))
    assert b"Lay0ffList42" not in r.redact_bytes(f.read_bytes())
    assert r.redact_bytes(plain.read_bytes()) == plain.read_bytes()
    cache = redaction_cache_file(str(home))
    blob = open(cache, "rb").read()
    assert phrase.encode() in blob and b"Lay0ffList42" not in blob and b"munich office" not in blob
    with sqlite3.connect(cache) as db:
        key = hashlib.sha256(plain.read_bytes()).hexdigest()
        assert db.execute("SELECT out FROM redacted WHERE sha = ?", (key,)).fetchone() == (b"",)
    p = subprocess.run([sys.executable, "-m", "chrollo", "forget", str(f), "--yes"], capture_output=True,
                       text=True, env=cli_env(home), timeout=60)
    assert p.returncode == 0, p.stderr
    assert not f.exists() and phrase.encode() not in open(cache, "rb").read()


def test_text_with_undecodable_bytes_is_redacted_not_a_crash(redactor):
    """forget --secrets reads raw files with surrogateescape: a lone surrogate is no keyword
    letter, and the secret next to it still goes (the fuzzer's UnicodeEncodeError)."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    out, counts = redactor.redact("\udcff\udcfe junk then token " + token + " \udc80")
    assert token not in out and counts and out.startswith("\udcff\udcfe junk")


@pytest.mark.parametrize("text,secret", [
    ("password:\n  hunter2hunter2\n", "hunter2hunter2"),
    ("db:\n  password:\n    'Zq8#mK2!pLx'\nnext: 1\n", "Zq8#mK2!pLx"),
    ("  - name: prod\n    api_key: |\n      skLiveAbcdef123456\n", "skLiveAbcdef123456"),
    ('"client_secret":\n   "correcthorsebattery"\n', "correcthorsebattery"),
    ("DB_PASSWORD:\n\tletmein-now\n", "letmein-now"),
    ("token: >-\n  ghx0Q9vT2mA8bK3nL7pR\n", "ghx0Q9vT2mA8bK3nL7pR")])
def test_a_yaml_secret_on_the_line_after_its_key_is_redacted(redactor, text, secret):
    out, counts = redactor.redact(text)
    assert secret not in out and counts, out
    assert out.split("\n")[0] == text.split("\n")[0]  # (the key stays: only the value goes)


def test_yaml_keys_followed_by_structure_or_code_are_left_alone(redactor):
    for text in ("secretKeyRef:\n  name: db-credentials\n  key: password", "if token:\n    return None",
                 "if not password:\n    raise ValueError()", "password:\n  required: true",
                 "tokens:\n  - read\n  - write", "password:\n  ${DB_PASSWORD}", "token:\n  type: string",
                 "secret:\n  {{ vault_secret }}", "password:\n  <your password here>", "password:\n\n",
                 "def token(self):\n    return self._token", "password:\nnext_key: value",
                 "token:\n  secretKeyRef:", "password:\n  env.DB_PASSWORD"):
        out, counts = redactor.redact(text)
        assert not counts, (text, out)
