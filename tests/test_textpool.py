"""The text leg's pool (engine/rank/textpool.py) is the definition: every base's matches, ordered by
score (best first) then id (base/path), the first `size` kept; and cutting it after each base,
as the one-shot leg does before a ceiling check, keeps the same pool."""

from __future__ import annotations

import random

from engine.rank.textpool import TextPool

# Names where one is the start of another, or sorts apart from its id: "a" < "a-b" as names,
# but "a-b/..." < "a/..." as ids ("-" is below "/").
NAMES = ["a", "a-b", "a.b", "ab", "a0", "b", "zed", "Z"]
PATHS = ["n.md", "a/n.md", "a-b.md", "x/y/z.md", "m.md", "a.md", "b/c.md", "0.md"]


def _base(rng: random.Random) -> tuple[list[str], list[float]]:
    """One base's matches as a base returns them: best first, ties by path."""
    paths = rng.sample(PATHS, rng.randint(0, len(PATHS)))
    scores = [rng.choice([1.0, 2.0, 2.5, 3.0, rng.random()]) for _ in paths]  # ties are common
    rows = sorted(zip(paths, scores), key=lambda r: (-r[1], r[0]))
    return [p for p, _ in rows], [s for _, s in rows]


def _definition(bases: dict[str, tuple[list[str], list[float]]], size: int) -> list[tuple[str, str, float]]:
    rows = [(name, p, s) for name, (paths, scores) in bases.items() for p, s in zip(paths, scores)]
    rows.sort(key=lambda r: (-r[2], f"{r[0]}/{r[1]}"))
    return rows[:size]


def test_the_pool_is_the_sorted_definition_cut_or_not():
    rng = random.Random(17)
    for _ in range(2_000):
        names = rng.sample(NAMES, rng.randint(1, len(NAMES)))
        bases = {name: _base(rng) for name in names}
        size = rng.choice([1, 3, 5, 50])
        whole, cut = TextPool(size), TextPool(size)
        for name in names:  # asked in any order
            paths, scores = bases[name]
            matches = object()
            whole.add(name, matches, paths, scores)
            cut.last_if_full()  # cut to the pool before each base, as before a ceiling check
            cut.add(name, matches, paths, scores)
        want = _definition(bases, size)
        for pool in (whole, cut):
            rows = pool.rows()
            assert [(name, path, score) for name, _, _, path, score in rows] == want
            # each row's place points at its own match in its base's list
            assert all(bases[name][0][k] == path for name, _, k, path, _ in rows)
        last = cut.last_if_full()
        assert last == (want[-1][2] if len(want) == size else None)


def test_an_answer_builds_the_hits_of_its_page_only(tmp_path):
    from conftest import copy_demo
    from engine.answer import TextHit
    from engine.memory import RANK_CANDIDATE_POOL, Memory
    from engine.index.textsearch import Fts5TextSearch

    fleet = copy_demo(tmp_path / "demo")
    mem = Memory(fleet)
    asked = 0
    for q in ["deploy rollback canary", "how much protein per meal", "quem decide se um deploy pode ir pra producao"]:
        answer = mem.ask(q, record_miss=False, top=2)
        text = answer.text
        built = sum(hit is not None for hit in text._built)
        assert built <= 2, q  # the page's rows at most, not the pool
        # Every hit, once read, is the one the bases' own matches make, in the pool's order.
        every = [TextHit(name, m.path, m.score, m.chunk) for name, idx in mem.indexes.items()
                 for m in Fts5TextSearch(idx).matches(list(answer.terms), RANK_CANDIDATE_POOL, q)]
        every.sort(key=lambda h: (-h.score, h.id))
        assert list(text) == every[:RANK_CANDIDATE_POOL] and text.ids() == [h.id for h in text]
        asked += len(text) > 2
    assert asked  # a pool larger than the page was asked


def test_the_text_fields_are_annotated_as_what_they_hold(tmp_path):
    # Answer.text and Reading.text hold the pool's TextHits (built as read), not a tuple: the
    # annotation says what a reader may rely on (a sequence), and a tuple it is not.
    from typing import get_origin, get_type_hints

    from conftest import copy_demo
    from engine.answer import Answer
    from engine.memory import Memory, Reading

    answer = Memory(copy_demo(tmp_path / "demo")).ask("deploy rollback canary", record_miss=False)
    assert not isinstance(answer.text, tuple)  # the premise: lazily built, no tuple
    for cls in (Answer, Reading):
        hint = get_type_hints(cls)["text"]
        assert isinstance(answer.text, get_origin(hint) or hint), cls
