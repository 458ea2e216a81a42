"""This node's identity: a key pair and a self-signed certificate; its ID is the certificate's
fingerprint (Syncthing's device-ID model). Knows no transport.

``mesh init`` writes ``$CHROLLO_HOME/mesh/node.key`` (EC P-256, PEM, 0600) and ``node.crt``.
The node ID is the SHA-256 of the certificate's DER bytes in base32, 52 characters written in
groups of four (``ABCD-EFGH-…``): copying it by hand, a typo changes it, and nobody can make a
certificate with a chosen ID. Signatures (manifests) are ECDSA-SHA256 with the same key that
authenticates the node in TLS.
"""
from __future__ import annotations

import base64
import datetime as dt
import hashlib
import os
import re

from ..errors import ChrolloError, UsageError

ID_RE = re.compile(r"[A-Z2-7]{4}(?:-[A-Z2-7]{4}){12}")


def _crypto():
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise ChrolloError("mesh_missing", "the mesh needs the cryptography package",
                           "pip install cryptography (a dependency of chrollo)") from None


def node_id(cert_der: bytes) -> str:
    raw = base64.b32encode(hashlib.sha256(cert_der).digest()).decode().rstrip("=")
    return "-".join(raw[i:i + 4] for i in range(0, len(raw), 4))


def parse_id(text) -> str:
    """A node ID in canonical form (spaces/dashes/case forgiven), or a usage error."""
    raw = re.sub(r"[\s-]", "", str(text or "")).upper()
    canon = "-".join(raw[i:i + 4] for i in range(0, len(raw), 4))
    if not ID_RE.fullmatch(canon):
        raise UsageError(f"not a node ID: {str(text)[:80]!r}",
                         "`chrollo mesh id` on the other machine prints its ID (13 groups of 4).",
                         kind="bad_id")
    return canon


def is_id(text) -> bool:
    return isinstance(text, str) and bool(ID_RE.fullmatch(text))


class Identity:
    """The node's private key and certificate (PEM), and its ID."""

    def __init__(self, key_pem: bytes, cert_pem: bytes):
        self.key_pem, self.cert_pem = key_pem, cert_pem
        self.key = _load_private_key(key_pem)
        # (the PEM's body is the DER: its fingerprint needs no x509 parser, whose import
        # alone was ~30 ms of every `mesh sync`, a process a sync tool may start every minute)
        self.cert_der = pem_der(cert_pem)
        self.id = node_id(self.cert_der)

    @staticmethod
    def paths(mesh_dir: str) -> tuple[str, str]:
        from ..layout import mesh_identity_files

        return mesh_identity_files(mesh_dir)

    @classmethod
    def generate(cls, name: str) -> "Identity":
        _crypto()
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"chrollo {name}")])
        now = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=1)
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now).not_valid_after(now + dt.timedelta(days=365 * 30))
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .sign(key, hashes.SHA256()))
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        return cls(key_pem, cert.public_bytes(serialization.Encoding.PEM))

    @classmethod
    def load(cls, mesh_dir: str) -> "Identity":
        _crypto()
        kp, cp = cls.paths(mesh_dir)
        try:
            with open(kp, "rb") as k, open(cp, "rb") as c:
                return cls(k.read(), c.read())
        except FileNotFoundError:
            raise ChrolloError("mesh_not_initialized", "this node has no mesh identity yet",
                               "Run `chrollo mesh init`.") from None

    def save(self, mesh_dir: str) -> None:
        from .. import vault as _vault

        kp, cp = self.paths(mesh_dir)
        _vault.write_private(kp, self.key_pem.decode())
        _vault.write_private(cp, self.cert_pem.decode())

    def sign(self, data: bytes) -> bytes:
        return self.key.sign(data, _ecdsa_sha256())


def verify(cert_pem: bytes, data: bytes, sig: bytes) -> str:
    """The ID of ``cert_pem`` if ``sig`` is its key's signature over ``data``; else ValueError."""
    _crypto()
    from cryptography.exceptions import InvalidSignature

    nid, pub = public_key(cert_pem)
    try:
        pub.verify(sig, data, _ecdsa_sha256())
    except InvalidSignature:
        raise ValueError("bad signature") from None
    return nid


def _ecdsa_sha256():
    """``ec.ECDSA(hashes.SHA256())``. Its constructor imports cryptography's whole OpenSSL
    backend (RSA, padding, threading: ~4 ms of every sync) only to check that deterministic
    signing, which this does not ask for, is supported; made here without it when this
    version's object reads back as the public one would, else the public way."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    algo = ec.ECDSA.__new__(ec.ECDSA)
    algo.__dict__.update(_algorithm=hashes.SHA256(), _deterministic_signing=False)
    try:
        if isinstance(algo.algorithm, hashes.SHA256) and algo.deterministic_signing is False:
            return algo
    except AttributeError:
        pass
    return ec.ECDSA(hashes.SHA256())


def _load_private_key(pem: bytes):
    """The node's private key from its PEM. The loader ``serialization`` re-exports is the one
    in cryptography's compiled core; taken from there, the import of the serialization package
    (SSH and PKCS#12 parsers this never uses: ~13 ms of every sync) is left out. Any version
    without it goes the public way."""
    try:
        from cryptography.hazmat.bindings._rust import openssl as _rust

        load = _rust.keys.load_pem_private_key
    except (ImportError, AttributeError):
        from cryptography.hazmat.primitives.serialization import load_pem_private_key as load
    return load(pem, None)


# exactly one PEM certificate and nothing else; its body (the DER, base64) as group 1
_ONE_CERT = re.compile(rb"\s*-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=\r\n]{64,16384})-----END CERTIFICATE-----\s*")


def pem_der(pem: bytes) -> bytes:
    """The DER bytes a one-certificate PEM holds (ValueError if it is not one): what the node
    ID is the fingerprint of."""
    m = _ONE_CERT.fullmatch(pem) if isinstance(pem, bytes) else None
    if m is None:
        raise ValueError("not exactly one PEM certificate")
    return base64.b64decode(b"".join(m.group(1).split()), validate=True)


def public_key(cert_pem: bytes):
    """(ID, EC public key) of a certificate. The key of a certificate seen before is read from
    ``certs/<ID>.point`` (the point, kept when the certificate was first parsed); its ID is the
    SHA-256 of the PEM's own bytes, so only the very certificate whose fingerprint that is can
    use it. Otherwise the certificate is parsed (x509) and its point kept."""
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        nid = node_id(pem_der(cert_pem))
    except ValueError:
        nid = None
    if nid is not None:
        try:
            with open(os.path.join(certs_dir(), nid + ".point"), "rb") as fh:
                return nid, ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), bytes.fromhex(
                    fh.read(200).decode("ascii")))
        except (OSError, ValueError):
            pass
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert = x509.load_pem_x509_certificate(cert_pem)
    pub = cert.public_key()
    if not isinstance(pub, ec.EllipticCurvePublicKey):
        raise ValueError("not an EC certificate")
    got = node_id(cert.public_bytes(serialization.Encoding.DER))
    if got == nid and isinstance(pub.curve, ec.SECP256R1):  # (the PEM's bytes are the parsed DER: keep its point)
        from .. import vault as _vault

        try:
            _vault.make_private_dirs(certs_dir())
            _vault.write_private(os.path.join(certs_dir(), nid + ".point"),
                                 pub.public_bytes(serialization.Encoding.X962,
                                                  serialization.PublicFormat.UncompressedPoint).hex())
        except OSError:
            pass  # (parsed again next time)
    return got, pub


def one_cert(pem: bytes) -> tuple[str, bytes]:
    """(ID, canonical PEM) of ``pem`` if it is exactly one EC certificate and nothing else —
    what a stranger sends is never stored or trusted as it came (junk after a real certificate
    once stopped every later ``mesh serve``); ValueError otherwise."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    if not isinstance(pem, bytes) or not _ONE_CERT.fullmatch(pem):
        raise ValueError("not exactly one PEM certificate")
    cert = x509.load_pem_x509_certificate(pem)
    if not isinstance(cert.public_key(), ec.EllipticCurvePublicKey):
        raise ValueError("not an EC certificate")
    return node_id(cert.public_bytes(serialization.Encoding.DER)), cert.public_bytes(serialization.Encoding.PEM)


def cert_id(cert_pem: bytes) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    return node_id(x509.load_pem_x509_certificate(cert_pem).public_bytes(serialization.Encoding.DER))


def certs_dir() -> str:
    from .. import vault as _vault

    return os.path.join(_vault.home_path(), "mesh", "certs")


def known_cert(nid: str) -> bytes | None:
    """The certificate of node ``nid`` if this node has seen it (its fingerprint is ``nid``)."""
    try:
        with open(os.path.join(certs_dir(), nid + ".pem"), "rb") as fh:
            return fh.read()
    except OSError:
        return None


def remember_cert(pem: bytes) -> str:
    """Keep a certificate (public; its ID pins it), re-encoded from what was parsed, under its
    own ID; returns the ID. ValueError unless ``pem`` is exactly one certificate."""
    from .. import vault as _vault

    nid, pem = one_cert(pem)
    if known_cert(nid) != pem:
        _vault.make_private_dirs(certs_dir())
        _vault.write_private(os.path.join(certs_dir(), nid + ".pem"), pem.decode())
    return nid
