"""The fixed rule ("The rerank stage"): what a default rerank does is a function of the request alone.

No core count, no measured throughput, no adaptive K: hardware may change the wait, never
the answer. A host that cannot finish inside the budget refuses by name with its numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import RerankCallerError

# Off until the receipt exists: K=32 at the fleet's row lengths inside the budget, measured
# as p95 on the slowest host that serves ("The rerank stage", "The switch, and the receipt that flips it").
RERANK_DEFAULT_ON = False
# 2 x limit with a floor of 32: a re-order that cannot reach past its page promotes nothing into it.
RERANK_DEFAULT_TOPK_FLOOR = 32
# One call scores at most this many pairs; the LRU cache is sized from it (64 full calls).
RERANK_DEFAULT_TOPK_CEILING = 128
# The scoring wall; the one-time model load is not charged to it.
RERANK_DEFAULT_BUDGET_MS = 300
# Whatever text a row is scored on is cut to its first 128 tokens by the model's own tokenizer.
RERANK_TEXT_CAP_TOKENS = 128
# Logits within this of each other are a tie and keep the fused order (f32 blocking noise).
RERANK_TIE_BAND = 1e-3


@dataclass(frozen=True)
class RerankParams:
    top_k: int
    budget_ms: float
    applied: str  # "default" for the fixed rule, "explicit" for numbers a caller passed


def default_rerank_params(limit: int, candidate_count: int) -> RerankParams:
    """topK = min(candidates, max(32, 2 x limit)) capped at 128; budgetMs = 300."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise RerankCallerError(f"limit must be a positive integer, got {limit!r}")
    if isinstance(candidate_count, bool) or not isinstance(candidate_count, int) or candidate_count < 0:
        raise RerankCallerError(f"candidate_count must be a non-negative integer, got {candidate_count!r}")
    top_k = min(candidate_count, max(RERANK_DEFAULT_TOPK_FLOOR, 2 * limit), RERANK_DEFAULT_TOPK_CEILING)
    return RerankParams(top_k=top_k, budget_ms=float(RERANK_DEFAULT_BUDGET_MS), applied="default")


def explicit_rerank_params(top_k: object, budget_ms: object, candidate_count: int) -> RerankParams:
    """Both numbers or neither: together they are what makes the stage's promise checkable."""
    if top_k is None or budget_ms is None:
        raise RerankCallerError(
            "an explicit rerank needs both top_k and budget_ms (or neither, for the fixed rule)"
        )
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise RerankCallerError(f"top_k must be a positive integer, got {top_k!r}")
    if isinstance(budget_ms, bool) or not isinstance(budget_ms, (int, float)) or not budget_ms > 0:
        raise RerankCallerError(f"budget_ms must be a positive number of milliseconds, got {budget_ms!r}")
    return RerankParams(top_k=min(top_k, candidate_count), budget_ms=float(budget_ms), applied="explicit")
