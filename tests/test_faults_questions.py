"""Faults, category 2: hostile questions. Every one gets an answer (often `nothing`), never
an exception; FTS5 syntax in a question is words, never query syntax; the miss log keeps one
line per question whatever the question holds."""

from __future__ import annotations

import itertools
import json
import re
import string
import time

import pytest

from _faults import DEPLOY_Q, kb, kb_json, projection, tree_hash
from conftest import copy_demo
from engine.memory import Memory
from engine.review.misses import misses_path, read_log
from engine.rank.question import MAX_QUESTION_CHARS


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return copy_demo(tmp_path_factory.mktemp("questions") / "demo")


@pytest.fixture(scope="module")
def mem(fleet):
    m = Memory(fleet)
    m.ask("warm up", record_miss=False)
    return m


def _ids(answer) -> list[str]:
    return [r.id for r in answer.results]


def _assert_nothing(a) -> None:
    assert a.verdict == "nothing" and not a.gate.served
    assert a.results == () and a.keyword == () and a.terms == ()


@pytest.mark.parametrize("q", ["", " ", "   \t\n\r  ", "\u00a0\u2003\u3000", "\n" * 1000])
def test_empty_and_whitespace_questions(mem, q):
    a = mem.ask(q)
    _assert_nothing(a)
    assert a.miss is None  # nothing was asked, so nothing was lost


@pytest.mark.parametrize(
    "q",
    [
        "what is the of a an to in on",  # English closed classes
        "quem é o que de para como quando onde",  # Portuguese closed classes
        "o a os as um uma do da no na pelo pela",
        "Who? When! Where... which, what; how:",
    ],
)
def test_questions_of_stopwords_only(mem, q):
    a = mem.ask(q, record_miss=False)
    _assert_nothing(a)
    assert a.suggestions == ()


@pytest.mark.parametrize("q", ["?", "!!!", "?!.,;:()[]{}<>@#$%^&*~`'\"|\\/+=-_", "¿¡«»—…·•", "🙂🙂🙂"])
def test_questions_of_punctuation_only(mem, q):
    _assert_nothing(mem.ask(q, record_miss=False))


def test_a_question_of_100000_characters(mem, fleet):
    words = ["".join(p) for p in itertools.product(string.ascii_lowercase + string.digits, repeat=3)]
    pasted = " ".join(words)[:100_000]  # 25,000 distinct words, the worst case for every loop
    t0 = time.monotonic()
    a = mem.ask(pasted, record_miss=False)
    assert time.monotonic() - t0 < 20
    # Cut at the stated length (engine/rank/question.py), and the answer says from how long.
    assert len(a.question) <= MAX_QUESTION_CHARS and pasted.startswith(a.question) and a.question_chars == 100_000
    assert mem.ask(pasted, record_miss=False).to_json() == a.to_json()
    repeated = (DEPLOY_Q + " ") * (100_000 // (len(DEPLOY_Q) + 1))
    b = mem.ask(repeated, record_miss=False)
    assert b.verdict == "hit" and b.keyword_top == "zed/knowledge/deploy-checklist.md"
    # Through the real command too: argv carries it, one line of JSON comes back.
    c = kb_json(pasted, fleet)
    assert c["question"] == a.question and c["verdict"] == a.verdict and c["question_cut"]["chars"] == 100_000


def test_a_long_question_that_misses_is_logged_as_one_line(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    m = Memory(fleet)
    q = " ".join(f"zq{i}x" for i in range(20_000))[:100_000]
    a = m.ask(q)
    assert a.verdict == "nothing" and a.miss is not None and a.miss.recorded
    entries = read_log(misses_path(m.fleet.root))
    assert len(entries) == 1 and entries[0].question == a.question and q.startswith(a.question)


# FTS5's own syntax, typed as a question: each must mean its words and nothing more.
FTS5_SYNTAX = [
    ('"', ""),
    ('"deploy', "deploy"),
    ('deploy"producao', "deploy producao"),
    ("*", ""),
    ("deploy*", "deploy"),
    ("NEAR(deploy producao)", "near deploy producao"),
    ("NEAR(deploy producao, 2)", "near deploy producao 2"),
    ("deploy AND producao", "deploy and producao"),
    ("deploy OR", "deploy or"),
    ("NOT deploy", "not deploy"),
    ("deploy NOT producao", "deploy not producao"),
    ("-deploy", "deploy"),
    ("deploy -producao", "deploy producao"),
    ("deploy:producao", "deploy producao"),
    ("body:deploy", "body deploy"),
    ("heading_path:deploy", "heading path deploy"),
    ("{body heading_path}: deploy", "body heading path deploy"),
    ("- body : deploy", "body deploy"),
    ("^deploy", "deploy"),
    ("chunks:deploy", "chunks deploy"),
    ("rank:1 bm25(chunks)", "rank 1 bm25 chunks"),
    ("deploy + producao", "deploy producao"),
    ("(deploy) (producao", "deploy producao"),
    ("'deploy' ''", "deploy"),
    ("NEAR/3 deploy", "near 3 deploy"),
]


@pytest.mark.parametrize("q,words", FTS5_SYNTAX, ids=[q for q, _ in FTS5_SYNTAX])
def test_fts5_syntax_in_a_question_is_words(mem, q, words):
    a = mem.ask(q, record_miss=False)
    b = mem.ask(words, record_miss=False)
    assert a.terms == b.terms
    assert _ids(a) == _ids(b) and [t.id for t in a.text] == [t.id for t in b.text]
    assert a.verdict == b.verdict


def test_no_operator_ever_reaches_fts5(mem):
    """`NOT deploy` still finds deploy notes; `deploy*` is not a prefix query (no `deploying`-only
    note turns up); the text leg is the same as for the bare words."""
    assert _ids(mem.ask("NOT deploy", record_miss=False))[:1] == ["zed/knowledge/deploy-checklist.md"]
    assert [t.id for t in mem.ask("deploy*", record_miss=False).text] == [
        t.id for t in mem.ask("deploy", record_miss=False).text
    ]


@pytest.mark.parametrize(
    "term", ['"', "*", "NEAR", "AND", "OR", "NOT", "-", ":", "body:x", "{body}", "^x", "(", ")", 'a"b', "\x00", "",
             "x\x00y", "NEAR(a b)", "'", "a*", "+"]
)
def test_the_text_index_quotes_raw_terms(mem, term):
    """Below the normaliser: whatever string reaches TextIndex.search is a literal phrase."""
    rows, sent = mem.indexes["zed"].search([term], 10)
    assert isinstance(rows, list)
    if term == "AND":  # the word "and", as any other stopword: left out of the index, no syntax
        assert rows == mem.indexes["zed"].search(["and"], 10)[0] == []


@pytest.mark.parametrize("q", ["deploy\x00producao", "\x00", "\x00\x00deploy\x00", "prod\x00ucao deploy"])
def test_nul_bytes_in_a_question(mem, q):
    """argv cannot carry a NUL, so this is the in-process surface (the reading room's input)."""
    a = mem.ask(q, record_miss=False)
    b = mem.ask(q.replace("\x00", " "), record_miss=False)
    assert a.terms == b.terms and _ids(a) == _ids(b) and a.verdict == b.verdict


def test_control_characters_in_a_missed_question_keep_the_log_one_line_each(tmp_path):
    fleet = copy_demo(tmp_path / "demo")
    m = Memory(fleet)
    nasty = [
        "satelite\x00geoestacionario", "satelite\ngeoestacionario\tcusto", "\x1b[2Jsatelite\r",
        "satelite\x85orbita", "satelite\u2028lancamento\u2029custo",  # str.splitlines() breaks at these too
    ]
    for _ in range(2):
        for q in nasty:
            a = m.ask(q)
            assert a.verdict == "nothing" and a.miss.recorded
    log = misses_path(m.fleet.root).read_text(encoding="utf-8")
    entry_lines = [ln for ln in log.splitlines() if re.match(r"^\d+\t", ln)]
    assert len(entry_lines) == len(nasty)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", log.replace("\t", "").replace("\n", ""))
    entries = read_log(misses_path(m.fleet.root))
    assert len(entries) == len(nasty) and all(e.count == 2 for e in entries)  # read back whole, counted


def test_hostile_questions_through_the_real_command(fleet):
    before = tree_hash(fleet)
    for q in ["", "   ", '"', "*", "NEAR(deploy producao)", "body:deploy", "deploy AND", "🙂", "o a os"]:
        a = kb_json(q, fleet)
        assert a["question"] == q
    # A question that starts with '-' is an option to argparse: one usage line, exit 2 ...
    r = kb("route", "-deploy", str(fleet), ok=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    # ... and after `--` it is a question like any other.
    a = json.loads(kb("route", "--json", "--", "-deploy", str(fleet)).stdout)
    assert projection(a)["results"] == projection(kb_json("deploy", fleet))["results"]
    assert tree_hash(fleet) == before
