"""The engine's result types are plain `@dataclass(frozen=True, slots=True)` (they were a
hand-made record, engine/record.py, to save ~0.4 ms a class at import: docs/decisions.md).

Read over ast so that a new class decorated another way is found, then checked live: frozen,
slotted, repr, equality, hash, `replace` and `asdict` as the dataclass module gives them.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import pickle
from pathlib import Path

import pytest

from engine.answer import AgentChoice, AgentTotal, Miss, Passage, Result

ENGINE = Path(__file__).resolve().parent.parent / "engine"
MUTABLE = {"engine.index.indexupdate.IndexReport"}  # filled in as an update runs: slotted, not frozen


def _decorated_classes():
    for path in sorted(ENGINE.rglob("*.py")):
        module = ".".join(path.relative_to(ENGINE.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                for dec in node.decorator_list:
                    name = ast.unparse(dec)
                    if name.startswith(("dataclass", "dataclasses.dataclass", "record")):
                        yield module, node.name, name


def test_no_hand_made_record_is_left():
    assert not (ENGINE / "record.py").exists()
    assert not [c for c in _decorated_classes() if c[2].startswith("record")]


@pytest.mark.parametrize("module,name", sorted({(m, n) for m, n, d in _decorated_classes() if "slots=True" in d}))
def test_each_slotted_result_type_is_a_dataclass_without_a_dict(module, name):
    cls = getattr(importlib.import_module(module), name)
    assert dataclasses.is_dataclass(cls)
    assert "__slots__" in cls.__dict__ and "__dict__" not in cls.__dict__
    assert cls.__dataclass_params__.frozen == (f"{module}.{name}" not in MUTABLE)


def test_a_result_reads_as_its_dataclass_does():
    miss = Miss("q", ("a/b.md",), "2026-12-01", "/x/kb-misses.txt", True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        miss.question = "other"  # type: ignore[misc]
    assert dataclasses.asdict(miss) == {"question": "q", "looked_like": ("a/b.md",), "date": "2026-12-01",
                                        "path": "/x/kb-misses.txt", "recorded": True, "error": None}
    choice = AgentChoice("zed", 2.0, 1, None, 1, (AgentTotal("zed", 2.0),))
    assert repr(choice) == ("AgentChoice(name='zed', score=2.0, files=1, margin=None, contenders=1, "
                            "totals=(AgentTotal(agent='zed', score=2.0, memory=0.0, skills=0.0, tools=0.0),), "
                            "chosen_by='fold', coverage=None, subject=None, reason=None, note=None)")
    assert dataclasses.replace(choice, chosen_by="classifier").chosen_by == "classifier"
    assert hash(choice) == hash(dataclasses.replace(choice)) and choice == dataclasses.replace(choice)
    row = Result("zed", "a.md", "A", "", 1.0, 2.0, 1, None, "keywords #1", ("a",), "memory", (Passage("h", "t", "e"),))
    assert json.loads(json.dumps(dataclasses.asdict(row)))["passages"] == [{"heading_path": "h", "text": "t", "excerpt": "e"}]
    assert pickle.loads(pickle.dumps(row)) == row
