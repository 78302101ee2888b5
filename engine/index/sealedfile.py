"""The file format of kb's own caches (the opening cache, the kept listing, the spellings):
a magic line naming the cache, a head, and regions of bytes read only when asked for.

    magic line | HMAC-SHA256 of the rest of the head (32) | the head's length (8) | head | region 0 | ...

Trusted only when kb wrote it on this machine (docs/decisions.md, "What kb trusts"): the
digest is keyed with the person's secret (engine/notes/userstate.secret) and checked before a single
byte of the head is decoded, so a file a cloned repository carries (made elsewhere, or by
hand) is absent to kb, and rebuilt. The head holds the regions' lengths and CRC-32s, so the
regions inherit its authenticity: a region is checked against its CRC when it is read.

The values are in kb's own layout (engine/index/valuelayout.py), not marshal or pickle: a reader that
checks every length against the bytes left before it uses it, so hostile bytes (which the
digest already refuses) could not crash it, hang it or make it allocate more than a few
times the file's size either. A region holds what a reader looks up a few of (each note's
record, each word's postings) or decodes only on a path a question seldom takes. A region is
not read at load: its bytes are read when asked for (`os.pread` on the file kept open, so a
file replaced meanwhile is still the one whose head was read), and checked before they are
used, a whole region against its CRC, one blob of a `Keyed` or `Blobs` against its own.

A file that is absent, not a regular file, larger than its reader allows, of another cache,
truncated, not signed with this machine's key or with a head that does not decode reads as
None: the cache is then simply absent and rebuilt, never an error. Damage in a region is
found when its bytes are read and raises `Damaged` before they are used; the reader then
answers from what the cache was made from, and replaces the file.
"""

from __future__ import annotations

import hmac
import itertools
import os
import stat
import struct
import sys
import threading
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence

from hashlib import blake2b

from ..notes.userstate import secret
from .valuelayout import Damaged, decode, encode  # noqa: F401  (callers import them from here too)

_MAC_BYTES = 32
_LEN_BYTES = 8
# O_NONBLOCK: opening a FIFO planted there would otherwise wait for a writer forever (it is
# then refused as not a regular file); a regular file reads as ever.
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# A file this small is read whole at load (one read, no descriptor kept): over 2,000 small
# bases a descriptor per cache would run the process out of them.
READ_WHOLE_BELOW = 256 << 10
# Descriptors kept open at most by the caches of one process; past it a file is read whole.
MAX_KEPT_OPEN = 64


def seal(magic: bytes, payload: object, regions: Sequence[bytes] = ()) -> bytes:
    """The bytes of a cache file holding `payload` (plain values only) and `regions`, signed
    with this machine's key."""
    head = encode((payload, tuple((len(r), zlib.crc32(r)) for r in regions)))
    length = len(head).to_bytes(_LEN_BYTES, "big")
    return magic + _mac(magic, length, head) + length + head + b"".join(regions)


def _mac(magic: bytes, length: bytes, head: bytes) -> bytes:
    return hmac.digest(secret(), magic + length + head, "sha256")


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


def open_sealed(path: str, magic: bytes, max_bytes: int) -> tuple[object, list[Region]] | None:
    """(payload, regions) of the cache file at `path` (a link there is not followed), or
    None; the head is checked, each region when it is read (Region)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        return None
    keep = False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        whole = st.st_size < READ_WHOLE_BELOW or not _Source.may_keep()
        lead = len(magic) + _MAC_BYTES + _LEN_BYTES
        raw = _read_at(fd, st.st_size if whole else min(st.st_size, 1 << 16), 0)
        if len(raw) < lead or not raw.startswith(magic):
            return None
        mac = raw[len(magic):len(magic) + _MAC_BYTES]
        length = raw[len(magic) + _MAC_BYTES:lead]
        n = int.from_bytes(length, "big")
        if lead + n > st.st_size:
            return None  # truncated
        head = raw[lead:lead + n] if len(raw) >= lead + n else _read_at(fd, n, lead)
        if len(head) != n or not hmac.compare_digest(_mac(magic, length, head), mac):
            return None  # truncated, damaged, or not written by kb on this machine: never decoded
        try:
            got = decode(head, path)
        except Damaged:
            return None
        if type(got) is not tuple or len(got) != 2:
            return None
        payload, layout = got
        if not (type(layout) is tuple and all(type(r) is tuple and len(r) == 2 and type(r[0]) is int
                                              and type(r[1]) is int for r in layout)):
            return None
        at = lead + n
        if at + sum(length for length, _ in layout) != st.st_size:
            return None  # truncated, or more than the head accounts for
        if whole:
            # Only the regions' bytes are kept (a copy of them): the head is decoded already,
            # and over 2,000 small bases its bytes kept beside it were ~4 MiB of a one-shot.
            source = _Source(path, None, raw[at:], at)
        else:
            source = _Source(path, fd, None)
            keep = True
        regions = []
        for length, region_crc in layout:
            regions.append(Region(source, at, length, region_crc))
            at += length
        return payload, regions
    except OSError:
        return None
    finally:
        if not keep:
            os.close(fd)


def open_shaped(path: str, magic: bytes, max_bytes: int, first, fields: int,
                regions: int) -> tuple[tuple, list[Region]] | None:
    """open_sealed, for a payload that is a tuple of `fields` values starting with `first`
    (its format, or its key) beside `regions` regions; None for any other file."""
    got = open_sealed(path, magic, max_bytes)
    if got is None:
        return None
    payload, found = got
    if type(payload) is not tuple or len(payload) != fields or payload[0] != first or len(found) != regions:
        return None
    return payload, found


def _read_at(fd: int, n: int, offset: int) -> bytes:
    parts = []
    while n > 0:
        got = os.pread(fd, n, offset)
        if not got:
            break
        parts.append(got)
        n -= len(got)
        offset += len(got)
    return parts[0] if len(parts) == 1 else b"".join(parts)


class _Source:
    """The file a cache's regions are read from: kept open (read with pread: a file renamed
    over meanwhile is still the one whose head was read), or the whole file read at load."""

    _kept = 0
    _lock = threading.Lock()

    @classmethod
    def may_keep(cls) -> bool:
        return cls._kept < MAX_KEPT_OPEN

    def __init__(self, path: str, fd: int | None, whole: bytes | None, origin: int = 0):
        self.path, self._fd, self._whole, self._origin = path, fd, whole, origin  # whole: the file from origin on
        if fd is not None:
            with _Source._lock:
                _Source._kept += 1

    def read(self, offset: int, n: int) -> bytes:
        if self._whole is not None:
            offset -= self._origin
            got = self._whole[offset:offset + n]
        else:
            got = _read_at(self._fd, n, offset)
        if len(got) != n:
            raise Damaged(f"{self.path}: shorter than its head says")
        return got

    def __del__(self):
        if self._fd is not None:
            try:
                os.close(self._fd)
            except (OSError, TypeError):  # at interpreter exit `os` may be gone already
                pass
            with _Source._lock:
                _Source._kept -= 1


class Region:
    """One region of a cache file: its bytes read when asked for and checked before use."""

    __slots__ = ("_source", "_at", "length", "_crc")

    def __init__(self, source: _Source, at: int, length: int, crc: int):
        self._source, self._at, self.length, self._crc = source, at, length, crc

    @property
    def path(self) -> str:
        return self._source.path

    def raw(self) -> bytes:
        """The region's bytes, checked against the region's CRC."""
        raw = self._source.read(self._at, self.length)
        if zlib.crc32(raw) != self._crc:
            raise Damaged(f"{self.path}: damaged (checksum)")
        return raw

    def value(self):
        """The region's bytes as one value (`decode`), checked against the region's CRC."""
        return decode(self.raw(), self.path)

    def blob(self, start: int, end: int, crc: int) -> bytes:
        """Bytes [start, end) of the region, checked against their own CRC (`crc`)."""
        if not 0 <= start <= end <= self.length:
            raise Damaged(f"{self.path}: a blob past its region")
        raw = self._source.read(self._at + start, end - start)
        if zlib.crc32(raw) != crc:
            raise Damaged(f"{self.path}: damaged (checksum)")
        return raw


def loads(blob: bytes, path: str):
    """A blob's value (`decode`); Damaged when the bytes (checked already) are not one."""
    return decode(blob, path)


class Keyed(Mapping):
    """A cached mapping of names to blobs as a few values, not a dict of thousands: the names
    in sorted order (one a line) and where each starts, where each one's blob ends and each
    one's CRC-32 (in the head), and the blobs end to end (a region). A fresh process looks
    up the few names a question touches and reads and decodes only theirs; loading a dict of
    every word, record and entry was most of reading the cache at 60,000 chunks (a new
    object per name and per blob). The offsets stay the head's bytes, each read when asked
    (no array per table): over 2,000 small bases most tables are never read."""

    __slots__ = ("_listed", "_starts_raw", "_starts", "_ends", "_crcs", "_blobs", "_asked", "_places", "_n")

    def __init__(self, listed: str, starts: bytes, ends: bytes, crcs: bytes, blobs: Region):
        self._listed, self._blobs = listed, blobs
        self._asked = 0
        self._places: dict[str, int] | None = None
        self._starts_raw = starts
        self._starts: array | None = None
        self._n = len(ends) // 8
        self._ends, self._crcs = ends, crcs

    def _name(self, k: int) -> str:
        starts = self._starts
        return self._listed[starts[k]:starts[k + 1] - 1 if k + 1 < len(starts) else -1]

    def _place(self, name: str) -> int:
        # A listing of at most SCAN_BELOW characters is searched for "\nname\n" and the lines
        # before it counted, both in C: over 2,000 small bases a refusal asks each for every
        # gram of the question, and a binary search calling back into Python for each step
        # was most of it. A larger listing (40,000 grams) is searched by bisection. A reader
        # that keeps asking (kb misses over a long log, a process that stays up) gets a dict
        # of every name once it has asked for DICT_AFTER of them.
        places = self._places
        if places is not None:
            return places.get(name, -1)
        listed = self._listed
        if len(listed) <= SCAN_BELOW:
            if "\n" in name:
                return -1  # no name holds a line break (keyed refuses one)
            line = name + "\n"
            if listed.startswith(line):
                return 0
            at = listed.find("\n" + line)
            return -1 if at < 0 else listed.count("\n", 0, at + 1)
        self._asked += 1
        if self._asked > DICT_AFTER:
            self._places = dict(zip(self, range(self._n)))
            return self._places.get(name, -1)
        if self._starts is None:
            self._starts = array("I")
            self._starts.frombytes(self._starts_raw)
        k = bisect_left(range(self._n), name, key=self._name)
        return k if k < self._n and self._name(k) == name else -1

    def _blob(self, k: int) -> bytes:
        return _blob_at(self._blobs, self._ends, self._crcs, k)

    def __getitem__(self, name: str) -> bytes:
        k = self._place(name)
        if k < 0:
            raise KeyError(name)
        return self._blob(k)

    def get(self, name: str, default=None):
        # Mapping.get raises and catches a KeyError per absent name: over 2,000 small bases a
        # refusal asks each for every gram of the question, and most hold none.
        k = self._place(name) if isinstance(name, str) else -1
        return default if k < 0 else self._blob(k)

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and self._place(name) >= 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._listed[:-1].split("\n") if self._n else ())

    def __len__(self) -> int:
        return self._n


_END, _CRC = struct.Struct("=Q"), struct.Struct("=I")  # array("Q") and array("I") items, native order


def _blob_at(blobs: Region, ends: bytes, crcs: bytes, k: int) -> bytes:
    """Blob k of a region, from where each blob ends and each one's CRC-32 (packed as
    ends_and_blobs packs them), read in place."""
    start = _END.unpack_from(ends, 8 * (k - 1))[0] if k else 0
    return blobs.blob(start, _END.unpack_from(ends, 8 * k)[0], _CRC.unpack_from(crcs, 4 * k)[0])


# A listing this short is scanned rather than bisected (measured over 2,000 small bases: a
# scan of a few KB in C is a few hundred ns, a bisection of 100 names ~7 us of Python).
SCAN_BELOW = 8192
DICT_AFTER = 256  # names looked up in one Keyed before it makes a dict of them all


class Blobs(Sequence):
    """A cached sequence of blobs: where each ends and its CRC-32 (in the head), and the
    blobs end to end (a region)."""

    __slots__ = ("_ends", "_crcs", "_blobs", "_n")

    def __init__(self, ends: bytes, crcs: bytes, blobs: Region):
        self._blobs, self._ends, self._crcs = blobs, ends, crcs
        self._n = len(ends) // 8

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        if k < 0:
            k += self._n
        if not 0 <= k < self._n:
            raise IndexError(k)
        return _blob_at(self._blobs, self._ends, self._crcs, k)

    def __len__(self) -> int:
        return self._n


def keyed(values: Mapping) -> tuple[tuple[str, bytes, bytes, bytes], bytes] | None:
    """`values` (name -> value) as Keyed's head part (names, starts, ends, CRCs) and its
    region; None if a name holds a line break (a note's file name may): a cache holding one
    is not kept."""
    listed = sorted(values)
    if any("\n" in name for name in listed):
        return None
    ends, crcs, blobs = ends_and_blobs(encode(values[name]) for name in listed)
    starts = array("I", itertools.accumulate((len(name) + 1 for name in listed[:-1]), initial=0) if listed else ())
    return ("".join(name + "\n" for name in listed), starts.tobytes(), ends, crcs), blobs


def ends_and_blobs(blobs) -> tuple[bytes, bytes, bytes]:
    """Blobs as (where each ends, each one's CRC-32, the blobs end to end)."""
    blobs = list(blobs)
    return (array("Q", itertools.accumulate(len(b) for b in blobs)).tobytes(),
            array("I", [zlib.crc32(b) for b in blobs]).tobytes(), b"".join(blobs))


def is_keyed(v, region) -> bool:
    """Whether `v` is Keyed's head part for `region`: names, starts, ends and CRCs in step."""
    # Field by field, no generator: asked for each base's records and words, 4,000 times a
    # fresh hit over 2,000 small bases.
    if type(v) is not tuple or len(v) != 4:
        return False
    listed, starts, ends, crcs = v
    if not (type(listed) is str and type(starts) is bytes and type(ends) is bytes and type(crcs) is bytes):
        return False
    n, odd = divmod(len(ends), 8)
    return (not odd and len(starts) == 4 * n and len(crcs) == 4 * n and _ends_fit(ends, region)
            and listed.count("\n") == n and (not n or listed[-1] == "\n"))


def is_blobs(v, region) -> bool:
    return (type(v) is tuple and len(v) == 2 and type(v[0]) is bytes and type(v[1]) is bytes
            and len(v[0]) % 8 == 0 and len(v[1]) * 2 == len(v[0]) and _ends_fit(v[0], region))


def _ends_fit(ends: bytes, region) -> bool:
    if not isinstance(region, Region):
        return False
    # The last end, as array("Q") wrote it (native order): no array made per table checked.
    return (int.from_bytes(ends[-8:], sys.byteorder) if ends else 0) == region.length
