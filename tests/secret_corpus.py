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
}

B32L = "abcdefghijklmnopqrstuvwxyz234567"
B32U = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
AGE = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
LOW = string.ascii_lowercase
WORDS = ("correct horse battery staple orbit velvet maple thunder quiet river lantern copper "
         "harbor meadow saffron pebble violet falcon juniper ember willow canyon").split()


def uuid():
    return "-".join(rs(k, HEX) for k in (8, 4, 4, 4, 12))


def phrase():
    return "".join(R.choice(WORDS) for _ in range(3))


def b64url(n):
    return base64.urlsafe_b64encode(R.randbytes(n)).decode().rstrip("=")


def pem(label, lines=8):
    body = "\n".join(b64(48) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----", body.split("\n")[2]


def putty():
    priv = [b64(48) for _ in range(4)]
    text = ("PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy@ci\nPublic-Lines: 2\n"
            f"{b64(48)}\n{b64(30)}\nPrivate-Lines: 4\n" + "\n".join(priv) + f"\nPrivate-MAC: {rs(64, HEX)}")
    return text, priv[1]


def der_body():
    head = R.choice(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ", "MIIEowIBAAKCAQEA",
                     "MIIEpAIBAAKCAQEA", "MIIJQwIBADANBgkqhkiG9w0BAQEFAASCCS0wggkpAgEAAoICAQ"])
    lines = [head + rs(64 - len(head), AN + "+/")] + [b64(48) for _ in range(5)]
    return "\n".join(lines), lines[3]


def jwk():
    d = b64url(32)
    return (f'{{"kty":"EC","crv":"P-256","x":"{b64url(32)}","y":"{b64url(32)}","d":"{d}","kid":"sig-1"}}', d)


# said the way people say them: the value that must not survive is the second element
MORE_KINDS = {
    # vendor tokens named in the issue
    "slack-app-token": lambda: (v := f"xapp-1-A{rs(10, UP)}-{rs(13, string.digits)}-{rs(64, HEX)}", v),
    "slack-user-token": lambda: (v := f"xoxp-{rs(12, string.digits)}-{rs(12, string.digits)}-{rs(13, string.digits)}-{rs(32, HEX)}", v),
    "vault-service-token": lambda: (v := "hvs." + rs(24), v),
    "vault-service-token-long": lambda: (v := "hvs.CAESI" + rs(80, AN + "_-"), v),
    "vault-batch-token": lambda: (v := "hvb.AAAAAQ" + rs(120, AN + "_-"), v),
    "google-oauth-client-secret": lambda: (v := "GOCSPX-" + rs(28, AN + "_-"), v),
    "google-refresh-token": lambda: (v := "1//0" + rs(2, AN) + "-" + rs(90, AN + "_-"), v),
    "terraform-cloud-token": lambda: (v := rs(14) + ".atlasv1." + rs(67), v),
    "pulumi-token": lambda: (v := "pul-" + rs(40, HEX), v),
    "stripe-webhook-secret": lambda: (v := "whsec_" + rs(32), v),
    "github-webhook-secret": lambda: (f"GITHUB_WEBHOOK_SECRET={(v := rs(40, HEX))}", v),
    "svix-webhook-secret": lambda: (f"WEBHOOK_SIGNING_SECRET=whsec_{(v := b64(24))}", v),
    "brevo-key": lambda: (v := f"xkeysib-{rs(64, HEX)}-{rs(16)}", v),
    "brevo-smtp-key": lambda: (v := f"xsmtpsib-{rs(64, HEX)}-{rs(16)}", v),
    "flyio-token": lambda: (v := "FlyV1 fm2_" + rs(120, AN + "_-"), v[6:]),
    "flyio-personal": lambda: (v := "fo1_" + rs(43, AN + "_-"), v),
    "datadog-api-key": lambda: (f"DD_API_KEY={(v := rs(32, HEX))}", v),
    "datadog-app-key": lambda: (f"export DD_APP_KEY={(v := rs(40, HEX))}", v),
    "datadog-yaml": lambda: (f"datadog:\n  apiKey: {(v := rs(32, HEX))}", v),
    "azure-devops-pat": lambda: (f"AZURE_DEVOPS_EXT_PAT={(v := rs(52, B32L))}", v),
    "azure-devops-git": lambda: (f"git clone https://ops:{(v := rs(52, B32L))}@dev.azure.com/acme/api/_git/api", v),
    "azure-ad-client-secret": lambda: (v := rs(3) + R.choice("78") + "Q~" + rs(34, AN + "_~.-"), v),
    "algolia-admin-key": lambda: (f"ALGOLIA_ADMIN_KEY={(v := rs(32, HEX))}", v),
    "algolia-js": lambda: (f"const client = algoliasearch('{rs(10, UP)}', '{(v := rs(32, HEX))}');", v),
    # more vendor tokens by their documented prefixes
    "aws-session-key-id": lambda: (v := "ASIA" + rs(16, B32U), v),
    "github-user-to-server": lambda: (v := "ghu_" + rs(36), v),
    "github-server-to-server": lambda: (v := "ghs_" + rs(36), v),
    "github-refresh": lambda: (v := "ghr_" + rs(76), v),
    "gitlab-runner-token": lambda: (v := "glrt-" + rs(20, AN + "_-"), v),
    "gitlab-deploy-token": lambda: (v := "gldt-" + rs(20, AN + "_-"), v),
    "openai-legacy-key": lambda: (v := "sk-" + rs(20) + "T3BlbkFJ" + rs(20), v),
    "openai-svcacct-key": lambda: (v := "sk-svcacct-" + rs(60, AN + "_-"), v),
    "anthropic-admin-key": lambda: (v := "sk-ant-admin01-" + rs(93, AN + "_-") + "AA", v),
    "openrouter-key": lambda: (v := "sk-or-v1-" + rs(64, HEX), v),
    "perplexity-key": lambda: (v := "pplx-" + rs(48), v),
    "xai-key": lambda: (v := "xai-" + rs(80), v),
    "groq-key": lambda: (v := "gsk_" + rs(52), v),
    "replicate-token": lambda: (v := "r8_" + rs(37), v),
    "notion-token": lambda: (v := "ntn_" + rs(46), v),
    "atlassian-token": lambda: (v := "ATATT3xFfGF0" + rs(180, AN + "_-") + "=" + rs(8, UP), v),
    "newrelic-user-key": lambda: (v := "NRAK-" + rs(27, UP), v),
    "grafana-service-account": lambda: (v := "glsa_" + rs(32) + "_" + rs(8, HEX), v),
    "postman-key": lambda: (v := f"PMAK-{rs(24, HEX)}-{rs(34, HEX)}", v),
    "okta-token": lambda: (f"Authorization: SSWS {(v := rs(42, AN + '_-'))}", v),
    "supabase-token": lambda: (v := "sbp_" + rs(40, HEX), v),
    "tailscale-key": lambda: (v := f"tskey-auth-k{rs(11)}CNTRL-{rs(33)}", v),
    "doppler-token": lambda: (v := "dp.pt." + rs(43), v),
    "planetscale-token": lambda: (v := "pscale_tkn_" + rs(43, AN + "_-"), v),
    "netlify-token": lambda: (v := "nfp_" + rs(40), v),
    "onepassword-sa-token": lambda: (v := "ops_eyJ" + rs(300, AN + "+/"), v),
    "mapbox-secret": lambda: (v := "sk.eyJ1Ijoi" + rs(40) + "." + rs(22, AN + "_-"), v),
    "square-access-token": lambda: (v := "EAAA" + rs(60, AN + "_-"), v),
    "shippo-token": lambda: (v := "shippo_live_" + rs(40, HEX), v),
    "dynatrace-token": lambda: (v := f"dt0c01.{rs(24, UP)}.{rs(64, UP)}", v),
    "easypost-key": lambda: (v := "EZAK" + rs(54), v),
    "flutterwave-key": lambda: (v := f"FLWSECK_TEST-{rs(32, HEX)}-X", v),
    "artifactory-key": lambda: (v := "AKCp" + rs(69), v),
    "prefect-key": lambda: (v := "pnu_" + rs(36), v),
    "readme-key": lambda: (v := "rdme_" + rs(70, HEX), v),
    "rubygems-key": lambda: (v := "rubygems_" + rs(48, HEX), v),
    "clojars-token": lambda: (v := "CLOJARS_" + rs(60, HEX), v),
    "nuget-key": lambda: (v := "oy2" + rs(43, LOW + "0123456789"), v),
    "frameio-token": lambda: (v := "fio-u-" + rs(64, AN + "_-"), v),
    "infracost-key": lambda: (v := "ico-" + rs(32), v),
    "duffel-token": lambda: (v := "duffel_test_" + rs(43, AN + "_-"), v),
    "typeform-token": lambda: (v := "tfp_" + rs(59, AN + "_-"), v),
    "sentry-user-token": lambda: (v := "sntryu_" + rs(64, HEX), v),
    "sentry-dsn": lambda: (f"SENTRY_DSN=https://{(v := rs(32, HEX))}@o{rs(6, string.digits)}.ingest.sentry.io/{rs(7, string.digits)}", v),
    "heroku-key-v2": lambda: (v := "HRKU-AA" + rs(58, AN + "_-"), v),
    "twilio-auth-token": lambda: (f"TWILIO_AUTH_TOKEN={(v := rs(32, HEX))}", v),
    "mailchimp-key": lambda: (v := rs(32, HEX) + "-us" + str(R.randint(1, 21)), v),
    "linear-webhook": lambda: (f"LINEAR_WEBHOOK_SECRET={(v := 'lin_wh_' + rs(40))}", v),
    "discord-bot-token": lambda: (v := "M" + rs(25) + "." + rs(6, AN + "_-") + "." + rs(38, AN + "_-"), v),
    "cloudflare-global-key": lambda: (f"CLOUDFLARE_API_KEY={(v := rs(37, HEX))}", v),
    "hashicorp-consul-token": lambda: (f"CONSUL_HTTP_TOKEN={(v := uuid())}", v),
    "mongodb-atlas-private-key": lambda: (f"MONGODB_ATLAS_PRIVATE_KEY={(v := uuid())}", v),
    "wireguard-private-key": lambda: (f"[Interface]\nPrivateKey = {(v := b64(32))}\nAddress = 10.0.0.2/24", v),
    "django-secret-key": lambda: (f"SECRET_KEY = 'django-insecure-{(v := rs(50, LOW + string.digits + '!@#%^&*(-_=+)'))}'", v),
    "rails-secret-key-base": lambda: (f"SECRET_KEY_BASE={(v := rs(128, HEX))}", v),
    "flask-secret": lambda: (f"app.config['SECRET_KEY'] = '{(v := rs(32, HEX))}'", v),
    "jwt-secret": lambda: (f"JWT_SECRET={(v := phrase() + rs(4, LOW))}", v),
    "session-secret": lambda: (f'"sessionSecret": "{(v := phrase())}"', v),
    # passwords on command lines (the issue's list, then others)
    "docker-login-p": lambda: (f"docker login -u ci-bot -p {(v := pw())} registry.example.com", v),
    "docker-login-password": lambda: (f"docker login --username ci --password {(v := phrase())} ghcr.io", v),
    "sshpass-p": lambda: (f"sshpass -p '{(v := pw())}' ssh deploy@10.0.3.7 uptime", v),
    "redis-cli-a": lambda: (f"redis-cli -h cache.internal -a {(v := pw())} ping", v),
    "openssl-pass": lambda: (f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 -passout pass:{(v := pw())}", v),
    "openssl-passin": lambda: (f"openssl rsa -in enc.key -passin pass:{(v := phrase())} -out plain.key", v),
    "gpg-passphrase": lambda: (f"gpg --batch --passphrase {(v := phrase())} -d backup.tar.gpg", v),
    "gpg-passphrase-quoted": lambda: (f"gpg --pinentry-mode loopback --passphrase '{(v := pw())}' --decrypt notes.gpg", v),
    "ldapsearch-w": lambda: (f"ldapsearch -x -H ldap://ldap.corp -D 'cn=admin,dc=corp' -w {(v := pw())} -b dc=corp", v),
    "htpasswd-b": lambda: (f"htpasswd -b -c /etc/nginx/.htpasswd admin {(v := pw())}", v),
    "az-login-p": lambda: (f"az login -u ops@acme.com -p {(v := pw())}", v),
    "az-login-sp": lambda: (f"az login --service-principal -u {uuid()} -p {(v := rs(3) + '8Q~' + rs(34, AN + '_~.-'))} --tenant {uuid()}", v),
    "aws-configure-set": lambda: (f"aws configure set aws_secret_access_key {(v := rs(40, AN + '/+'))}", v),
    "mysql-password-long": lambda: (f"mysqldump --user=backup --password={(v := pw())} shop > shop.sql", v),
    "psql-conninfo": lambda: (f"psql \"host=db.internal dbname=app user=app password={(v := pw())}\"", v),
    "mongosh-p": lambda: (f"mongosh 'mongodb://db:27017' -u admin -p {(v := pw())} --authenticationDatabase admin", v),
    "smbclient-U": lambda: (f"smbclient //nas/share -U backup%{(v := pw())}", v),
    "wget-password": lambda: (f"wget --user=ci --password={(v := pw())} https://files.example.com/dist.tgz", v),
    "kubectl-from-literal": lambda: (f"kubectl create secret generic db --from-literal=password={(v := pw())}", v),
    "docker-run-env": lambda: (f"docker run -e POSTGRES_PASSWORD={(v := phrase())} -p 5432:5432 postgres:16", v),
    "git-https-token": lambda: (f"git remote set-url origin https://oauth2:{(v := rs(20, AN + '_-'))}@gitlab.example.com/acme/api.git", v),
    "pip-index-url": lambda: (f"pip install --index-url https://__token__:{(v := rs(32))}@pypi.corp.example/simple acme", v),
    "helm-repo-password": lambda: (f"helm repo add corp https://charts.corp --username ci --password {(v := pw())}", v),
    "vault-login-token": lambda: (f"VAULT_TOKEN={(v := 'hvs.' + rs(24))} vault kv get secret/app", v),
    # config files
    "password-no-digits": lambda: (f"password: {(v := phrase())}", v),
    "password-env-no-digits": lambda: (f"SMTP_PASSWORD={(v := phrase())}", v),
    "xml-password": lambda: (f"<password>{(v := pw())}</password>", v),
    "maven-settings": lambda: (f"<server><id>corp</id><username>ci</username><password>{(v := phrase())}</password></server>", v),
    "connstring-dollar": lambda: (f"Server=tcp:sql.acme.net,1433;Database=app;User ID=app;Password={(v := rs(6) + '$' + rs(5) + '$1')};Encrypt=True;", v),
    "url-dollar-password": lambda: (f"DATABASE_URL=postgres://app:{(v := rs(5) + '$' + rs(6))}@db:5432/app", v),
    "laravel-app-key": lambda: (f"APP_KEY=base64:{(v := b64(32))}", v),
    "npm-auth": lambda: (f"_auth={(v := b64(24))}", v),
    "npmrc-authtoken": lambda: (f"//registry.npmjs.org/:_authToken={(v := 'npm_' + rs(36))}", v),
    "npmrc-private-authtoken": lambda: (f"//npm.corp.example/:_authToken={(v := uuid())}", v),
    "docker-config-auth": lambda: (f'{{"auths": {{"registry.example.com": {{"auth": "{(v := b64(30))}"}}}}}}', v),
    "kubeconfig-client-key": lambda: (f"    client-key-data: {(v := b64(300))}", v),
    "kubeconfig-token": lambda: (f"  user:\n    token: {(v := rs(60, AN + '._-'))}", v),
    "pgpass": lambda: (f"db.internal:5432:app:app_user:{(v := pw())}", v),
    "netrc": lambda: (f"machine api.heroku.com login ops@acme.com password {(v := pw())}", v),
    "netrc-multiline": lambda: (f"machine github.com\n  login octocat\n  password {(v := 'ghp_' + rs(36))}", v),
    "rclone-pass": lambda: (f"[s3backup]\ntype = crypt\npass = {(v := b64url(40))}", v),
    "spring-datasource": lambda: (f"spring.datasource.password={(v := pw())}", v),
    "wp-config": lambda: (f"define( 'DB_PASSWORD', '{(v := pw())}' );", v),
    "tfvars-password": lambda: (f'db_password = "{(v := pw())}"', v),
    "ini-password": lambda: (f"[database]\nuser = app\npasswd = {(v := phrase())}", v),
    "json-client-secret": lambda: (f'"client_secret": "{(v := rs(32, AN + "_-"))}",', v),
    "git-credentials": lambda: (f"https://octocat:{(v := 'ghp_' + rs(36))}@github.com", v),
    "jdbc-password": lambda: (f"jdbc:mysql://db:3306/shop?user=app&password={(v := pw())}", v),
    "smtp-url": lambda: (f"EMAIL_URL=smtp://mailer:{(v := phrase())}@smtp.example.com:587", v),
    "amqp-url": lambda: (f"amqp://guest:{(v := pw())}@rabbit:5672/", v),
    "dotenv-api-token": lambda: (f"API_TOKEN={(v := rs(48))}", v),
    "yaml-secret-key": lambda: (f"secret_key: \"{(v := rs(40, AN + '/+'))}\"", v),
    # key material
    "ec-private-key": lambda: pem("EC PRIVATE KEY", 4),
    "pkcs8-private-key": lambda: pem("PRIVATE KEY"),
    "encrypted-private-key": lambda: pem("ENCRYPTED PRIVATE KEY"),
    "pgp-private-key": lambda: (lambda t, v: (t.replace("-----\n", "-----\n\n", 1), v))(*pem("PGP PRIVATE KEY BLOCK")),
    "dsa-private-key": lambda: pem("DSA PRIVATE KEY", 6),
    "putty-key": putty,
    "der-base64-body": der_body,
    "jwk-private": jwk,
    "age-identity-file": lambda: (f"# created: 2026-10-01T10:00:00Z\nAGE-SECRET-KEY-1{(v := rs(58, AGE))}", v),
}

KINDS.update(MORE_KINDS)

# written apart, in parallel, from each vendor's documented format (kept: more ways of saying them)
PARALLEL_KINDS = {
    "npmrc-auth": lambda: (f"//registry.example.com/:_auth={(v := b64(24))}", v),
    "netrc-password": lambda: (f"machine api.heroku.com login ops@corp.com password {(v := pw())}", v),
    "putty-private-key": lambda: ((v := "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n"
                                        f"Public-Lines: 2\n{b64(48)}\n{b64(20)}\nPrivate-Lines: 1\n{(s := b64(36))}\n"
                                        f"Private-MAC: {rs(64, HEX)}"), s),
    "jwk-private-d": lambda: (f'{{"kty": "EC", "crv": "P-256", "x": "{rs(43, AN + "_-")}", "y": "{rs(43, AN + "_-")}", '
                              f'"d": "{(v := rs(43, AN + "_-"))}"}}', v),
    "der-key-base64": lambda: (f"the key, base64 DER: {(v := 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC' + b64(90))}", v),
    "github-app-token": lambda: (v := "ghs_" + rs(36), v),
    "github-refresh-token": lambda: (v := "ghr_" + rs(36), v),
    "stripe-test-secret": lambda: (v := "sk_test_" + rs(24), v),
    "tailscale-auth-key": lambda: (v := f"tskey-auth-{rs(17)}-{rs(33)}", v),
    "okta-api-token": lambda: (f"Authorization: SSWS {(v := rs(42, AN + '_-'))}", v),
    "mapbox-secret-token": lambda: (v := "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + rs(20) + "." + rs(22, AN + "_-"), v),
    "render-key": lambda: (v := "rnd_" + rs(32), v),
    "flutterwave-secret": lambda: (v := f"FLWSECK_TEST-{rs(32, HEX)}-X", v),
    "huggingface-org-token": lambda: (v := "api_org_" + rs(34), v),
}
PARALLEL_ISSUE34 = ['slack-app-token', 'vault-service-token', 'google-oauth-client-secret', 'terraform-cloud-token', 'pulumi-token', 'stripe-webhook-secret', 'brevo-key', 'flyio-token', 'google-refresh-token', 'docker-login-p', 'sshpass-p', 'redis-cli-a', 'openssl-pass', 'gpg-passphrase', 'ldapsearch-w', 'htpasswd-b', 'az-login-p', 'aws-configure-set', 'xml-password', 'laravel-app-key', 'npmrc-auth', 'docker-config-auth', 'kubeconfig-client-key', 'netrc-password', 'putty-private-key', 'jwk-private-d', 'der-key-base64']
KINDS.update(PARALLEL_KINDS)

CONTEXTS = [
    "[User]\nok here it is: {s} — can you wire it into the deploy script?",
    "> I exported it and reran the tests:\n> `export TOKEN_LINE='{s}'`",
    "the CI log printed this, is that bad?\n{s}\nthanks",
    "[Agent]\n> Put this in your `.env` (do not commit it):\n> {s}",
    "why does `{s}` fail with 401 since yesterday?",
]

# the 37 formats that reached a peer in #34's review (each must be caught, always)
ISSUE34_KINDS = ["slack-app-token", "vault-service-token", "google-oauth-client-secret", "terraform-cloud-token",
                 "pulumi-token", "stripe-webhook-secret", "svix-webhook-secret", "brevo-key", "flyio-token",
                 "google-refresh-token", "datadog-api-key", "azure-devops-pat", "algolia-admin-key",
                 "docker-login-p", "sshpass-p", "redis-cli-a", "openssl-pass", "gpg-passphrase", "ldapsearch-w",
                 "htpasswd-b", "az-login-p", "aws-configure-set", "password-no-digits", "xml-password",
                 "connstring-dollar", "laravel-app-key", "npm-auth", "docker-config-auth", "kubeconfig-client-key",
                 "pgpass", "netrc", "rclone-pass", "putty-key", "der-base64-body", "jwk-private",
                 "datadog-app-key", "url-dollar-password"]
ISSUE34_KINDS += [k for k in PARALLEL_ISSUE34 if k not in ISSUE34_KINDS]

# the 16 kinds that left the machine in the adversarial review: each must be caught, always
ISSUE_KINDS = ["database-url-env", "postgres-url", "mysql-p", "curl-u", "password-flag", "bearer-header",
               "google-oauth-token", "stripe-secret", "sendgrid", "azure-storage-key", "slack-webhook",
               "npm-token", "huggingface-token", "docker-pat", "env-db-password", "redis-url"]


def secrets(per_kind: int = 3) -> list:
    """[(kind, text as said in a session, the sensitive value)] — per_kind of each kind."""
    out = []
    for kind, make in KINDS.items():
        for i in range(per_kind):
            text, value = make()
            out.append((kind, CONTEXTS[(i + len(out)) % len(CONTEXTS)].format(s=text), value))
    return out


PROSE = ("The cache warms up in about a minute after a deploy, so the first requests are slower. "
         "We agreed to keep the retry budget at three attempts with exponential backoff. "
         "Can you check why the nightly job skipped the Tuesday partition? "
         "I think the flaky test depends on the order the fixtures are created in. "
         "Let's move the feature flag check before the expensive query. "
         "The migration renames the column first and backfills it in batches of 10,000 rows. "
         "Remember to rotate the credentials after the contractor leaves; the runbook says how. "
         "Use the secrets manager for anything sensitive, never the repository. "
         "The token bucket refills at 50 requests per second per tenant. "
         "Password rules: at least 12 characters, checked against the breached list. "
         "The key insight is that the index is derived, so it can always be rebuilt. "
         "Auth happens at the gateway; services trust the forwarded identity header. "
         "Access logs are kept for 30 days and then rolled into cold storage.").split(". ")
NAMES = ("user order invoice session tenant account payment report widget job queue event "
         "token_count api_client auth_service key_id secret_name password_field access_level").split()


def ordinary_more():
    """Templates of everyday developer text, much of it near the words secrets sit by."""
    sha = lambda: rs(40, HEX)  # noqa: E731
    w = lambda: R.choice(NAMES)  # noqa: E731
    n = lambda: R.randint(1, 9999)  # noqa: E731
    return [
        lambda: R.choice(PROSE).strip() + ".",
        lambda: f"[User]\n{R.choice(PROSE).strip()}?",
        lambda: f"> {R.choice(PROSE).strip()}.",
        lambda: f"def get_{w()}(self, {w()}_id: int) -> dict:",
        lambda: f"    return self.client.get(f\"/api/v2/{w()}s/{{{w()}_id}}\")",
        lambda: f"const {{ data, error }} = await supabase.from('{w()}s').select('*').eq('id', {n()});",
        lambda: "password = getpass.getpass(\"Password: \")",
        lambda: "token = request.cookies.get('session')",
        lambda: "api_key = settings.OPENAI_API_KEY",
        lambda: "secret = load_secret(name=\"db/prod\", version=\"latest\")",
        lambda: "password: ${DB_PASSWORD}",
        lambda: "password: {{ .Values.postgres.password }}",
        lambda: "token: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
        lambda: "POSTGRES_PASSWORD_FILE=/run/secrets/db_password",
        lambda: "password_min_length = 12",
        lambda: "secret_key_ref = \"projects/acme/secrets/api/versions/latest\"",
        lambda: f"access_token_ttl = {R.choice([300, 900, 3600])}",
        lambda: "auth_url = \"https://auth.example.com/oauth/authorize\"",
        lambda: "client_id = \"web-dashboard\"",
        lambda: "if token is None:\n    raise PermissionError(\"missing token\")",
        lambda: "headers = {\"Authorization\": f\"Bearer {token}\"}",
        lambda: "curl -H \"Authorization: Bearer $TOKEN\" https://api.example.com/v1/me",
        lambda: "docker login ghcr.io -u $GITHUB_ACTOR --password-stdin < token.txt",
        lambda: "echo \"$CR_PAT\" | docker login ghcr.io -u octocat --password-stdin",
        lambda: "mysql -u root -p",
        lambda: "redis-cli -h localhost ping",
        lambda: "ssh -i ~/.ssh/id_ed25519 deploy@10.0.3.7",
        lambda: "gpg --full-generate-key",
        lambda: "openssl req -new -newkey rsa:2048 -nodes -keyout server.key -out server.csr",
        lambda: "openssl x509 -in cert.pem -noout -text",
        lambda: "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
        lambda: "aws configure set region eu-west-1",
        lambda: "aws sts get-caller-identity --profile staging",
        lambda: "az account show --output table",
        lambda: "htpasswd -c /etc/nginx/.htpasswd admin",
        lambda: f"git log --oneline -n {R.randint(2, 30)}",
        lambda: f"git checkout -b feature/{w()}-{rs(5, string.ascii_lowercase)}",
        lambda: f"{sha()[:7]} fix: handle empty {w()} list in the exporter",
        lambda: f"npm install --save-dev @types/{R.choice(['node', 'react', 'jest', 'express'])}",
        lambda: f"pip install 'requests>=2.{R.randint(20, 32)}'",
        lambda: f"2026-10-{R.randint(10, 28)}T12:{R.randint(10, 59)}:{R.randint(10, 59)}Z INFO worker-{R.randint(1, 8)} processed {n()} jobs in {R.randint(1, 900)}ms",
        lambda: f"2026-10-{R.randint(10, 28)} 09:{R.randint(10, 59)}:00 WARN auth: login failed for user id={n()} (bad password)",
        lambda: f"ERROR token expired at 2026-10-{R.randint(10, 28)}T08:00:00Z; refreshing",
        lambda: f"GET /api/v1/{w()}s?page={R.randint(1, 50)} 200 {R.randint(2, 400)}ms",
        lambda: f"Traceback (most recent call last):\n  File \"app/{w()}.py\", line {n()}, in <module>",
        lambda: "KeyError: 'api_key'",
        lambda: f"AssertionError: expected status 200, got {R.choice([401, 403, 500])}",
        lambda: f"| {w()} | {n()} | {R.randint(0, 100)}% |",
        lambda: f"- [ ] rotate the {R.choice(['staging', 'prod', 'ci'])} {R.choice(['password', 'token', 'api key', 'secret'])} before Friday",
        lambda: f"{w()}_hash = hashlib.sha256({w()}.encode()).hexdigest()",
        lambda: f"expected digest {rs(64, HEX)}",
        lambda: f"sha256sum: {rs(64, HEX)}  dist/app-{R.randint(1, 9)}.{R.randint(0, 9)}.tar.gz",
        lambda: f"layer sha256:{rs(64, HEX)} already exists",
        lambda: f"\"id\": \"{uuid()}\", \"type\": \"{w()}\", \"created\": \"2026-10-0{R.randint(1, 9)}\"",
        lambda: f"trace_id={rs(32, HEX)} span_id={rs(16, HEX)}",
        lambda: f"Run ID {n()}{n()} finished: {R.randint(0, 300)} passed, {R.randint(0, 3)} failed",
        lambda: f"<dependency><groupId>org.{w()}</groupId><artifactId>core</artifactId><version>{R.randint(1, 9)}.{R.randint(0, 20)}</version></dependency>",
        lambda: "<password-policy minLength=\"12\" requireDigits=\"true\"/>",
        lambda: "<input type=\"password\" name=\"password\" autocomplete=\"current-password\">",
        lambda: "password: string;",
        lambda: "token?: string | null;",
        lambda: "export const API_URL = process.env.API_URL ?? 'http://localhost:3000';",
        lambda: "SECRET_KEY = os.environ.get(\"SECRET_KEY\")",
        lambda: "APP_KEY=",
        lambda: "password=",
        lambda: "The API key goes in the X-Api-Key header; the gateway checks it against the tenant table.",
        lambda: f"see https://docs.example.com/auth/tokens#{w()} for the token scopes",
        lambda: f"https://console.cloud.google.com/apis/credentials?project=acme-{rs(6, string.ascii_lowercase)}",
        lambda: f"https://dev.azure.com/acme/api/_build/results?buildId={n()}",
        lambda: f"https://app.datadoghq.com/dashboard/{rs(3, string.ascii_lowercase)}-{rs(3, string.ascii_lowercase)}-{rs(3, string.ascii_lowercase)}",
        lambda: "vault kv get -field=password secret/db",
        lambda: "vault login -method=oidc",
        lambda: "terraform init -backend-config=backend.hcl",
        lambda: "pulumi stack select dev && pulumi up --yes",
        lambda: "fly deploy --remote-only",
        lambda: "stripe listen --forward-to localhost:4242/webhook",
        lambda: f"rclone copy ./dist s3backup:releases/{R.randint(1, 9)}.{R.randint(0, 9)}",
        lambda: "machine github.com login octocat",
        lambda: "client-certificate-data: REDACTED",
        lambda: "    - name: DB_PASSWORD\n      valueFrom:\n        secretKeyRef: {name: db, key: password}",
        lambda: f"keyboard shortcut: ctrl+{R.choice('abcdefk')} opens the command palette",
        lambda: f"primary_key = \"{w()}_id\"",
        lambda: "public_key = load_pem_public_key(pem_bytes)",
        lambda: f"cache_key = f\"{w()}:{{tenant}}:{{page}}\"",
        lambda: "auth_mode = \"oidc\"",
        lambda: "credentials = service_account.Credentials.from_service_account_file(path)",
        lambda: f"The {w()} service reads its api key from the environment at start-up.",
        lambda: f"I reset the password for {R.choice(['alice', 'bob', 'carol'])}@example.com; they should get the email.",
        lambda: "Set PGPASSWORD in ~/.pgpass instead of the command line (ps shows arguments).",
        lambda: f"accuracy: 0.{R.randint(100, 999)}, loss: 0.{R.randint(100, 999)}, epoch {R.randint(1, 50)}",
        lambda: f"tokens used: {n()} prompt, {n()} completion",
        lambda: f"The build took {R.randint(1, 59)}m{R.randint(1, 59)}s on the {R.choice(['arm', 'x86'])} runner.",
        lambda: f"SELECT id, email FROM users WHERE created_at > now() - interval '{R.randint(1, 30)} days';",
        lambda: "UPDATE accounts SET password_hash = $1 WHERE id = $2",
        lambda: f"ALTER TABLE {w()}s ADD COLUMN api_key_hash text;",
        lambda: f"{rs(8, string.ascii_lowercase)}.{R.choice(['py', 'ts', 'go', 'rs'])}:{n()}:{R.randint(1, 80)}: unused variable '{w()}'",
        lambda: f"BenchmarkParse-8   \t{n()}00\t   {n()} ns/op",
        lambda: f"bcrypt cost {R.randint(10, 14)}: {R.randint(50, 900)} ms per hash",
        lambda: f"$ ls -la ~/.{R.choice(['ssh', 'aws', 'kube', 'docker', 'config'])}",
        lambda: "ssh-keygen -t ed25519 -C \"dev@laptop\"",
        lambda: f"Your identification has been saved in /home/dev/.ssh/id_ed25519\nThe key fingerprint is:\nSHA256:{b64(32).rstrip('=')} dev@laptop",
        lambda: f"Public-Lines: {R.randint(2, 12)}",
        lambda: f"gh pr create --title \"{R.choice(PROSE).strip()[:40]}\" --body-file pr.md",
    ]


def ordinary(n: int = 6000) -> list:
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
    t += ordinary_more()
    return [R.choice(t)() for _ in range(n)]
