"""The benchmark haystack: deterministic to the byte, exact in size, realistic in shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbtools.haystack import generate
from engine.memory import Memory


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def hay(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hay") / "h300"
    generate(root, 300, seed=3, bases=3, questions=40)
    return root


def test_same_seed_same_bytes(hay, tmp_path):
    again = tmp_path / "again"
    generate(again, 300, seed=3, bases=3, questions=40)
    a, b = _tree(hay), _tree(again)
    a.pop("haystack.json"), b.pop("haystack.json")  # it names the directory it was written to
    assert a == b
    other = tmp_path / "other"
    generate(other, 300, seed=4, bases=3, questions=40)
    assert _tree(other)["questions.tsv"] != a["questions.tsv"]


def test_it_refuses_to_write_over_a_folder_unless_asked(hay):
    with pytest.raises(FileExistsError):
        generate(hay, 300, seed=3, bases=3, questions=40)


def test_the_chunk_count_is_exact_as_the_index_counts_it(hay):
    info = json.loads((hay / "haystack.json").read_text())
    m = Memory(hay)
    m.snapshot()
    per_base = {name: idx.chunk_count() for name, idx in m.indexes.items()}
    assert sum(per_base.values()) == 300 == info["chunks"]
    assert per_base == info["bases"]
    assert len(per_base) == 3 and max(per_base.values()) >= 0.6 * 300  # one deep base
    assert m.snapshot().catalogue.n == info["entries"]


def test_the_notes_look_like_notes(hay):
    notes = [p.read_text(encoding="utf-8") for p in hay.rglob("*.md")]
    assert all(n.startswith("# ") for n in notes)
    assert sum("Search for:" in n or "Buscar por:" in n for n in notes) > len(notes) // 2
    assert sum("Search for:" not in n and "Buscar por:" not in n for n in notes) >= 1  # some text-only
    assert all("**Exists to:**" in n or "**Existe para:**" in n for n in notes)
    assert any("\n## " in n for n in notes) and any("\n### " in n for n in notes)
    assert any("ção" in n or "ã" in n for n in notes)  # Portuguese, accents and all
    species = {p.relative_to(hay).parts[1] for p in hay.rglob("*.md") if len(p.relative_to(hay).parts) > 2}
    assert {"knowledge", "protocols", "tools"} <= species
    assert (hay / "fleet.txt").is_file() and (hay / "kb-aliases.txt").is_file()


def test_questions_are_drawn_from_it_and_some_should_miss(hay):
    lines = [ln.split("\t") for ln in (hay / "questions.tsv").read_text(encoding="utf-8").splitlines()
             if ln and not ln.startswith("#")]
    assert len(lines) == 40
    misses = [q for q, a in lines if a == "-"]
    drawn = [(q, a) for q, a in lines if a != "-"]
    assert misses and drawn
    for _, a in drawn:
        base, path = a.split("/", 1)
        assert (hay / base / path).is_file()
    m = Memory(hay)
    for q in misses:
        ans = m.ask(q, record_miss=False)
        assert ans.verdict == "nothing" and not ans.text, q
    served = sum(m.ask(q, record_miss=False).gate.served for q, _ in drawn)
    assert served >= len(drawn) // 2
