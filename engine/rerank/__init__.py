"""The cross-encoder rerank stage ("The rerank stage"): re-orders the fused reading list, never the verdict.

This package imports nothing heavy at import time; onnxruntime, tokenizers, onnx and numpy
load inside the functions that need them, so `import engine` stays fast.
"""

# What the package names is imported when first asked for (PEP 562): a process that never
# reranks (`kb route`, `kb boot`) imports none of the stage, and `import engine.rerank.model`
# does not import the rest of it.

from __future__ import annotations

import importlib
from typing import Any

# The precisions a model is stored at, and each one's file. Defined here, not in model.py,
# so `kb route` builds its --rerank-precision choices without importing the stage.
PRECISIONS = {"fp32": "model.onnx", "int8": "model_int8.onnx"}

_WHERE: dict[str, str] = {
    **dict.fromkeys(('RerankBudgetExceeded', 'RerankCallerError', 'RerankError', 'RerankStampMismatch', 'RerankUnavailable'), 'engine.rerank.errors'),
    **dict.fromkeys(('RerankRequest',), 'engine.rerank.reading'),
    **dict.fromkeys(('RERANK_DEFAULT_BUDGET_MS', 'RERANK_DEFAULT_ON', 'RERANK_DEFAULT_TOPK_CEILING', 'RERANK_DEFAULT_TOPK_FLOOR', 'RERANK_TEXT_CAP_TOKENS', 'RERANK_TIE_BAND', 'RerankParams', 'default_rerank_params'), 'engine.rerank.rule'),
    **dict.fromkeys(('RerankOutcome', 'rerank_results', 'restamp', 'warm'), 'engine.rerank.stage'),
}


def __getattr__(name: str) -> Any:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    return getattr(importlib.import_module(module), name)


__all__ = [
    "RERANK_DEFAULT_BUDGET_MS",
    "RERANK_DEFAULT_ON",
    "RERANK_DEFAULT_TOPK_CEILING",
    "RERANK_DEFAULT_TOPK_FLOOR",
    "RERANK_TEXT_CAP_TOKENS",
    "RERANK_TIE_BAND",
    "RerankBudgetExceeded",
    "RerankCallerError",
    "RerankError",
    "RerankOutcome",
    "RerankParams",
    "RerankRequest",
    "RerankStampMismatch",
    "RerankUnavailable",
    "default_rerank_params",
    "rerank_results",
    "restamp",
    "warm",
]
