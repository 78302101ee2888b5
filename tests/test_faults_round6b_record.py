"""Round 6b faults in `@record` (engine/shared/record.py), the stand-in for the frozen dataclass: each
test builds a class both ways and asserts what the dataclass does, which the record claims to do."""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from typing import ClassVar

import pytest

from engine.shared.record import as_dict, factory, fields, record


def test_a_subclass_redeclaring_a_field_gets_its_own_default():
    @record
    class Base:
        x: int
        y: int = 1

    @record
    class Child(Base):
        y: int = 2

    @dataclasses.dataclass(frozen=True)
    class BaseTwin:
        x: int
        y: int = 1

    @dataclasses.dataclass(frozen=True)
    class ChildTwin(BaseTwin):
        y: int = 2

    assert ChildTwin(0).y == 2
    assert Child(0).y == 2 and fields(Child) == ("x", "y")
    assert Base(0).y == 1  # the base keeps its own


def test_a_record_writing_its_own_eq_stays_hashable_as_a_frozen_dataclass_does():
    # Python sets __hash__ = None in a class body that defines __eq__; a frozen dataclass
    # still adds its hash over the fields, and a set of such answers must still be a set.
    @record
    class Own:
        x: int

        def __eq__(self, other):
            return isinstance(other, Own) and other.x == self.x

    @dataclasses.dataclass(frozen=True)
    class OwnTwin:
        x: int

        def __eq__(self, other):
            return isinstance(other, OwnTwin) and other.x == self.x

    assert hash(OwnTwin(1)) == hash((1,))
    assert hash(Own(1)) == hash((1,)) and len({Own(1), Own(1)}) == 1

    @record
    class Refused:
        x: int
        __hash__ = None  # written by the class: kept, as a dataclass keeps it

    with pytest.raises(TypeError):
        hash(Refused(1))


def test_a_mutable_default_is_refused_at_the_class_not_shared_by_every_instance():
    with pytest.raises(ValueError, match="mutable default"):
        @dataclasses.dataclass(frozen=True)
        class Twin:
            tags: list = []  # noqa: RUF012

    with pytest.raises(ValueError, match="mutable default <class 'list'> for field tags"):
        @record
        class Shared:
            tags: list = []  # noqa: RUF012  (every instance would hold the one list)

    @record
    class Made:
        tags: list = factory(list)

    assert Made().tags is not Made().tags



def test_a_classvar_is_not_a_field():
    @record
    class Counted:
        LIMIT: ClassVar[int] = 3
        x: int = 0

    @dataclasses.dataclass(frozen=True)
    class CountedTwin:
        LIMIT: ClassVar[int] = 3
        x: int = 0

    assert [f.name for f in dataclasses.fields(CountedTwin)] == ["x"]
    assert fields(Counted) == ("x",) and Counted.LIMIT == 3
    assert Counted(5) == Counted(x=5) and repr(Counted(5)).endswith("Counted(x=5)")



Point = namedtuple("Point", "line column")


def test_as_dict_reads_a_namedtuple_as_asdict_does():
    @record
    class Held:
        at: Point
        trail: tuple

    @dataclasses.dataclass(frozen=True)
    class HeldTwin:
        at: Point
        trail: tuple

    want = dataclasses.asdict(HeldTwin(Point(3, 4), (Point(1, 2),)))
    got = as_dict(Held(Point(3, 4), (Point(1, 2),)))
    assert got == want == {"at": (3, 4), "trail": ((1, 2),)}
    assert type(got["at"]) is Point and type(got["trail"][0]) is Point


def test_a_dataclass_base_is_refused_at_the_class_not_its_fields_dropped():
    # A record over a plain dataclass base once built an __init__ without the base's fields:
    # Child(x=1, y=2) raised, Child(y=2) had no x, and equality ignored x.
    @dataclasses.dataclass(frozen=True)
    class Base:
        x: int

    with pytest.raises(TypeError, match=r"@record Child: its base Base is a dataclass.*make Base a @record"):
        @record
        class Child(Base):
            y: int = 2

    @record
    class RecordBase:
        x: int

    @record
    class Carried(RecordBase):  # a record base: its fields come first, as a dataclass's do
        y: int = 2

    assert fields(Carried) == ("x", "y") and Carried(1).x == 1 and Carried(1) != Carried(3)

    class Plain:  # no fields of its own to carry: a mixin is fine
        def twice(self) -> int:
            return 2 * self.x

    @record
    class Mixed(Plain):
        x: int

    assert Mixed(4).twice() == 8
