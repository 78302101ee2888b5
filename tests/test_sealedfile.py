"""The caches' file format (engine/index/sealedfile.py): a name is found in a Keyed the same way by
a scan of a short listing, by binary search (a one-shot's few lookups in a long one) and by
the dict a long reader makes, and a blob is
read only as its bytes were written; damage is found before a blob is used."""

from __future__ import annotations

from engine.index.sealedfile import decode as _decode, encode as _encode
import random

import pytest

from engine.index import sealedfile
from engine.index.sealedfile import Blobs, Damaged, Keyed, ends_and_blobs, is_blobs, is_keyed, keyed, open_shaped, seal

MAGIC = b"kb-test-cache\n"


def _open(tmp_path, values: dict, items: list):
    head, region = keyed(values)
    *blob_head, blob_region = ends_and_blobs(_encode(v) for v in items)
    path = tmp_path / "test.cache"
    path.write_bytes(seal(MAGIC, (1, head, tuple(blob_head)), [region, blob_region]))
    (_, head, blob_head), regions = open_shaped(str(path), MAGIC, 1 << 30, 1, 3, 2)
    assert is_keyed(head, regions[0]) and is_blobs(blob_head, regions[1])
    return path, Keyed(*head, regions[0]), Blobs(*blob_head, regions[1])


@pytest.mark.parametrize("size", [0, 1, 2, 300, 3000])
def test_every_name_is_found_by_scan_binary_search_and_dict_alike(tmp_path, size, monkeypatch):
    rng = random.Random(size)
    letters = "abcé-/ zß1"
    names = {"".join(rng.choice(letters) for _ in range(rng.randint(1, 8))) for _ in range(size)}
    values = {n: [n, len(n)] for n in names}
    asked = sorted(names | {"", "a", "zzzz", "é", "-", "ab", "\x00", "a\nb", "\n"}
                   | {n + "x" for n in list(names)[:50]} | {n[1:] for n in list(names)[:50]}
                   | {f"{a}\n{b}" for a, b in zip(sorted(names)[:20], sorted(names)[1:21])})
    # a scan of the listing every time; binary search every time; a dict from the first name
    for scan_below, dict_after in ((10**9, 10**9), (-1, 10**9), (-1, 0)):
        monkeypatch.setattr(sealedfile, "SCAN_BELOW", scan_below)
        monkeypatch.setattr(sealedfile, "DICT_AFTER", dict_after)
        _, k, _ = _open(tmp_path, values, [])
        assert list(k) == sorted(names) and len(k) == len(names)
        for name in asked:
            got = k.get(name)
            assert (_decode(got) if got is not None else None) == values.get(name), name
            assert (name in k) == (name in values)


def test_a_blob_whose_bytes_changed_is_damaged_not_decoded(tmp_path):
    values = {f"w{i}": list(range(i)) for i in range(50)}
    items = [f"item {i}" for i in range(50)]
    path, k, b = _open(tmp_path, values, items)
    assert _decode(k["w7"]) == list(range(7)) and _decode(b[3]) == "item 3"
    raw = bytearray(path.read_bytes())
    raw[-3] ^= 0xFF  # inside the last item's blob
    path.write_bytes(bytes(raw))
    _, k, b = _open_damaged(path)
    assert _decode(b[3]) == "item 3"  # other blobs read as written
    with pytest.raises(Damaged):
        b[49]


def _open_damaged(path):
    (_, head, blob_head), regions = open_shaped(str(path), MAGIC, 1 << 30, 1, 3, 2)
    return path, Keyed(*head, regions[0]), Blobs(*blob_head, regions[1])


def test_blobs_read_in_place_index_as_a_list_does(tmp_path):
    items = [f"item {i}" * i for i in range(7)]
    _, _, b = _open(tmp_path, {}, items)
    assert len(b) == 7 and [_decode(x) for x in b] == items  # iteration stops at the end
    assert _decode(b[-1]) == items[-1] and [_decode(x) for x in b[2:5]] == items[2:5]
    for past in (7, -8):
        with pytest.raises(IndexError):
            b[past]
