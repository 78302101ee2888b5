"""The fixed rule, the tie band and the lean import: pure Python, no model."""

import subprocess
import sys
from pathlib import Path

import pytest

from engine.stages.rerank import (
    RERANK_DEFAULT_BUDGET_MS,
    RERANK_DEFAULT_ON,
    RERANK_DEFAULT_TOPK_CEILING,
    RERANK_DEFAULT_TOPK_FLOOR,
    RerankCallerError,
    default_rerank_params,
)
from engine.stages.rerank.rule import explicit_rerank_params
from engine.stages.rerank.stage import normalise_question, order_with_ties


def test_constants_are_the_seeds():
    assert RERANK_DEFAULT_ON is False
    assert (RERANK_DEFAULT_TOPK_FLOOR, RERANK_DEFAULT_TOPK_CEILING, RERANK_DEFAULT_BUDGET_MS) == (32, 128, 300)


@pytest.mark.parametrize(
    "limit,candidates,top_k",
    [(1, 200, 32), (10, 200, 32), (16, 200, 32), (17, 200, 34), (20, 200, 40), (40, 200, 80),
     (64, 200, 128), (100, 200, 128), (10, 5, 5), (10, 0, 0), (50, 90, 90)],
)
def test_fixed_rule_at_several_limits(limit, candidates, top_k):
    p = default_rerank_params(limit, candidates)
    assert p.top_k == top_k
    assert p.budget_ms == 300
    assert p.applied == "default"


@pytest.mark.parametrize("limit", [0, -3, True, 2.5, "10"])
def test_bad_limit_is_a_caller_error(limit):
    with pytest.raises(RerankCallerError, match="limit"):
        default_rerank_params(limit, 10)


def test_explicit_numbers_are_all_or_nothing():
    with pytest.raises(RerankCallerError, match="both top_k and budget_ms"):
        explicit_rerank_params(16, None, 50)
    with pytest.raises(RerankCallerError, match="top_k"):
        explicit_rerank_params(0, 100, 50)
    with pytest.raises(RerankCallerError, match="budget_ms"):
        explicit_rerank_params(8, -1, 50)
    p = explicit_rerank_params(64, 1000, 50)
    assert (p.top_k, p.budget_ms, p.applied) == (50, 1000.0, "explicit")


def test_ties_keep_the_given_order():
    # 0 and 1 are within 1e-3: the given order stands although 1 scored higher.
    assert order_with_ties([1.0, 1.0005, 0.5]) == [0, 1, 2]
    # A real gap re-orders.
    assert order_with_ties([1.0, 1.01, 0.5]) == [1, 0, 2]
    # Equal scores keep the given order, wherever they sit.
    assert order_with_ties([0.2, 0.9, 0.2, 0.9]) == [1, 3, 0, 2]
    assert order_with_ties([]) == []


def test_question_normalised_not_folded():
    assert normalise_question("  who  decides\n deploys ") == "who decides deploys"
    assert normalise_question("Who decides?") != normalise_question("who decides")


def test_import_stays_lean():
    code = (
        "import sys, engine, engine.cli, engine.stages.rerank, engine.stages.rerank.stage, engine.stages.rerank.stamp, kbtools.importer,"
        " engine.cli.rerank, engine.stages.rerank.reading, kbtools.rerank_bench, engine.stages.rerank.model, kbtools.graph;"
        "heavy = [m for m in ('onnxruntime', 'tokenizers', 'onnx', 'numpy', 'textual') if m in sys.modules];"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    assert out.stdout.strip() == ""


def test_lru_is_bounded_and_evicts_least_recently_used():
    from engine.stages.rerank.stage import CACHE_ENTRIES, _LRU

    assert CACHE_ENTRIES == 8192
    c = _LRU(3)
    for i in range(3):
        c.put(("k", str(i)), float(i))
    assert c.get(("k", "0")) == 0.0  # touch 0: now 1 is the least recently used
    c.put(("k", "3"), 3.0)
    assert len(c) == 3 and c.get(("k", "1")) is None and c.get(("k", "0")) == 0.0 and c.get(("k", "3")) == 3.0
