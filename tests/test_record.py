"""`@record` behaves as the frozen dataclass it replaced on the route's path (engine/shared/record.py).

Each check builds the same class both ways and compares what a caller can see: the
constructor, equality, hash (set order follows it), repr, assignment refused, `replace`
(with `__post_init__` run again) and `as_dict`, and the real result types against their
dataclass twins.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import pytest

from engine.answer import AgentChoice, AgentTotal, Answer, Miss, Passage, Result, Timings
from engine.index.indexupdate import IndexReport
from engine.query import Query, QueryError
from engine.shared.record import FrozenInstanceError, as_dict, factory, fields, record, replace


@record
class Row:
    """A record with a default, a per-instance default and a nested record."""

    name: str
    score: float
    tags: tuple[str, ...] = ()
    extra: dict[str, Any] = factory(dict)
    passage: Passage | None = None


@dataclasses.dataclass(frozen=True)
class RowTwin:
    """The same fields as a frozen dataclass."""

    name: str
    score: float
    tags: tuple[str, ...] = ()
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    passage: Any = None


def test_construction_equality_and_hash_match_a_frozen_dataclass():
    a, b = Row("x", 1.5, ("k",)), Row(name="x", score=1.5, tags=("k",))
    assert a == b and a != Row("x", 2.0)
    twin = RowTwin("x", 1.5, ("k",))
    assert a != twin  # another class is never equal
    # the hash is the dataclass's (the fields as one tuple), so a set iterates in the same order
    TotalTwin = dataclasses.make_dataclass("AgentTotal", [("agent", str), ("score", float), ("memory", float, 0.0),
                                                          ("skills", float, 0.0), ("tools", float, 0.0)], frozen=True)
    assert hash(Passage("h", "t", "e")) == hash(("h", "t", "e"))
    assert hash(AgentTotal("zed", 1.0)) == hash(TotalTwin("zed", 1.0))
    assert [t.score for t in {AgentTotal("a", float(i) / 7) for i in range(40)}] == \
        [t.score for t in {TotalTwin("a", float(i) / 7) for i in range(40)}]
    with pytest.raises(TypeError):
        hash(a)  # a dict field: unhashable, as the dataclass is
    assert a.extra == {} and a.extra is not b.extra  # made per instance, as default_factory makes it
    assert repr(a).removeprefix("Row") == repr(twin).removeprefix("RowTwin")
    with pytest.raises(TypeError):
        Row("x")  # a field without a default is required
    with pytest.raises(TypeError):
        Row("x", 1.0, nope=1)


def test_assignment_is_refused_as_a_frozen_dataclass_refuses_it():
    a = Row("x", 1.0)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'score'"):
        a.score = 2.0
    with pytest.raises(AttributeError):
        del a.name
    assert a.score == 1.0


def test_replace_and_as_dict_give_what_dataclasses_gave():
    p = Passage("Heading", "text", "excerpt")
    a = Row("x", 1.0, ("k",), {"w": [1, 2]}, p)
    twin = RowTwin("x", 1.0, ("k",), {"w": [1, 2]}, {"heading_path": "Heading", "text": "text", "excerpt": "excerpt"})
    assert as_dict(a) == dataclasses.asdict(twin)
    assert as_dict(a)["extra"] is not a.extra  # dicts are copied, as asdict copies them
    b = replace(a, score=3.0)
    assert b == Row("x", 3.0, ("k",), {"w": [1, 2]}, p) and a.score == 1.0
    assert fields(Row) == ("name", "score", "tags", "extra", "passage") == fields(a)
    with pytest.raises(TypeError):
        replace(a, nope=1)
    with pytest.raises(TypeError):
        as_dict(twin)  # a dataclass is not a record


def test_replace_runs_post_init_again():
    q = Query("a question", near=["zed/a.md"])
    assert q.near == ("zed/a.md",)  # __post_init__ ran
    assert replace(q, near=["b.md"]).near == ("b.md",)
    with pytest.raises(QueryError):
        replace(q, top=-1)


def test_a_mutable_record_is_unhashable_and_assignable():
    r = IndexReport("zed")
    r.files += 2
    assert r.files == 2 and r.skipped == [] and r.skipped is not IndexReport("zed").skipped
    assert r == IndexReport("zed", files=2) and r != IndexReport("zed")
    with pytest.raises(TypeError):
        hash(r)


def test_the_route_types_read_as_their_dataclass_twins():
    """Every record of engine/answer.py against a frozen dataclass with the same fields:
    positional order, defaults, repr, and the JSON an answer carries."""
    for cls in (Passage, AgentTotal, AgentChoice, Miss, Timings, Result, Answer):
        twin = dataclasses.make_dataclass(cls.__name__, fields(cls), frozen=True)
        assert [f.name for f in dataclasses.fields(twin)] == list(fields(cls))
    miss = Miss("q", ("a/b.md",), "2026-12-01", "/x/kb-misses.txt", True)
    assert as_dict(miss) == {"question": "q", "looked_like": ("a/b.md",), "date": "2026-12-01",
                             "path": "/x/kb-misses.txt", "recorded": True, "error": None}
    choice = AgentChoice("zed", 2.0, 1, None, 1, (AgentTotal("zed", 2.0),))
    assert repr(choice) == ("AgentChoice(name='zed', score=2.0, files=1, margin=None, contenders=1, "
                            "totals=(AgentTotal(agent='zed', score=2.0, memory=0.0, skills=0.0, tools=0.0),), "
                            "chosen_by='fold', coverage=None, subject=None, reason=None, note=None)")
    assert replace(choice, chosen_by="classifier").chosen_by == "classifier" and choice.chosen_by == "fold"
    row = Result("zed", "a.md", "A", "", 1.0, 2.0, 1, None, "keywords #1", ("a",), "memory", (Passage("h", "t", "e"),))
    assert json.loads(json.dumps(as_dict(row)))["passages"] == [{"heading_path": "h", "text": "t", "excerpt": "e"}]
    assert pickle.loads(pickle.dumps(row)) == row
