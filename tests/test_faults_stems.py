"""Stems in the index against words Snowball takes to a stopword: `comer`, `come`, `comia`
("com"), `doses` ("dos"), `likely` ("like"). Indexed as the stopword, no question could reach
them (a question never asks for "com", which every Portuguese note holds). Through the real
index on disk."""

from __future__ import annotations

import pytest

from engine.memory import Memory
from engine.normalize import terms


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("stems") / "base"
    notes = root / "notes"
    notes.mkdir(parents=True)
    (notes / "gatos.md").write_text(
        "# Gatos\n\nO gato come peixe todos os dias. Quando o gato come, ele dorme depois.\n", encoding="utf-8")
    (notes / "cachorros.md").write_text(
        "# Cachorros\n\nO cachorro late com os carteiros e passeia com o dono.\n", encoding="utf-8")
    (notes / "odds.md").write_text(
        "# Odds\n\nThe outcome is likely but not certain; the team mostly ships on time.\n", encoding="utf-8")
    (notes / "deploy.md").write_text(
        "# Deploy\n\nRoll back the release like the runbook says when the error rate doubles.\n", encoding="utf-8")
    mem = Memory([str(root)])
    mem.snapshot()
    return next(iter(mem.indexes.values()))


@pytest.mark.parametrize("question, note", [
    ("o que o gato come", "notes/gatos.md"),
    ("quando ele comia", "notes/gatos.md"),  # the verb's family still meets
    ("comer", "notes/gatos.md"),
    ("likely", "notes/odds.md"),
    ("mostly", "notes/odds.md"),
])
def test_a_word_whose_stem_is_a_stopword_is_reachable(base, question, note):
    rows, _ = base.search(terms(question), 10, question)
    found = [r[0] for r in rows]
    assert found[:1] == [note], question
    # Not through the stopword: the note that only says "com" (with) is not found for "comer".
    assert "notes/cachorros.md" not in found
