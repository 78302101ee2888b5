"""Stems in the index against words Snowball takes to a stopword: `comer`, `come`, `comia`
("com"), `doses` ("dos"), `likely` ("like"). Indexed as the stopword, no question could reach
them (a question never asks for "com", which every Portuguese note holds). Through the real
index on disk."""

from __future__ import annotations

import pytest

from engine.memory import Memory
from engine.rank.normalize import terms


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


# An older (or newer) Snowball: here one that stems nothing, as a PyStemmer whose rules
# differ on every word. Put first on the path of the process that builds the index.
OTHER_STEMMER = '''
class Stemmer:
    def __init__(self, language):
        pass

    def stemWord(self, word):
        return word

    def stemWords(self, words):
        return list(words)
'''


def test_an_index_another_stemmer_wrote_is_rebuilt_with_this_ones_stems(demo, tmp_path):
    import json

    from conftest import REPO, copy_demo, run_kb

    shim = tmp_path / "other-stemmer"
    shim.mkdir()
    (shim / "Stemmer.py").write_text(OTHER_STEMMER, encoding="utf-8")
    built = run_kb("index", str(demo), env={"PYTHONPATH": f"{shim}:{REPO}"})
    assert built.returncode == 0, built.stderr
    fresh = copy_demo(tmp_path / "fresh")
    question = "what do the deploys check before production releases"

    def route(fleet):
        r = run_kb("route", question, str(fleet), "--json")
        assert r.returncode == 0, r.stderr
        return [(x["base"], x["path"], x["why"], x["score"]) for x in json.loads(r.stdout)["results"]]

    # The stems the index holds are this stemmer's, as a fresh index's are; before, the
    # other stemmer's stayed until a note changed, and the text leg found other notes.
    assert route(demo) == route(fresh)
    again = run_kb("index", str(demo))
    assert "rebuilt" not in again.stdout  # rebuilt once, not on every run


def test_a_cache_kept_under_another_stemmer_does_not_vouch_for_its_index(demo, tmp_path):
    """An opening cache lets a connection skip the index's checks (TextIndex.vouched): one
    kept by a process with another stemmer must not, or the other stemmer's stems stay."""
    import json

    from conftest import REPO, age_indexes, copy_demo, run_kb

    shim = tmp_path / "other-stemmer"
    shim.mkdir()
    (shim / "Stemmer.py").write_text(OTHER_STEMMER, encoding="utf-8")
    other = {"PYTHONPATH": f"{shim}:{REPO}"}
    question = "what do the deploys check before production releases"
    assert run_kb("index", str(demo), env=other).returncode == 0
    age_indexes(demo)
    kept = run_kb("route", question, str(demo), "--json", env=other)  # keeps its caches
    assert kept.returncode == 0, kept.stderr
    assert list(demo.glob("*/.kb/opening.cache"))
    fresh = copy_demo(tmp_path / "fresh")

    def route(fleet):
        r = run_kb("route", question, str(fleet), "--json")
        assert r.returncode == 0, r.stderr
        return [(x["base"], x["path"], x["why"], x["score"]) for x in json.loads(r.stdout)["results"]]

    assert route(demo) == route(fresh)
