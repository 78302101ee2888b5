"""The Query value: checked once, before any work, and carried on the Answer."""

from __future__ import annotations

import pytest

from engine import Memory, Query
from engine.errors import KbError
from engine.query import QueryError


@pytest.mark.parametrize(
    "options, named",
    [({"top": -1}, "top"), ({"offset": -3}, "offset"), ({"top": "5"}, "top"), ({"top": True}, "top"), ({"offset": 1.5}, "offset")],
)
def test_bad_values_are_one_line_refusals(options, named):
    with pytest.raises(QueryError) as e:
        Query("how much protein per meal", **options)
    assert isinstance(e.value, KbError) and named in str(e.value) and "\n" not in str(e.value)


def test_a_question_must_be_text():
    with pytest.raises(QueryError, match="question must be text"):
        Query(None)  # type: ignore[arg-type]


def test_lists_become_tuples_and_rerank_false_is_off():
    q = Query("x", near=["zed/index.md"], boosts=["species=skills:2"], rerank=False)
    assert q.near == ("zed/index.md",) and q.boosts == ("species=skills:2",) and q.rerank is None
    hash(q)  # a value: usable as a key


def test_the_answer_carries_its_query_and_both_spellings_agree(indexed_demo):
    mem = Memory(indexed_demo)
    query = Query("quem decide se um deploy pode ir pra producao", top=2, offset=1, record_miss=False)
    by_value = mem.ask(query)
    by_words = mem.ask(query.question, top=2, offset=1, record_miss=False)
    assert by_value.query == query == by_words.query
    assert by_value.to_json() == by_words.to_json() and len(by_value.results) == 2
    assert "query" not in by_value.to_json()  # the wire form did not move


def test_options_beside_a_query_are_refused(demo):
    with pytest.raises(QueryError, match="top"):
        Memory(demo).ask(Query("x"), top=3)


def test_a_bad_value_is_refused_before_any_work(demo):
    mem = Memory(demo, update=False)
    with pytest.raises(QueryError):
        mem.ask("how much protein per meal", top=-1)
    assert not (demo / "kb-misses.txt").exists() and not (demo / "zed" / ".kb").exists()


def test_window_reads_further_down_the_same_ordering(indexed_demo):
    mem = Memory(indexed_demo)
    page = mem.ask("deploy rollback database producao", top=2, record_miss=False)
    wide = mem.ask("deploy rollback database producao", top=6, record_miss=False)
    assert [r.id for r in mem.window(page, 6)] == [r.id for r in wide.results]


def test_the_keyword_ranking_is_what_answer_and_routed_say_it_is(indexed_demo):
    # Both were annotated tuple[KeywordHit, ...] while holding a KeywordHits (built when read):
    # a caller trusting the annotation (concatenating, isinstance tuple) would break.
    import typing

    from engine.answer import Answer
    from engine.memory import Routed

    answer = Memory(indexed_demo).ask("how much protein per meal", record_miss=False)
    declared = typing.get_type_hints(Answer)["keyword"]
    assert isinstance(answer.keyword, typing.get_origin(declared) or declared), (declared, type(answer.keyword))
    assert typing.get_type_hints(Routed)["keyword"] == declared
    assert answer.keyword and answer.keyword[0].id == answer.keyword_top
