"""The suggester's prepared vocabulary, kept per base beside its index: a refusal's cost.

A question that matches nothing is answered with the keys spelled like its words
(engine/rank/suggest.py), found through a trigram index over every key's content words. Building
that index is a pass over every key of the fleet: 41,696 keys at 60,000 chunks, ~0.4 s, in
every fresh process that refuses (a `kb route` or `kb boot` that matched nothing was three
times a matching one). It depends on the index alone, so each base's part is kept at
`<base>/.kb/spelling.cache`, and a refusal reads it and looks up only its words' grams.

The parts are per base, as the opening cache is: a fleet is any set of bases, and
`suggest.Speller` merges their answers into the answer over all their keys.

Kept and trusted as the opening cache is (engine/index/catalogue_cache.py): keyed on the index
file's state that opening was read at (the key of an opening not kept is None, and then no
spelling is kept either) and on the source of the suggester, kb's own value layout behind
a magic line and this machine's signature (engine/index/sealedfile.py: each blob checked when read), read
O_NOFOLLOW, written atomically with no link followed; a file absent, damaged, foreign or of
another key is rebuilt (a blob found damaged when read, from the keys: `_Again`), one that
cannot be written is not kept. Written on the first refusal, not at indexing: a fleet that is never refused a
question never pays for it.

A fleet of many bases keeps one spelling for all of them instead (`fleet_spelling`), at
`<fleet root>/.kb/fleet-spelling.cache`: over 2,000 small bases a refusal opened 2,000 files
and looked up each of its grams in each (a binary search apiece), most of a refusal's time
and ~17 MiB. That file holds the spelling of every key of the fleet in entry order (what the
parts merged offer, engine/rank/suggest.py's Speller), stamped with a digest of each base's name,
cache and opening key (the index file's state): a base edited, re-indexed, added or removed
changes the stamp, and the file is prepared again from the keys and replaced. A fleet of
fewer than FLEET_FROM bases keeps its parts per base, as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

from ..rank import suggest as suggest_module
from .blobshape import TEXTS, shaped, within
from .opening_data import Opening
from .fleet_cache import FLEET_FROM, fleet_file, fleet_stamp, keep, writable_folder
from .sealedfile import Blobs, Damaged, Keyed, encode, ends_and_blobs, is_blobs, is_keyed, keyed, loads, open_shaped, seal, source_digest
from ..rank.suggest import Spelling, spelling_of

CACHE_NAME = "spelling.cache"
MAGIC = b"kb-spelling-cache\n"
FORMAT = 3  # 3: signed, kb's own value layout; 2: the blobs in regions, each checked by its own CRC (engine/index/sealedfile.py)
MAX_BYTES = 256 << 20  # grams, words and keys of one base's labels: a larger file is not ours

FLEET_CACHE_NAME = "fleet-spelling.cache"
FLEET_MAGIC = b"kb-fleet-spelling-cache\n"
FLEET_FORMAT = 2  # 2: signed, kb's own value layout (engine/index/sealedfile.py)
FLEET_MAX_BYTES = 1 << 30  # every base's keys: a larger file is not ours


def base_spelling(op: Opening, keys: Callable[[], Iterable[str]]) -> Spelling:
    """The base's spelling: from its cache when that was kept for this opening, else
    prepared from `keys` (the base's keys as written, in entry order) and kept."""
    path = os.path.join(os.path.dirname(op.where), CACHE_NAME) if op.where else ""
    key = (FORMAT, op.key, _SOURCE) if op.key is not None and path else None
    if key is not None:
        found = _load(path, key, keys)
        if found is not None:
            return found
    made = spelling_of(keys())
    if key is not None:
        _store(path, key, made)
    return made


def fleet_spelling(root: str, parts: Sequence[tuple[str, Opening]],
                   keys: Callable[[], Iterable[str]]) -> Spelling | None:
    """The spelling of every key of the fleet (`keys`, in entry order) from one file at the
    fleet root, prepared and kept when absent or stamped for other bases; None when the fleet
    is too small for one or a base's opening is not kept (then nothing vouches for its keys):
    the caller then merges the bases' parts."""
    if len(parts) < FLEET_FROM or not root or any(op.key is None or not op.where for _, op in parts):
        return None
    path = fleet_file(root, FLEET_CACHE_NAME)
    key = (FLEET_FORMAT, _SOURCE, fleet_stamp((name, op.where, op.key) for name, op in parts))
    found = _load(path, key, keys, FLEET_MAGIC, FLEET_MAX_BYTES)
    if found is not None:
        return found
    if not writable_folder(path):
        return None  # a fleet root that cannot be written: the bases' parts, which may be kept
    made = spelling_of(keys())
    _store(path, key, made, FLEET_MAGIC)
    return made


def _load(path: str, key: tuple, keys: Callable[[], Iterable[str]], magic: bytes = MAGIC,
          max_bytes: int = MAX_BYTES) -> Spelling | None:
    got = open_shaped(path, magic, max_bytes, key, 4, 3)
    if got is None:
        return None
    (_, by_gram, keys_of, written), regions = got
    if not (is_keyed(by_gram, regions[0]) and is_keyed(keys_of, regions[1]) and is_blobs(written, regions[2])):
        return None
    again = _Again(path, key, keys, magic)
    written = Blobs(*written, regions[2])
    n = len(written)
    # Each value as suggest.spelling_of makes it: a gram's words, a word's keys (each one of
    # the n written), a key's (normalised, as written); any other is read as damage.
    return Spelling(_Decoded(Keyed(*by_gram, regions[0]), path, lambda: again().by_gram, _is_words),
                    _Decoded(Keyed(*keys_of, regions[1]), path, lambda: again().keys_of,
                             lambda v: _is_places(v) and within(v, n)),
                    _Decoded(written, path, lambda: again().keys, _is_key))


def _store(path: str, key: tuple, made: Spelling, magic: bytes = MAGIC) -> None:
    by_gram, keys_of = keyed(made.by_gram), keyed(made.keys_of)
    if by_gram is None or keys_of is None:  # a word never holds a line break; refused all the same
        return
    *written, written_blobs = ends_and_blobs(encode(k) for k in made.keys)
    payload = (key, by_gram[0], keys_of[0], tuple(written))
    keep(path, seal(magic, payload, [by_gram[1], keys_of[1], written_blobs]))  # else prepared again next time


class _Again:
    """The spelling prepared again from the keys, once, when a blob of its file turns out
    damaged (each blob is checked when read); the damaged file is replaced."""

    def __init__(self, path: str, key: tuple, keys: Callable[[], Iterable[str]], magic: bytes):
        self._path, self._key, self._keys, self._magic = path, key, keys, magic
        self._made: Spelling | None = None

    def __call__(self) -> Spelling:
        if self._made is None:
            self._made = spelling_of(self._keys())
            _store(self._path, self._key, self._made, self._magic)
        return self._made


class _Decoded:
    """A cached mapping or sequence whose values are blobs, each decoded when first
    read and kept (absent names too): a review of thousands of misses asks the same grams
    again and again, and a name is found in a Keyed by a scan of its listing. A damaged blob
    is never decoded: the value comes from the spelling prepared again (`again`)."""

    __slots__ = ("_blobs", "_path", "_again", "_shaped", "_done")

    def __init__(self, blobs, path: str, again: Callable, shaped: Callable[[object], bool]):
        self._blobs, self._path, self._again, self._shaped = blobs, path, again, shaped
        self._done: dict = {}

    def get(self, name: str, default=None):
        got = self._done.get(name, _UNREAD)
        if got is _UNREAD:
            try:
                blob = self._blobs.get(name)
                got = None if blob is None else self._value(blob)
            except Damaged:
                got = self._again().get(name)
            self._done[name] = got
        return default if got is None else got

    def __getitem__(self, k):
        got = self._done.get(k, _UNREAD)
        if got is _UNREAD:
            try:
                got = self._value(self._blobs[k])
            except Damaged:
                got = self._again()[k]
            self._done[k] = got
        return got

    def _value(self, blob: bytes):
        value = loads(blob, self._path)
        if not self._shaped(value):
            raise Damaged(f"{self._path}: a value not of the shape kb writes")
        return value


_UNREAD = object()
_is_words, _is_places, _is_key = shaped(TEXTS), shaped([int]), shaped((str, str))
# The suggester's code (its trigrams, what a key's words are) and this file's: a kb that changed
# them never reads another version's grams. The normalising is in the opening's key.
_SOURCE = source_digest([suggest_module.__file__, __file__])
