"""The engine's result types, and which of them are records.

The 31 classes a one-shot `kb route` or `kb boot` builds (RECORDS) are `@record`
(engine/shared/record.py): the class `@dataclass(frozen=True, slots=True)` makes, made without
importing `dataclasses`. Measured side by side on a fresh `kb route --json` at 60,000 chunks,
the dataclasses were 17% of its CPU (43 of 253 ms: the import with inspect, ast, dis and
tokenize, and six methods compiled per class), past issue 27's 10% (docs/decisions.md, "Records
on the one-shot path"). Every other result type is a plain `@dataclass(frozen=True, slots=True)`.

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
from engine.shared import record as record_module
from engine.shared.record import FrozenInstanceError

ENGINE = Path(__file__).resolve().parent.parent / "engine"
MUTABLE = {"engine.index.indexupdate.IndexReport"}  # filled in as an update runs: slotted, not frozen
# What a fresh route or boot builds (tests/test_engine_cli.py holds that it imports no dataclasses):
# a class added here must be on that path, and one on that path must be here.
RECORDS = {
    "engine.answer." + n for n in ("Passage", "KeywordHit", "TextHit", "Result", "Gate", "Confidence", "AgentTotal",
                                   "AgentChoice", "Indexed", "Miss", "Timings", "Answer")
} | {
    "engine.query.Query", "engine.memory.Routed", "engine.rank.covered.Coverage", "engine.rank.catalogue.Entry",
    "engine.rank.catalogue.Scored", "engine.rank.terms.Term", "engine.rank.steps.Reask", "engine.rank.steps.Reading",
    "engine.index.textsearch.TextMatch", "engine.index.notestore.FileRecord", "engine.index.notestore.ChunkRows",
    "engine.index.indexupdate.IndexReport", "engine.index.opening_data.Opening", "engine.index.snapshot.Snapshot",
    "engine.notes.fleet.Base", "engine.notes.fleet.Fleet", "engine.notes.aliases.Alias",
    "engine.review.boot.BootRequest", "engine.review.boot.Briefing",
}


def _decorated_classes():
    for path in sorted(ENGINE.rglob("*.py")):
        module = ".".join(path.relative_to(ENGINE.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                for dec in node.decorator_list:
                    name = ast.unparse(dec)
                    if name.startswith(("dataclass", "dataclasses.dataclass", "record")):
                        yield module, node.name, name


def test_the_records_are_the_one_shot_types_and_only_they():
    records = {f"{m}.{n}" for m, n, d in _decorated_classes() if d.startswith("record")}
    assert records == RECORDS
    assert not (ENGINE / "record.py").exists()  # one record, in engine/shared/


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_each_record_is_the_class_its_dataclass_would_be(name):
    module, _, attr = name.rpartition(".")
    cls = getattr(importlib.import_module(module), attr)
    assert "__slots__" in cls.__dict__ and "__dict__" not in cls.__dict__
    assert cls.__record_frozen__ == (name not in MUTABLE)
    # the dataclasses module reads it as its own (importing itself only when asked)
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen == (name not in MUTABLE)
    assert tuple(f.name for f in dataclasses.fields(cls)) == record_module.fields(cls)


@pytest.mark.parametrize("module,name", sorted({(m, n) for m, n, d in _decorated_classes() if "slots=True" in d}))
def test_each_slotted_result_type_is_a_dataclass_without_a_dict(module, name):
    cls = getattr(importlib.import_module(module), name)
    assert dataclasses.is_dataclass(cls)
    assert "__slots__" in cls.__dict__ and "__dict__" not in cls.__dict__
    assert cls.__dataclass_params__.frozen == (f"{module}.{name}" not in MUTABLE)


def test_a_result_reads_as_its_dataclass_does():
    miss = Miss("q", ("a/b.md",), "2026-12-01", "/x/kb-misses.txt", True)
    with pytest.raises(FrozenInstanceError):
        miss.question = "other"  # type: ignore[misc]
    assert dataclasses.asdict(miss) == record_module.as_dict(miss) == {
        "question": "q", "looked_like": ("a/b.md",), "date": "2026-12-01", "path": "/x/kb-misses.txt",
        "recorded": True, "error": None}
    choice = AgentChoice("zed", 2.0, 1, None, 1, (AgentTotal("zed", 2.0),))
    assert repr(choice) == ("AgentChoice(name='zed', score=2.0, files=1, margin=None, contenders=1, "
                            "totals=(AgentTotal(agent='zed', score=2.0, memory=0.0, skills=0.0, tools=0.0),), "
                            "chosen_by='fold', coverage=None, subject=None, reason=None, note=None)")
    assert dataclasses.replace(choice, chosen_by="classifier").chosen_by == "classifier"
    assert record_module.replace(choice, chosen_by="classifier") == dataclasses.replace(choice, chosen_by="classifier")
    assert hash(choice) == hash(dataclasses.replace(choice)) and choice == dataclasses.replace(choice)
    row = Result("zed", "a.md", "A", "", 1.0, 2.0, 1, None, "keywords #1", ("a",), "memory", (Passage("h", "t", "e"),))
    assert json.loads(json.dumps(dataclasses.asdict(row)))["passages"] == [{"heading_path": "h", "text": "t", "excerpt": "e"}]
    assert pickle.loads(pickle.dumps(row)) == row
