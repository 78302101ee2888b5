"""What a question reads of the bases' openings (engine/index/catalogue_cache.py), each value
decoded from the cache file's blob when first read: a base's records by path, and the keyword
catalogue over every base (the same entries, postings and scores to the bit as Catalogue).

An opening (catalogue_cache.Opening) is taken as it is handed in: this module imports no
cache module, so the cache imports it one way."""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..rank.catalogue import Catalogue, Entry
from .blobshape import NUMBER, OPTIONAL_INT, OPTIONAL_STR, TEXTS, firsts_within, shaped
from .notestore import FileRecord
from .sealedfile import Damaged, Region, loads


def decoded(op, get, fits: Callable[[object], bool] = lambda value: True):
    """`get(op)`, a record's, entry's, word's or the columns' value: decoded from the cache
    file's blob (checked first), or as read from the index (an opening that is not kept is
    never encoded at all). A blob whose bytes are damaged, or whose value `fits` refuses (not
    of the shape kb writes: a file sealed right by hand), is never used: the opening is read
    again from the index, the file replaced, and the value taken from there."""
    try:
        blob = get(op)
        if isinstance(blob, Region):
            value = blob.value()
        elif isinstance(blob, bytes):
            value = loads(blob, op.where)
        else:
            return blob
        if not fits(value):
            raise Damaged(f"{op.where}: a value not of the shape kb writes")
        return value
    except Damaged:
        if op.reread is None:
            raise
        return get(op.reread())


# The shapes of the values _read makes, as kept in the file (engine/index/blobshape.py).
_is_record = shaped((int, str, str, bool, str, str, TEXTS, str, OPTIONAL_INT, bool, OPTIONAL_INT, TEXTS, OPTIONAL_STR,
                     int, int, TEXTS, TEXTS))  # FileRecord's fields in order
_is_entry = shaped((str, (str, str, str, TEXTS, TEXTS, [(str, TEXTS)], TEXTS, TEXTS, TEXTS)))  # (path, opening_data.entry_row)
_is_columns = shaped((TEXTS, TEXTS))  # the entries' paths and species
_is_postings = shaped(([(int, bool, NUMBER, int)], [(int, str, TEXTS, str)]))  # as Catalogue makes them


def _is_word(value, entries: int) -> bool:
    """A word's postings and phrases, each pointing at one of the base's `entries`."""
    return _is_postings(value) and firsts_within(value[0], entries) and firsts_within(value[1], entries)


class Records(Mapping):
    """A base's records by path, each decoded when first read (a one-shot reads a handful)."""

    def __init__(self, op):
        self._op = op
        self._done: dict[str, FileRecord] = {}

    def __getitem__(self, path: str) -> FileRecord:
        rec = self._done.get(path)
        if rec is None:
            rec = self._done[path] = FileRecord(*decoded(self._op, lambda op: op.records[path], _is_record))
        return rec

    def __iter__(self) -> Iterator[str]:
        return iter(self._op.records)

    def __len__(self) -> int:
        return len(self._op.records)


class _Entries(Sequence):
    """Every base's entries in id order, each decoded when first read."""

    def __init__(self, parts: list[tuple[str, Any]]):
        self.parts = parts
        self.starts = []
        n = 0
        for _, op in parts:
            self.starts.append(n)
            n += len(op.entries)
        self._n = n
        self._done: dict[int, Entry] = {}

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        e = self._done.get(i)
        if e is None:
            if not 0 <= i < self._n:
                raise IndexError(i)
            b = bisect_right(self.starts, i) - 1
            base, op = self.parts[b]
            k = i - self.starts[b]
            path, row = decoded(op, lambda op: op.entries[k], _is_entry)  # a blob, or as read from the index
            title, purpose, species, keys, one, phrases, title_w, stem_w, purpose_w = row
            e = self._done[i] = Entry(
                base=base, path=path, title=title, purpose=purpose, species=species, keys=keys,
                one_word_keys=frozenset(one), phrases=phrases, title_words=frozenset(title_w),
                stem_words=frozenset(stem_w), purpose_words=frozenset(purpose_w),
            )
        return e


class _Words:
    """The fleet's inverted index, merged from each base's word by word when a question
    first asks for the word: postings, phrases and df (the entries whose vocabulary holds it,
    which is the length of its postings)."""

    def __init__(self, parts: list[tuple[str, Any]], starts: list[int]):
        self.parts = [(op, start) for (_, op), start in zip(parts, starts)]
        self._done: dict[str, tuple[list, list]] = {}

    def word(self, w: str) -> tuple[list, list]:
        got = self._done.get(w)
        if got is None:
            postings: list = []
            phrases: list = []
            for op, start in self.parts:
                got = decoded(op, lambda op: op.words.get(w), lambda v: _is_word(v, len(op.entries)))
                if got is None:
                    continue
                p, ph = got
                postings += [(start + i, k, o, m) for i, k, o, m in p]
                phrases += [(start + i, written, t, padded) for i, written, t, padded in ph]
            got = self._done[w] = (postings, phrases)
        return got


class _Postings:
    def __init__(self, words: _Words, which: int):
        self._words, self._which = words, which

    def get(self, w: str, default=None):
        found = self._words.word(w)[self._which]
        return found if found else default


class _Df:
    def __init__(self, words: _Words):
        self._words = words

    def get(self, w: str, default=None):
        n = len(self._words.word(w)[0])
        return n if n else default


class OpeningCatalogue(Catalogue):
    """The keyword catalogue over cached bases: the same entries in the same order, the same
    postings, the same scores to the bit as Catalogue(all entries), built in microseconds
    per base and decoded only for the words and entries a question touches."""

    def __init__(self, openings: Mapping[str, Any], fleet_root: str = ""):
        # Entries order by id, "base/path": bases in the order of "name/" (a base whose name
        # extends another's sorts by its next character against "/"), then paths in order.
        parts = sorted(openings.items(), key=lambda kv: kv[0] + "/")
        entries = _Entries(parts)
        words = _Words(parts, entries.starts)
        self.hold_index(entries, _Df(words), _Postings(words, 0), _Postings(words, 1))  # type: ignore[arg-type]
        self.parts = parts  # (base, its opening), in entry order
        self.fleet_root = fleet_root  # where a fleet of many bases keeps one spelling
        self._base_columns: dict[int, tuple] = {}
        self._speller = None
        self._columns: dict[str, list] = {}
        self._unfilled: dict[str, int] = {}
        self._filling = threading.Lock()

    def _value(self, name: str, i: int):
        """Entry i's id, base, species or group, from its base's columns: no entry decoded."""
        b = bisect_right(self.entries.starts, i) - 1
        base, op = self.parts[b]
        columns = self._base_columns.get(b)
        if columns is None:
            columns = self._base_columns[b] = decoded(
                op, lambda op: op.columns, lambda v: _is_columns(v) and len(v[0]) == len(v[1]) == len(op.entries))
        paths, species = columns
        k = i - self.entries.starts[b]
        if name == "ids":
            return f"{base}/{paths[k]}"  # Entry.id
        if name == "bases":
            return base
        return species[k] if name == "species" else self.group_id(base, species[k])

    def column(self, name: str, order: list[int]) -> list[str]:
        # Only the ranked entries are decoded (Catalogue holds the whole columns), and each
        # value is kept: the fold and the fusion read three columns of every ranked entry per
        # question, and decoding them each time was a third of a resident answer at 60,000 chunks.
        values = self._columns.get(name)
        if values is None:
            values = self._columns[name] = [None] * self.n
            self._unfilled[name] = self.n
        out = [values[i] for i in order]
        if self._unfilled[name] and None in out:
            with self._filling:  # the count says "all filled" only once every value is there
                for k, i in enumerate(order):
                    if out[k] is None:
                        if values[i] is None:
                            values[i] = self._value(name, i)
                            self._unfilled[name] -= 1
                        out[k] = values[i]
        return out
