"""Sealing for shared media (git remotes, synced folders): whoever can read the remote or the
folder but is not a paired peer learns nothing but sizes and a certificate. Knows no transport.

A node keeps one content key K (``mesh/content.key``, 0600), made anew whenever a peer is
unpaired (revocation), and wraps it for each paired peer whose certificate it knows: ECDH
(P-256, this node's key × the peer's certificate key) → HKDF-SHA256 → AES-256-GCM. Every file
and the signed manifest are AES-256-GCM under K, with the file name as associated data and a
synthetic nonce (HMAC of name and content under K), so the same file always seals to the same
bytes — git and sync tools move only what changed. The outer envelope::

    {"v": 2, "sealed": "p256-ecdh+aes-256-gcm", "cert": PEM, "keys": {peer ID: base64}, "box": base64}

(plus ``"names": "opaque"``: files on the medium are named by :func:`blob_name`, never by
their real name) carries the sender's certificate (the receiver checks its fingerprint is the pinned ID before
using it); the signed manifest inside is verified as on every transport. A peer that knows K
could re-seal junk, but never with the sender's signature: the trust layer refuses it.
Shared media get no forward secrecy (a stolen node key opens what was sealed to it); the LAN
transport has it (TLS 1.3).
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os

from .. import vault as _vault
from . import identity as _identity
from .files import MAX_CERT, MAX_OUTER, MAX_RECIPIENTS, Refused, bounded_json
from .manifests import Publication, Source, TransportError

MAGIC = b"CHS2"
OUTER_FIELDS = {"v", "sealed", "cert", "keys", "box", "names"}
OVERHEAD = len(MAGIC) + 12 + 16
SCHEME = "p256-ecdh+aes-256-gcm"


_AEADS: dict = {}


def _aead(key: bytes):
    """An AES-GCM cipher for ``key`` (kept: one a file cost more than sealing a small file)."""
    aead = _AEADS.get(key)
    if aead is None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if len(_AEADS) > 64:
            _AEADS.clear()
        aead = _AEADS[key] = AESGCM(key)
    return aead


def seal(key: bytes, name: str, data: bytes) -> bytes:
    nonce = hmac.new(key, b"nonce\0" + name.encode() + b"\0" + data, hashlib.sha256).digest()[:12]
    return MAGIC + nonce + _aead(key).encrypt(nonce, data, name.encode())


def unseal(key: bytes, name: str, blob: bytes) -> bytes:
    from cryptography.exceptions import InvalidTag

    if len(blob) < OVERHEAD or not blob.startswith(MAGIC):
        raise Refused(f"{name}: not a sealed chrollo file")
    try:
        return _aead(key).decrypt(blob[4:16], blob[16:], name.encode())
    except InvalidTag:
        raise Refused(f"{name}: does not open under the sender's key (tampered?)") from None


def _kek(ident, cert_pem: bytes, sender: str, recipient: str) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    try:
        pub = _identity.public_key(cert_pem)[1]
    except ValueError:
        raise Refused("peer certificate is not EC") from None
    shared = ident.key.exchange(ec.ECDH(), pub)
    info = b"chrollo-mesh-v2 wrap " + sender.encode() + b" " + recipient.encode()
    return HKDF(hashes.SHA256(), 32, salt=None, info=info).derive(shared)


def content_key(recipients: set, forgotten: str = "") -> bytes:
    """This node's content key, made anew whenever the recipients change — one unpaired
    (revocation) or one added (a peer paired later never gets a key that opens what the
    branch's history or a folder's old copies hold from before) — and whenever a session is
    forgotten (``forgotten``: a digest of the tombstones), so that what was sealed before the
    forget is under a key nobody is given again."""
    path = os.path.join(_vault.home_path(), "mesh", "content.key")
    data = _vault.read_json(path)
    try:
        key = base64.b64decode(data["key"])
        old = (set(data["recipients"]), data.get("forgotten", ""))
    except (KeyError, ValueError, TypeError):
        key, old = b"", None
    if len(key) != 32 or old != (recipients, forgotten):
        key = os.urandom(32)
        _vault.write_private(path, json.dumps({"key": base64.b64encode(key).decode(), "recipients": sorted(recipients),
                                               "forgotten": forgotten}))
    return key


def blob_name(key: bytes, name: str) -> str:
    """The name a session file has on a shared medium: opaque (an HMAC of its real name under
    the content key), so the folder or the branch says nothing of what was said — format 2
    names a file by its title. The real name travels sealed, in the manifest."""
    return hmac.digest(key, b"name\0" + name.encode(), "sha256").hex()[:32]  # (one-shot: 10,000 a publication)


class SealedPublication:
    """A :class:`~.manifests.Publication` as it goes onto a shared medium."""

    def __init__(self, pub: Publication, ident, certs: dict):
        from ..privacy import rules

        self.pub = pub
        self.key = content_key(set(certs), hashlib.sha256(json.dumps(sorted(rules().file_hashes)).encode()).hexdigest())
        self.kid = hashlib.sha256(self.key).hexdigest()[:16]
        keys = {}
        for rid, pem in sorted(certs.items()):
            kek = _kek(ident, pem, ident.id, rid)
            nonce = hmac.new(kek, self.key, hashlib.sha256).digest()[:12]
            keys[rid] = base64.b64encode(nonce + _aead(kek).encrypt(nonce, self.key, b"wrap")).decode()
        # json.dumps({"v", "sealed", "cert", "keys", "box", "names"}) byte for byte, put together
        # (the box is base64: nothing in its 2 MB to escape, which json.dumps scanned for)
        self.envelope = b"".join((
            f'{{"v": 2, "sealed": "{SCHEME}", "cert": {json.dumps(ident.cert_pem.decode())}, '
            f'"keys": {json.dumps(keys)}, "box": "'.encode(),
            base64.b64encode(seal(self.key, "manifest.json", pub.envelope)), b'", "names": "opaque"}'))
        # per file: a token that changes exactly when its sealed bytes do (its opaque name on
        # the medium, :meth:`blob`, is asked only for the files a transport writes)
        self.entries = [{"name": e["name"], "token": f"{self.kid}:{e['sha256']}"} for e in pub.entries]

    def blob(self, name: str) -> str:
        """The opaque name the session file ``name`` has on the medium."""
        return blob_name(self.key, name)

    def data(self, name: str) -> bytes:
        """The sealed bytes of the session file ``name`` (its real name)."""
        return seal(self.key, name, self.pub.data(name))


class SealedSource(Source):
    """Opens what a raw shared-medium source holds for this node; learns paired peers' certs."""

    def __init__(self, raw: Source, ident, read: "SealedSource | None" = None):
        self.raw, self.ident = raw, ident
        # peer ID -> (a manifest's bytes, its checked outer envelope); ``read``: a source of
        # the same medium read earlier in this sync (the same bytes are not checked twice)
        self.seen: dict = read.seen if read is not None else {}
        self.keys: dict = {}
        self.opaque: dict = {}  # peer ID -> its files go by opaque names (older nodes: real names)
        self.notes: dict = {}

    def outer(self, peer_id: str) -> dict | None:
        raw = self.raw.manifest(peer_id)
        if raw is None:
            return None
        if peer_id in self.seen and self.seen[peer_id][0] == raw:
            return self.seen[peer_id][1]
        env = self._check(raw, peer_id)
        self.seen[peer_id] = (raw, env)
        return env

    def _check(self, raw: bytes, peer_id: str) -> dict:
        env = bounded_json(raw, MAX_OUTER, depth=3)
        if not isinstance(env, dict) or env.get("sealed") != SCHEME or not isinstance(env.get("cert"), str) \
                or not isinstance(env.get("keys"), dict) or not isinstance(env.get("box"), str):
            raise Refused("manifest is malformed (not a sealed chrollo v2 manifest)")
        # every field bounded before anything parses it (a 10 MB "certificate" cost 1.2 GB in x509)
        if len(env["cert"]) > MAX_CERT or len(env["keys"]) > MAX_RECIPIENTS or set(env) - OUTER_FIELDS \
                or not all(isinstance(v, str) and len(v) <= 256 for v in env["keys"].values()):
            raise Refused("manifest is malformed (a field is too large, or unknown)")
        pem = env["cert"].encode()
        if pem == _identity.known_cert(peer_id):
            return env  # (kept once its fingerprint was the paired ID: not parsed again each sync)
        try:
            signer = _identity.one_cert(pem)[0]
        except Exception:  # noqa: BLE001 — junk is junk
            raise Refused("manifest certificate is malformed") from None
        if signer != peer_id:
            raise Refused(f"manifest is sealed by {signer}, not by the paired node {peer_id}")
        _identity.remember_cert(pem)
        return env

    def manifest(self, peer_id: str) -> bytes | None:
        env = self.outer(peer_id)
        if env is None:
            return None
        wrapped = env["keys"].get(self.ident.id)
        if not isinstance(wrapped, str):
            self.notes[peer_id] = "nothing sealed for this node yet (the peer learns our certificate on its next sync)"
            return None
        try:
            blob = base64.b64decode(wrapped, validate=True)
            kek = _kek(self.ident, env["cert"].encode(), peer_id, self.ident.id)
            from cryptography.exceptions import InvalidTag

            try:
                key = _aead(kek).decrypt(blob[:12], blob[12:], b"wrap")
            except InvalidTag:
                raise Refused("our wrapped key does not open (tampered?)") from None
            self.keys[peer_id] = key
            self.opaque[peer_id] = env.get("names") == "opaque"
            return unseal(key, "manifest.json", base64.b64decode(env["box"], validate=True))
        except ValueError:
            raise Refused("manifest is malformed (bad base64)") from None

    def file(self, peer_id: str, name: str, size: int) -> bytes:
        key = self.keys[peer_id]
        blob = self.raw.file(peer_id, blob_name(key, name) if self.opaque.get(peer_id) else name, size + OVERHEAD)
        return unseal(key, name, blob)  # (the real name is the associated data: no swapping blobs)

    def files(self, peer_id: str, entries: list):
        key, opaque = self.keys[peer_id], self.opaque.get(peer_id)
        medium = [{"name": blob_name(key, e["name"]) if opaque else e["name"], "size": e["size"] + OVERHEAD, "of": e}
                  for e in entries]
        for m, blob in self.raw.files(peer_id, medium):
            e = m["of"]
            try:
                if isinstance(blob, Exception):
                    raise blob
                yield e, unseal(key, e["name"], blob)
            except (Refused, TransportError, OSError) as err:
                yield e, err

    def close(self) -> None:
        self.raw.close()
