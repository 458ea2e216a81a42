"""A test corpus for redaction: realistic secrets of many kinds said in conversation, and
ordinary developer text that must come through untouched. Deterministic (seeded), made here
(no secret is real: every one is random in the format of its kind)."""
from __future__ import annotations

import base64
import random
import string

R = random.Random(20261123)
AN = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UP = string.ascii_uppercase + string.digits


def rs(n, alphabet=AN):
    return "".join(R.choice(alphabet) for _ in range(n))


def pw():
    return rs(4, string.ascii_lowercase) + rs(3, string.digits) + R.choice("!#%*-_") + rs(4)


def b64(n):
    return base64.b64encode(R.randbytes(n)).decode()


# kind -> generator of (secret text to embed, the sensitive value that must not survive)
KINDS = {
    "aws-access-key-id": lambda: (v := "AKIA" + rs(16, UP), v),
    "aws-secret-access-key": lambda: (f"aws_secret_access_key = {(v := rs(40, AN + '/+'))}", v),
    "github-classic-pat": lambda: (v := "ghp_" + rs(36), v),
    "github-fine-grained-pat": lambda: (v := "github_pat_" + rs(22) + "_" + rs(59), v),
    "github-oauth": lambda: (v := "gho_" + rs(36), v),
    "gitlab-pat": lambda: (v := "glpat-" + rs(20, AN + "_-"), v),
    "openai-project-key": lambda: (v := "sk-proj-" + rs(48, AN + "_-"), v),
    "anthropic-key": lambda: (v := "sk-ant-api03-" + rs(93, AN + "_-") + "AA", v),
    "stripe-secret": lambda: (v := "sk_live_" + rs(24), v),
    "stripe-restricted": lambda: (v := "rk_live_" + rs(24), v),
    "sendgrid": lambda: (v := "SG." + rs(22, AN + "_-") + "." + rs(43, AN + "_-"), v),
    "slack-bot-token": lambda: (v := f"xoxb-{rs(12, string.digits)}-{rs(13, string.digits)}-{rs(24)}", v),
    "slack-webhook": lambda: (v := f"https://hooks.slack.com/services/T{rs(8, UP)}/B{rs(10, UP)}/{rs(24)}", v),
    "google-api-key": lambda: (v := "AIza" + rs(35, AN + "_-"), v),
    "google-oauth-token": lambda: (v := "ya29.a0" + rs(70, AN + "_-"), v),
    "npm-token": lambda: (v := "npm_" + rs(36), v),
    "huggingface-token": lambda: (v := "hf_" + rs(34), v),
    "docker-pat": lambda: (v := "dckr_pat_" + rs(27, AN + "_-"), v),
    "azure-storage-key": lambda: (f"DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey={(v := b64(64))};"
                                  "EndpointSuffix=core.windows.net", v),
    "postgres-url": lambda: (f"postgres://app_user:{(v := pw())}@db.internal:5432/app", v),
    "mongodb-url": lambda: (f"mongodb+srv://admin:{(v := pw())}@cluster0.ab1cd.mongodb.net/prod", v),
    "redis-url": lambda: (f"REDIS_URL=redis://default:{(v := pw())}@cache.example.com:6379/0", v),
    "database-url-env": lambda: (f"DATABASE_URL=mysql://root:{(v := pw())}@127.0.0.1:3306/shop", v),
    "mysql-p": lambda: (f"mysql -u root -p{(v := pw())} -h db1 shop", v),
    "curl-u": lambda: (f"curl -u deploy:{(v := pw())} https://ci.example.com/api/json", v),
    "password-flag": lambda: (f"./manage.py createsuperuser --username ops --password {(v := pw())}", v),
    "bearer-header": lambda: (f"Authorization: Bearer {(v := rs(40, AN + '._-'))}", v),
    "basic-auth-header": lambda: (f"Authorization: Basic {(v := b64(24))}", v),
    "jwt": lambda: (v := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + base64.urlsafe_b64encode(
        f'{{"sub":"{rs(8)}","iat":1700000000}}'.encode()).decode().rstrip("=") + "." + rs(43, AN + "_-"), v),
    "rsa-private-key": lambda: ((v := "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(b64(48) for _ in range(6))
                                 + "\n-----END RSA PRIVATE KEY-----"), v.split("\n")[3]),
    "openssh-private-key": lambda: ((v := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + b64(40)
                                     + "\n" + b64(48) + "\n-----END OPENSSH PRIVATE KEY-----"), v.split("\n")[2]),
    "gcp-service-account": lambda: ('"private_key": "-----BEGIN PRIVATE KEY-----\\n' + (v := b64(60)) +
                                    '\\n-----END PRIVATE KEY-----\\n",', v),
    "env-db-password": lambda: (f"DB_PASSWORD={(v := pw())}", v),
    "json-api-key": lambda: (f'{{"api_key": "{(v := rs(32))}", "region": "eu-west-1"}}', v),
    "yaml-client-secret": lambda: (f"client_secret: {(v := rs(40))}", v),
    "twilio-api-key": lambda: (v := "SK" + rs(32, HEX), v),
    "pypi-token": lambda: (v := "pypi-AgEIcHlwaS5vcmc" + rs(80, AN + "_-"), v),
    "shopify-token": lambda: (v := "shpat_" + rs(32, HEX), v),
    "digitalocean-token": lambda: (v := "dop_v1_" + rs(64, HEX), v),
    "discord-webhook": lambda: (v := f"https://discord.com/api/webhooks/{rs(18, string.digits)}/{rs(68, AN + '_-')}", v),
    "telegram-bot-token": lambda: (v := f"{rs(10, string.digits)}:AA{rs(33, AN + '_-')}", v),
    "mailgun-key": lambda: (v := "key-" + rs(32, HEX), v),
    "databricks-token": lambda: (v := "dapi" + rs(32, HEX), v),
    "linear-key": lambda: (v := "lin_api_" + rs(40), v),
    "age-secret-key": lambda: (v := "AGE-SECRET-KEY-1" + rs(58, UP), v),
    "pgpassword-env": lambda: (f"PGPASSWORD={(v := pw())} psql -h db -U app", v),
    "heroku-api-key": lambda: (f"HEROKU_API_KEY={(v := '-'.join(rs(n, HEX) for n in (8, 4, 4, 4, 12)))}", v),
    "datadog-api-key": lambda: (f"DD_API_KEY={(v := rs(32, HEX))}", v),
    "cloudflare-token": lambda: (f"CLOUDFLARE_API_TOKEN={(v := rs(40, AN + '_-'))}", v),
    # #34: formats that reached a peer unredacted, as each vendor or tool documents them
    "slack-app-token": lambda: (v := f"xapp-1-A{rs(10, UP)}-{rs(13, string.digits)}-{rs(64, HEX)}", v),
    "vault-service-token": lambda: (v := "hvs.CAESI" + rs(86, AN + "_-"), v),
    "google-oauth-client-secret": lambda: (f'"client_secret": "{(v := "GOCSPX-" + rs(28, AN + "_-"))}"', v),
    "terraform-cloud-token": lambda: (v := f"{rs(14, string.ascii_lowercase + string.digits)}.atlasv1."
                                          f"{rs(67, string.ascii_lowercase + string.digits)}", v),
    "pulumi-token": lambda: (v := "pul-" + rs(40, HEX), v),
    "stripe-webhook-secret": lambda: (f"STRIPE_WEBHOOK_SECRET={(v := 'whsec_' + rs(32))}", v),
    "brevo-key": lambda: (v := f"xkeysib-{rs(64, HEX)}-{rs(16)}", v),
    "flyio-token": lambda: (f"fly secrets set FLY_API_TOKEN='FlyV1 {(v := 'fm2_' + rs(60, AN + '+/'))}'", v),
    "google-refresh-token": lambda: (f"refresh_token: {(v := '1//0' + rs(60, AN + '_-'))}", v),
    "docker-login-p": lambda: (f"docker login -u ci -p {(v := pw())} registry.example.com", v),
    "sshpass-p": lambda: (f"sshpass -p '{(v := pw())}' ssh deploy@10.0.3.7", v),
    "redis-cli-a": lambda: (f"redis-cli -h cache.internal -a {(v := pw())} ping", v),
    "openssl-pass": lambda: (f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out c.p12 -passout pass:{(v := pw())}", v),
    "gpg-passphrase": lambda: (f"gpg --batch --passphrase {(v := pw())} -d backup.tar.gpg", v),
    "ldapsearch-w": lambda: (f"ldapsearch -x -D cn=admin,dc=corp -w {(v := pw())} -b dc=corp", v),
    "htpasswd-b": lambda: (f"htpasswd -b /etc/nginx/.htpasswd admin {(v := pw())}", v),
    "az-login-p": lambda: (f"az login -u ops@corp.onmicrosoft.com -p {(v := pw())}", v),
    "aws-configure-set": lambda: (f"aws configure set aws_secret_access_key {(v := rs(40, AN + '/+'))}", v),
    "xml-password": lambda: (f"<datasource><username>app</username><password>{(v := pw())}</password></datasource>", v),
    "laravel-app-key": lambda: (f"APP_KEY=base64:{(v := b64(32))}", v),
    "npmrc-auth": lambda: (f"//registry.example.com/:_auth={(v := b64(24))}", v),
    "docker-config-auth": lambda: (f'{{"auths": {{"ghcr.io": {{"auth": "{(v := b64(30))}"}}}}}}', v),
    "kubeconfig-client-key": lambda: (f"    client-key-data: {(v := b64(90))}", v),
    "netrc-password": lambda: (f"machine api.heroku.com login ops@corp.com password {(v := pw())}", v),
    "putty-private-key": lambda: ((v := "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
                                        f"Public-Lines: 2\n{b64(48)}\n{b64(20)}\nPrivate-Lines: 1\n{(s := b64(36))}\n"
                                        f"Private-MAC: {rs(64, HEX)}"), s),
    "jwk-private-d": lambda: (f'{{"kty": "EC", "crv": "P-256", "x": "{rs(43, AN + "_-")}", "y": "{rs(43, AN + "_-")}", '
                              f'"d": "{(v := rs(43, AN + "_-"))}"}}', v),
    "der-key-base64": lambda: (f"the key, base64 DER: {(v := 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC' + b64(90))}", v),
}

CONTEXTS = [
    "[User]\nok here it is: {s} — can you wire it into the deploy script?",
    "> I exported it and reran the tests:\n> `export TOKEN_LINE='{s}'`",
    "the CI log printed this, is that bad?\n{s}\nthanks",
    "[Agent]\n> Put this in your `.env` (do not commit it):\n> {s}",
    "why does `{s}` fail with 401 since yesterday?",
]

# the 16 kinds that left the machine in the adversarial review: each must be caught, always
ISSUE_KINDS = ["database-url-env", "postgres-url", "mysql-p", "curl-u", "password-flag", "bearer-header",
               "google-oauth-token", "stripe-secret", "sendgrid", "azure-storage-key", "slack-webhook",
               "npm-token", "huggingface-token", "docker-pat", "env-db-password", "redis-url"]


# the formats #34 found reaching a peer unredacted: each must be caught, always
ISSUE34_KINDS = list(KINDS)[list(KINDS).index("slack-app-token"):]

# more vendors' documented token formats (gitleaks' rule list names the vendors; each format
# written here from the vendor's own description of its tokens, not from a rule's regex)
KINDS.update({
    "github-app-token": lambda: (v := "ghs_" + rs(36), v),
    "github-refresh-token": lambda: (v := "ghr_" + rs(36), v),
    "gitlab-runner-token": lambda: (v := "glrt-" + rs(20, AN + "_-"), v),
    "gitlab-deploy-token": lambda: (v := "gldt-" + rs(20, AN + "_-"), v),
    "openai-legacy-key": lambda: (v := "sk-" + rs(20) + "T3BlbkFJ" + rs(20), v),
    "anthropic-admin-key": lambda: (v := "sk-ant-admin01-" + rs(93, AN + "_-") + "AA", v),
    "stripe-test-secret": lambda: (v := "sk_test_" + rs(24), v),
    "slack-user-token": lambda: (v := f"xoxp-{rs(11, string.digits)}-{rs(11, string.digits)}-{rs(13, string.digits)}-{rs(32, HEX)}", v),
    "grafana-service-account": lambda: (v := "glsa_" + rs(32) + "_" + rs(8, HEX), v),
    "newrelic-user-key": lambda: (v := "NRAK-" + rs(27, UP), v),
    "postman-key": lambda: (v := f"PMAK-{rs(24, HEX)}-{rs(34, HEX)}", v),
    "atlassian-token": lambda: (v := "ATATT3xFfGF0" + rs(170, AN + "_-") + "=" + rs(8, HEX), v),
    "notion-token": lambda: (v := "ntn_" + rs(46), v),
    "supabase-token": lambda: (v := "sbp_" + rs(40, HEX), v),
    "groq-key": lambda: (v := "gsk_" + rs(52), v),
    "replicate-token": lambda: (v := "r8_" + rs(37), v),
    "sentry-dsn": lambda: (v := f"https://{rs(32, HEX)}@o{rs(6, string.digits)}.ingest.sentry.io/{rs(7, string.digits)}",
                           v.split("//")[1].split("@")[0]),
    "tailscale-auth-key": lambda: (v := f"tskey-auth-{rs(17)}-{rs(33)}", v),
    "square-access-token": lambda: (v := "sq0atp-" + rs(22, AN + "_-"), v),
    "okta-api-token": lambda: (f"Authorization: SSWS {(v := rs(42, AN + '_-'))}", v),
    "amqp-url": lambda: (f"amqp://guest:{(v := pw())}@rabbit.internal:5672/%2f", v),
    "doppler-token": lambda: (v := "dp.pt." + rs(43), v),
    "sentry-user-token": lambda: (v := "sntryu_" + rs(64, HEX), v),
    "planetscale-token": lambda: (v := "pscale_tkn_" + rs(43, AN + "_-"), v),
    "mapbox-secret-token": lambda: (v := "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + rs(20) + "." + rs(22, AN + "_-"), v),
    "netlify-token": lambda: (v := "nfp_" + rs(36), v),
    "render-key": lambda: (v := "rnd_" + rs(32), v),
    "rubygems-key": lambda: (v := "rubygems_" + rs(48, HEX), v),
    "dynatrace-token": lambda: (v := f"dt0c01.{rs(24, UP)}.{rs(64, UP)}", v),
    "easypost-key": lambda: (v := "EZAK" + rs(54), v),
    "flutterwave-secret": lambda: (v := f"FLWSECK_TEST-{rs(32, HEX)}-X", v),
    "clojars-token": lambda: (v := "CLOJARS_" + rs(60, string.ascii_lowercase + string.digits), v),
    "shippo-token": lambda: (v := "shippo_live_" + rs(40, HEX), v),
    "typeform-token": lambda: (v := "tfp_" + rs(44) + "_" + rs(14), v),
    "huggingface-org-token": lambda: (v := "api_org_" + rs(34), v),
    "prefect-key": lambda: (v := "pnu_" + rs(36), v),
})


def secrets(per_kind: int = 3) -> list:
    """[(kind, text as said in a session, the sensitive value)] — ≥ 100 of ≥ 30 kinds."""
    out = []
    for kind, make in KINDS.items():
        for i in range(per_kind):
            text, value = make()
            out.append((kind, CONTEXTS[(i + len(out)) % len(CONTEXTS)].format(s=text), value))
    return out


def ordinary(n: int = 5000) -> list:
    """Ordinary developer lines: hashes, ids, paths, code about tokens and passwords, logs."""
    sha = lambda: rs(40, HEX)  # noqa: E731
    uuid = lambda: "-".join(rs(k, HEX) for k in (8, 4, 4, 4, 12))  # noqa: E731
    t = [
        lambda: f"commit {sha()} (HEAD -> main, origin/main)",
        lambda: f"Merge pull request #{R.randint(1, 9999)} from acme/fix-{rs(6, string.ascii_lowercase)}",
        lambda: f"> git cherry-pick {sha()[:7]} && git push --force-with-lease",
        lambda: f"request_id={uuid()} status=200 duration_ms={R.randint(1, 900)}",
        lambda: f"image: ghcr.io/acme/api@sha256:{rs(64, HEX)}",
        lambda: f'"integrity": "sha512-{b64(64)}",',
        lambda: f"resolved \"https://registry.npmjs.org/lodash/-/lodash-4.17.{R.randint(1, 21)}.tgz#{sha()}\"",
        lambda: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rs(43, AN + "+/") + " dev@laptop",
        lambda: f"  File \"/home/dev/project/src/{rs(6, string.ascii_lowercase)}.py\", line {R.randint(1, 900)}, in handler",
        lambda: "token = tokenizer.encode(text, add_special_tokens=False)",
        lambda: f"max_tokens={R.choice([256, 512, 1024, 4096])}, temperature=0.{R.randint(0, 9)}",
        lambda: 'api_key = os.environ["OPENAI_API_KEY"]',
        lambda: "password_hash = bcrypt.hashpw(password.encode(), bcrypt.gensalt())",
        lambda: "if not user.check_password(form.password.data):",
        lambda: "def refresh_access_token(self, refresh_token: str) -> str:",
        lambda: "    secretKeyRef:\n      name: db-credentials\n      key: password",
        lambda: "The password reset flow sends a one-time link that expires in 15 minutes.",
        lambda: "We rotate the API keys every 90 days; the new one is in the vault, not in the repo.",
        lambda: f"token_count: {R.randint(100, 99999)}",
        lambda: "Set AWS_PROFILE=staging before running terraform plan.",
        lambda: "export OPENAI_API_KEY=$(op read op://dev/openai/key)",
        lambda: 'password: "{{ vault_db_password }}"',
        lambda: "DB_PASSWORD=${DB_PASSWORD:?missing}",
        lambda: f"https://github.com/acme/api/pull/{R.randint(1, 5000)}/files#diff-{rs(64, HEX)}",
        lambda: f"https://example.com/search?q=rate+limit&page={R.randint(1, 9)}&session={rs(12, HEX)}",
        lambda: f"[2026-10-{R.randint(10, 28)} 12:{R.randint(10, 59)}:00] [Agent]",
        lambda: f"> <tool>$ pytest tests/test_{rs(5, string.ascii_lowercase)}.py -q -k retry</tool>",
        lambda: f"FAILED tests/test_api.py::test_login[{rs(4, string.ascii_lowercase)}] - AssertionError: 401 != 200",
        lambda: "const token = req.headers.authorization?.split(' ')[1];",
        lambda: "Authorization header is missing; the middleware returns 401 before the handler runs.",
        lambda: f"node_id: {uuid()}",
        lambda: f"checksum: md5:{rs(32, HEX)}",
        lambda: f"Migrated {R.randint(1, 500)} rows in {R.randint(1, 60)}s; vacuum analyze next.",
        lambda: "The secret sauce is the retry with jitter, not the cache.",
        lambda: f"version = \"{R.randint(0, 9)}.{R.randint(0, 30)}.{R.randint(0, 9)}\"",
        lambda: f"ETag: W/\"{rs(16, HEX)}\"",
        lambda: "curl -s https://api.example.com/health | jq .status",
        lambda: "mysql -u root -p shop < dump.sql   # prompts for the password",
        lambda: "psql postgres://localhost:5432/app -c 'select 1'",
        lambda: "The JWT carries the user id and expires after an hour; refresh tokens last a week.",
        lambda: f"commit_sha: {sha()}",
        lambda: f"AccountName=prodlogs; container=backups-{R.randint(1, 9)}",
        lambda: "access_log /var/log/nginx/access.log combined;",
        lambda: f"api_version=2024-0{R.randint(1, 9)}-01",
        lambda: "token_type=bearer expires_in=3600",
        lambda: "Use `gh auth login` instead of pasting a token into the chat.",
        lambda: f"base64 of the fixture: {b64(12)}",
        lambda: "secret_name = f\"{env}-db-credentials\"",
        lambda: "auth_provider: 'github'",
        lambda: "client_id: web-frontend-prod",
    ]
    return [R.choice(t)() for _ in range(n)]
