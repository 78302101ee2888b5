"""blake2b and sha256 without importing hashlib.

hashlib loads OpenSSL when imported (~2.5 ms of every fresh process). Its blake2b is this
very C type from the standard library's own `_blake2` (hashlib never hands blake2 to
OpenSSL), and SHA-256 is one function whoever computes it, so the digests are the same bytes.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # a CPython built without its own hashes: hashlib's is then OpenSSL's
    from hashlib import blake2b

try:
    from _sha256 import sha256  # Python 3.11
except ImportError:
    try:
        from _sha2 import sha256  # Python 3.12 on
    except ImportError:
        from hashlib import sha256

__all__ = ["blake2b", "sha256"]
