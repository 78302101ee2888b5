"""The file format of kb's own caches (the opening cache, the kept listing): a magic line
naming the cache, a CRC-32 of the body, and the body, a `marshal` of plain data.

marshal, not pickle: the file sits in `.kb` beside the notes, where anyone who can write the
fleet can write it too, and unmarshalling plain values runs no code. A file that is absent,
not a regular file, larger than its reader allows, of another cache, truncated or damaged
reads as None: the cache is then simply absent and rebuilt, never an error.
"""

from __future__ import annotations

import marshal
import os
import stat
import zlib

_CRC_BYTES = 4
# O_NONBLOCK: opening a FIFO planted there would otherwise wait for a writer forever (it is
# then refused as not a regular file); a regular file reads as ever.
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def seal(magic: bytes, payload: object) -> bytes:
    """The bytes of a cache file holding `payload` (plain values only)."""
    body = marshal.dumps(payload)
    return magic + zlib.crc32(body).to_bytes(_CRC_BYTES, "big") + body


def read_sealed(path: str, magic: bytes, max_bytes: int) -> object | None:
    """The payload of the cache file at `path` (a link there is not followed), or None."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read()
    except OSError:
        return None
    finally:
        os.close(fd)
    head = len(magic) + _CRC_BYTES
    if len(raw) < head or not raw.startswith(magic):
        return None
    body = memoryview(raw)[head:]
    if zlib.crc32(body) != int.from_bytes(raw[len(magic):head], "big"):
        return None  # truncated or damaged
    try:
        return marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None
