"""The file format of kb's own caches (the opening cache, the kept listing): a magic line
naming the cache, a CRC-32 of the body, and the body, a `marshal` of plain data.

marshal, not pickle: the file sits in `.kb` beside the notes, where anyone who can write the
fleet can write it too, and unmarshalling plain values runs no code. A file that is absent,
not a regular file, larger than its reader allows, of another cache, truncated or damaged
reads as None: the cache is then simply absent and rebuilt, never an error.

Inside a body, many small values a reader looks up a few of are kept as a handful of large
ones (`Keyed`, `Blobs`): loading makes a few objects, and each value is decoded when read.
"""

from __future__ import annotations

import itertools
import marshal
import os
import stat
import zlib
from array import array
from collections.abc import Iterator, Mapping, Sequence

from .digests import blake2b

_CRC_BYTES = 4
# O_NONBLOCK: opening a FIFO planted there would otherwise wait for a writer forever (it is
# then refused as not a regular file); a regular file reads as ever.
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def seal(magic: bytes, payload: object) -> bytes:
    """The bytes of a cache file holding `payload` (plain values only)."""
    body = marshal.dumps(payload)
    return magic + zlib.crc32(body).to_bytes(_CRC_BYTES, "big") + body


def source_digest(files: list[str | None]) -> str:
    """A digest of the source files whose code derived a cache's values: a kb that changed
    them must not read values another version derived. A file that cannot be read (a frozen
    build) makes a digest no later process repeats: such a cache is never reused."""
    digest = blake2b(digest_size=8)
    for name in files:
        try:
            with open(name, "rb") as f:  # type: ignore[arg-type]
                digest.update(f.read())
        except (OSError, TypeError):
            digest.update(os.urandom(8))
    return digest.hexdigest()


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


class Keyed(Mapping):
    """A cached mapping of names to blobs as three values, not a dict of thousands: the names
    (one a line), where each one's blob ends, and the blobs end to end. A fresh process looks
    up the few names a question touches and decodes only theirs; loading a dict of every
    word, record and entry was most of reading the cache at 60,000 chunks (a new object per
    name and per blob)."""

    __slots__ = ("_listed", "_ends", "_blobs")

    def __init__(self, listed: str, ends: bytes, blobs: bytes):
        self._listed, self._blobs = listed, blobs
        self._ends = array("Q")
        self._ends.frombytes(ends)

    def _place(self, name: str) -> int:
        at = self._listed.find("\n" + name + "\n") if "\n" not in name else -1
        return -1 if at < 0 else self._listed.count("\n", 0, at)  # the lines before it

    def __getitem__(self, name: str) -> bytes:
        k = self._place(name)
        if k < 0:
            raise KeyError(name)
        return self._blobs[self._ends[k - 1] if k else 0:self._ends[k]]

    def get(self, name: str, default=None):
        # Mapping.get raises and catches a KeyError per absent name: over 2,000 small bases a
        # refusal asks each for every gram of the question, and most hold none.
        k = self._place(name) if isinstance(name, str) else -1
        return default if k < 0 else self._blobs[self._ends[k - 1] if k else 0:self._ends[k]]

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and self._place(name) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._listed[1:-1].split("\n") if len(self._ends) else ())

    def __len__(self) -> int:
        return len(self._ends)


class Blobs(Sequence):
    """A cached sequence of blobs as two values: where each ends, and the blobs end to end."""

    __slots__ = ("_ends", "_blobs")

    def __init__(self, ends: bytes, blobs: bytes):
        self._blobs = blobs
        self._ends = array("Q")
        self._ends.frombytes(ends)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self._ends)
        return self._blobs[self._ends[k - 1] if k else 0:self._ends[k]]

    def __len__(self) -> int:
        return len(self._ends)


def keyed(values: Mapping) -> tuple[str, bytes, bytes] | None:
    """`values` (name -> value) as Keyed's three values; None if a name holds a line break
    (a note's file name may): a cache holding one is not kept."""
    listed = sorted(values)
    if any("\n" in name for name in listed):
        return None
    ends, blobs = ends_and_blobs(marshal.dumps(values[name]) for name in listed)
    return "\n" + "".join(name + "\n" for name in listed), ends, blobs


def ends_and_blobs(blobs) -> tuple[bytes, bytes]:
    blobs = list(blobs)
    return array("Q", itertools.accumulate(len(b) for b in blobs)).tobytes(), b"".join(blobs)


def is_keyed(v) -> bool:
    if not (type(v) is tuple and len(v) == 3 and type(v[0]) is str and type(v[1]) is bytes
            and type(v[2]) is bytes and len(v[1]) % 8 == 0):
        return False
    n = len(v[1]) // 8
    return v[0].count("\n") == n + 1 if n else v[0] in ("\n", "")


def is_blobs(v) -> bool:
    return type(v) is tuple and len(v) == 2 and type(v[0]) is bytes and type(v[1]) is bytes and len(v[0]) % 8 == 0
