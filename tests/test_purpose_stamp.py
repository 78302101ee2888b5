"""The per-base fusion stamp: written once, checked always, cured only by restamp."""

from __future__ import annotations

import json

import pytest

from engine.stages.purpose.errors import FusionStampMismatch
from engine.stages.purpose.stamp import build_stamp, check_stamp, diff_stamps, restamp, stamp_path


def test_the_first_fused_query_writes_the_stamp_and_later_ones_accept_it(tmp_path):
    assert not stamp_path(tmp_path).exists()
    first = check_stamp(tmp_path)
    on_disk = json.loads(stamp_path(tmp_path).read_text())
    assert on_disk == first and on_disk["conversation"]["weights"]["recency"] == 2500
    assert check_stamp(tmp_path) == first  # a second check reads, never rewrites
    assert [p.name for p in (tmp_path / ".kb").iterdir()] == ["fusion-stamp.json"]  # no temp left


def test_a_disagreement_refuses_naming_every_differing_field(tmp_path):
    check_stamp(tmp_path)
    path = stamp_path(tmp_path)
    stored = json.loads(path.read_text())
    stored["conversation"]["weights"]["recency"] = 2400
    stored["workspace"]["halfLifeMs"] = 1
    stored["normalization"]["graph"]["maxHops"] = 2
    del stored["textSource"]
    path.write_text(json.dumps(stored))
    with pytest.raises(FusionStampMismatch) as e:
        check_stamp(tmp_path)
    assert e.value.fields == (
        "conversation.weights.recency",
        "normalization.graph.maxHops",
        "textSource",
        "workspace.halfLifeMs",
    )
    msg = str(e.value)
    assert "conversation.weights.recency" in msg and "kb fusion restamp" in msg and "\n" not in msg
    # Still refusing: nothing re-stamps on its own.
    with pytest.raises(FusionStampMismatch):
        check_stamp(tmp_path)


def test_restamp_is_the_one_cure_and_returns_its_receipt(tmp_path):
    path = stamp_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(FusionStampMismatch) as e:
        check_stamp(tmp_path)
    assert e.value.fields == ("(unreadable stamp)",)
    receipt = restamp(tmp_path)
    assert diff_stamps(receipt, build_stamp()) == [] and receipt["stampedAtMs"] > 0
    assert check_stamp(tmp_path)["stampedAtMs"] == receipt["stampedAtMs"]


def test_diff_names_nested_paths_and_ignores_the_receipt_time():
    a = {"x": {"y": 1, "z": [1, 2]}, "stampedAtMs": 1}
    b = {"x": {"y": 1, "z": [1, 3]}, "stampedAtMs": 2, "new": True}
    assert diff_stamps(a, b) == ["new", "x.z"]
    assert diff_stamps({"v": 1}, {"v": 1.0}) == ["v"]
