"""The swarm key and the sealed envelope every mesh request and response travels in.

Key: 32 random bytes, written ``chrollo-mesh-v1:<base64url>``. Two AES-256-GCM keys are
derived from it with HKDF-SHA256 (one per direction), so a captured request can never be
replayed as a response. Every message is ``nonce (12 bytes) || ciphertext+tag``; its
associated data names the protocol, the direction and the operation (requests) or the id of
the request answered (responses) — a response cannot be moved to another request. AES-GCM
authenticates and encrypts at once: a wrong key, a flipped bit or a truncated body fails to
open, and nothing of the content is readable on the wire.
"""
from __future__ import annotations

import base64
import os

from ..errors import ChrolloError

PREFIX = "chrollo-mesh-v1:"
KEY_BYTES = 32
NONCE_BYTES = 12


class BadMessage(Exception):
    """A message that does not open under this swarm key (wrong key, tampered, truncated)."""


def _aead():
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        raise ChrolloError("mesh_missing", "the mesh needs the cryptography package",
                           "pip install 'chrollo[mesh]'") from None
    return AESGCM


def new_key() -> str:
    return PREFIX + base64.urlsafe_b64encode(os.urandom(KEY_BYTES)).decode().rstrip("=")


def parse_key(text: str) -> bytes:
    """The 32 key bytes of a ``chrollo-mesh-v1:…`` string; a usage error if it is not one."""
    from ..errors import UsageError

    text = (text or "").strip()
    if not text.startswith(PREFIX):
        raise UsageError("not a chrollo mesh key (it starts with chrollo-mesh-v1:)",
                         "Print the key on a node of the mesh with `chrollo mesh key`.", kind="bad_key")
    body = text[len(PREFIX):]
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except ValueError:
        raw = b""
    if len(raw) != KEY_BYTES:
        raise UsageError("the mesh key is damaged (wrong length)", "Copy it again, whole.", kind="bad_key")
    return raw


class Box:
    """Seal and open messages under one swarm key."""

    def __init__(self, key: bytes):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        aead = _aead()

        def derive(label: bytes) -> object:
            return aead(HKDF(hashes.SHA256(), 32, salt=None, info=b"chrollo-mesh-v1 " + label).derive(key))

        self._req, self._resp = derive(b"request"), derive(b"response")

    def seal_request(self, op: str, data: bytes) -> bytes:
        return self._seal(self._req, data, b"req|" + op.encode())

    def open_request(self, op: str, blob: bytes) -> bytes:
        return self._open(self._req, blob, b"req|" + op.encode())

    def seal_response(self, request_id: str, data: bytes) -> bytes:
        return self._seal(self._resp, data, b"resp|" + request_id.encode())

    def open_response(self, request_id: str, blob: bytes) -> bytes:
        return self._open(self._resp, blob, b"resp|" + request_id.encode())

    @staticmethod
    def _seal(aead, data: bytes, aad: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return nonce + aead.encrypt(nonce, data, b"chrollo-mesh-v1|" + aad)

    @staticmethod
    def _open(aead, blob: bytes, aad: bytes) -> bytes:
        from cryptography.exceptions import InvalidTag

        if len(blob) < NONCE_BYTES + 16:
            raise BadMessage("too short")
        try:
            return aead.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], b"chrollo-mesh-v1|" + aad)
        except InvalidTag:
            raise BadMessage("does not open under this swarm key") from None
