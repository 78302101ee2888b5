"""Round 7 faults in kb's own caches: a file sealed exactly as kb seals it (magic, head and
every CRC-32 right) whose values are not of the shape kb writes. Anyone who can write the
fleet can write `.kb`; such a file must be read as damaged and rebuilt, never handed to a
constructor or an unpacking that raises a traceback.

Real parts only: the demo fleet copied to tmp, indexed and asked by the real `kb` in a
subprocess; the hostile file is made with the seal kb itself writes."""

from __future__ import annotations

from engine.index.sealedfile import decode as _decode, encode as _encode
from array import array
from pathlib import Path

import pytest

from _faults import DEPLOY_Q, NOTHING_Q, kb_json
from conftest import index_aged, sealed_parts
from engine.index import catalogue_cache, spelling_cache
from engine.index.blobshape import NUMBER, OPTIONAL_STR, TEXTS, shaped
from engine.index.sealedfile import ends_and_blobs, keyed, seal


def _keyed_values(head: tuple, region: bytes) -> dict:
    """A Keyed part (names, starts, ends, CRCs) and its region, as name -> value."""
    names = head[0].split("\n")[:-1]
    return dict(zip(names, _split(head[2], region)))


def _split(ends_raw: bytes, region: bytes) -> list:
    ends = array("Q")
    ends.frombytes(ends_raw)
    out, start = [], 0
    for end in ends:
        out.append(_decode(region[start:end]))
        start = end
    return out


def _reseal_opening(path: Path, part: str, bad: object) -> None:
    """The opening cache at `path` sealed again, soundly, with every value of `part` `bad`."""
    payload, regions = sealed_parts(path.read_bytes())
    payload = list(payload)
    known, columns = _decode(regions[0]), _decode(regions[4])
    records = _keyed_values(payload[5], regions[1])
    entries = _split(payload[6][0], regions[2])
    words = _keyed_values(payload[7], regions[3])
    if part == "records":
        records = dict.fromkeys(records, bad)
    elif part == "entries":
        entries = [bad] * len(entries)
    elif part == "entry rows":
        entries = [(path_, bad) for path_, _ in entries]
    elif part == "words":
        words = dict.fromkeys(words, bad)
    elif part == "columns":
        columns = bad
    records_head, records_region = keyed(records)
    words_head, words_region = keyed(words)
    *entries_head, entries_region = ends_and_blobs(_encode(e) for e in entries)
    payload[5], payload[6], payload[7] = records_head, tuple(entries_head), words_head
    regions = [_encode(known), records_region, entries_region, words_region, _encode(columns)]
    path.write_bytes(seal(catalogue_cache.MAGIC, tuple(payload), regions))


def _reseal_spelling(path: Path, part: str, bad: object) -> None:
    payload, regions = sealed_parts(path.read_bytes())
    key, by_gram, keys_of = payload[0], _keyed_values(payload[1], regions[0]), _keyed_values(payload[2], regions[1])
    written = _split(payload[3][0], regions[2])
    if part == "grams":
        by_gram = dict.fromkeys(by_gram, bad)
    elif part == "words":
        keys_of = dict.fromkeys(keys_of, bad)
    else:
        written = [bad] * len(written)
    grams_head, grams_region = keyed(by_gram)
    words_head, words_region = keyed(keys_of)
    *written_head, written_region = ends_and_blobs(_encode(k) for k in written)
    path.write_bytes(seal(spelling_cache.MAGIC, (key, grams_head, words_head, tuple(written_head)),
                          [grams_region, words_region, written_region]))


MISSPELT_Q = "refatorrar arquitetra"  # refused, and offered zed's keys spelled like it


@pytest.fixture
def cached(demo):
    """The demo indexed, aged, and asked once each way: every base keeps its opening and
    spelling caches, read (not rebuilt) by the next process."""
    index_aged(demo)
    answers = {q: kb_json(q, demo) for q in (DEPLOY_Q, NOTHING_Q, MISSPELT_Q)}
    assert (demo / "zed" / ".kb" / spelling_cache.CACHE_NAME).is_file()
    assert "refatorar" in answers[MISSPELT_Q]["suggestions"]  # offered from zed's spelling
    return demo, answers


# Values of the wrong arity, of the wrong types, and of the right types pointing out of range.
OPENING_DAMAGE = [
    ("records", (1, 2)), ("records", ("x",) * 16), ("entries", (1, 2)), ("entries", 7),
    ("entry rows", (1, 2)), ("entry rows", ("t", "p", "s", 5, (), (), (), (), ())),
    ("words", (1, 2)), ("words", ([(0, "x")], [])), ("words", ([(10**6, False, 1.0, 4)], [])),
    ("columns", (1, 2)), ("columns", ((), ())),
]


@pytest.mark.parametrize("part,bad", OPENING_DAMAGE, ids=[f"{p}-{b!r}"[:40] for p, b in OPENING_DAMAGE])
def test_an_opening_cache_sealed_right_with_values_of_another_shape_is_rebuilt(cached, part, bad):
    demo, answers = cached
    path = demo / "zed" / ".kb" / catalogue_cache.CACHE_NAME
    _reseal_opening(path, part, bad)
    hostile = path.read_bytes()
    for q, expected in answers.items():
        got = kb_json(q, demo)  # no traceback, exit 0
        assert got["results"] == expected["results"] and got["agent"] == expected["agent"]
    assert path.read_bytes() != hostile  # replaced by what the index holds


# The head's own fields (payload index, value), sealed right: the stale check's skipped lines
# and a small base's vocabulary (a row count, then "token rows" a line), read on every route.
HEAD_DAMAGE = [
    (3, (1,)), (3, ("x", None)), (8, (7,)), (10, "many\ndeploy 3\nproducao 2\n"), (10, "12\ndeploy x\nproducao\n"),
    (2, {"a.md": 5}), (2, {7: "1:2"}),
]


@pytest.mark.parametrize("field,bad", HEAD_DAMAGE, ids=[f"{f}-{b!r}"[:40] for f, b in HEAD_DAMAGE])
def test_an_opening_cache_sealed_right_with_a_head_of_another_shape_is_not_read(cached, field, bad):
    demo, answers = cached
    path = demo / "zed" / ".kb" / catalogue_cache.CACHE_NAME
    payload, regions = sealed_parts(path.read_bytes())
    payload = list(payload)
    payload[field] = bad
    path.write_bytes(seal(catalogue_cache.MAGIC, tuple(payload), regions))
    for q, expected in answers.items():
        got = kb_json(q, demo)  # no traceback, exit 0
        assert got["results"] == expected["results"] and got["agent"] == expected["agent"]


SPELLING_DAMAGE = [
    ("grams", (1, 2)), ("grams", "abc"), ("words", ("a",)), ("words", (10**6,)),
    ("keys", (1, 2)), ("keys", ("one",)),
]


@pytest.mark.parametrize("part,bad", SPELLING_DAMAGE, ids=[f"{p}-{b!r}" for p, b in SPELLING_DAMAGE])
def test_a_spelling_cache_sealed_right_with_values_of_another_shape_is_rebuilt(cached, part, bad):
    demo, answers = cached
    path = demo / "zed" / ".kb" / spelling_cache.CACHE_NAME
    _reseal_spelling(path, part, bad)
    hostile = path.read_bytes()
    got = kb_json(MISSPELT_Q, demo)  # no traceback, exit 0
    assert got["suggestions"] == answers[MISSPELT_Q]["suggestions"]
    assert path.read_bytes() != hostile


def test_a_shape_refuses_one_wrong_value_anywhere_in_it():
    postings = shaped([(int, bool, NUMBER, int)])
    good = [(k, k % 2 == 0, 1.5 if k % 3 else 2, k) for k in range(500)]
    assert postings(good) and postings([]) and postings(tuple(good))
    for bad in [(250, "x", 1.0, 3), (250, True, 1.0), (250, True, 1.0, 3, 4), (True, True, 1.0, 3), [250, True, 1.0, 3]]:
        assert not postings(good[:250] + [bad] + good[251:]), bad
    record = shaped((int, OPTIONAL_STR, TEXTS, [(str, TEXTS)]))
    assert record((1, None, ("a", "b"), [("k", ("a",))])) and record((1, "t", [], ()))
    for bad in [(True, None, (), ()), (1, None, ("a", 2), ()), (1, None, (), [("k", ("a", None))]), (1, None, ()),
                [1, None, (), ()], (1, None, "ab", ())]:
        assert not record(bad), bad
