"""SHA-256 on the cold paths (every hook, every search): the digest ``hashlib.sha256`` gives,
without importing hashlib, whose OpenSSL binding costs 2-3 ms to load — as much as a tenth of
a hook's own work (bench/before_after.py). For short inputs (ids, a turn's text, a path);
bulk hashing (redaction, the mesh) keeps hashlib, which is faster on megabytes."""
from __future__ import annotations

try:  # CPython's own implementation, the one hashlib falls back to
    from _sha256 import sha256 as _new  # (Python 3.10, 3.11)
except ImportError:
    try:
        from _sha2 import sha256 as _new  # (Python 3.12+)
    except ImportError:  # (a Python built without it)
        from hashlib import sha256 as _new


def hexdigest(data: bytes) -> str:
    """``hashlib.sha256(data).hexdigest()``."""
    return _new(data).hexdigest()
