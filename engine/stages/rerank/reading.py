"""The rerank stage applied to Memory's answer: the one seam between the two.

Memory answers first (the fused reading list, painted at once); this takes the rule's window
of that same ordering from `Memory.window` (no second asking), re-scores it with the cross-encoder, and hands back the
answer with its page re-ordered and `stages["rerank"]` stamped. The owner, the verdict and
which rows the page holds are never touched: the window reaches past the page (2 x limit) so
the re-order can promote into it, and the page keeps its size.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataclasses import replace
from .errors import RerankBudgetExceeded, RerankCallerError
from .model import PRECISIONS
from .rule import RERANK_DEFAULT_TOPK_CEILING, default_rerank_params
from .stage import rerank_results, resolve_model_dir, warm


@dataclass(frozen=True)
class RerankRequest:
    """How to rerank: `rerank=True` on Memory.ask means RerankRequest() (fp32, passage text)."""

    model: str | os.PathLike[str] | None = None  # else $KB_RERANK_MODEL, else fleet.txt rerank_model
    precision: str = "fp32"  # "int8" is opt-in by name and is stamped as such
    use_summary: bool = False  # score on the note's `Exists to:` line when it has one

    @classmethod
    def of(cls, value: Any) -> "RerankRequest | None":
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, cls):
            if value.precision not in PRECISIONS:
                raise RerankCallerError(f"rerank precision must be one of {sorted(PRECISIONS)}, got {value.precision!r}")
            return value
        # A dict of numbers (topK, budget) is refused by name: the fixed rule is the only rule here.
        raise RerankCallerError(f"rerank must be True, False or a RerankRequest, got {value!r}")


def model_dir_for(settings: Any, fleet_root: str | os.PathLike[str], request: RerankRequest) -> Path:
    """The request's model, else $KB_RERANK_MODEL, else fleet.txt's `rerank_model` (relative to the fleet root)."""
    path = resolve_model_dir(request.model, settings)
    if request.model is None and not os.environ.get("KB_RERANK_MODEL") and not path.is_absolute():
        path = Path(fleet_root) / path
    return path


def rerank_answer(memory: Any, answer: Any, request: Any = True, *, top: int | None = None) -> Any:
    """`answer` with its reading list re-ordered by the cross-encoder; raises the stage's refusals.

    The window is `memory.window(answer, k)`: the same ordering the page came from (the
    Query the answer carries), re-read from the answer's rankings, so the question is scored
    once. `top` is the page size the rule sizes the window for; default the answer's own.
    """
    req = RerankRequest.of(request)
    if req is None:
        return answer
    page = len(answer.results)
    if top is None:
        top = answer.query.top if answer.query is not None else page
    limit = max(top, 1)
    window = default_rerank_params(limit, RERANK_DEFAULT_TOPK_CEILING).top_k
    wide = memory.window(answer, max(window, page))
    bases = {b.name: b.root for b in memory.fleet.bases}
    try:
        outcome = rerank_results(
            answer.question, wide, limit, model_dir_for(memory.settings, memory.fleet.root, req), bases,
            use_summary=req.use_summary, precision=req.precision,
        )
    except RerankBudgetExceeded as e:
        e.candidates = answer.results  # the page the caller was handed, in its fused order
        raise
    results = outcome.results[:page]
    if answer.query is not None and not answer.query.with_passages:
        # The stage needed the text; the caller asked without it: hand the page back in its shape.
        results = tuple(replace(r, passages=()) for r in results)
    return replace(answer, results=results, stages={**answer.stages, "rerank": outcome.stamp})


def warm_for(memory: Any, request: Any = True) -> dict[str, Any]:
    """Pay the cross-encoder's one-time load for this fleet up front (a reading room at start-up)."""
    req = RerankRequest.of(request) or RerankRequest()
    return warm(model_dir_for(memory.settings, memory.fleet.root, req), req.precision)
