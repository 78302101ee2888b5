"""Round 6b faults in `@record` (engine/record.py), the stand-in for the frozen dataclass: each
test builds a class both ways and asserts what the dataclass does, which the record claims to do."""

from __future__ import annotations

import dataclasses
from collections import defaultdict, namedtuple
from typing import ClassVar

import pytest

from engine.record import as_dict, factory, fields, record


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
