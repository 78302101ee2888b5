"""The cross-encoder rerank stage ("The rerank stage"): re-orders the fused reading list, never the verdict.

This package imports nothing heavy at import time; onnxruntime, tokenizers, onnx and numpy
load inside the functions that need them, so `import engine` stays fast.
"""

# What the package names is imported when first asked for (PEP 562): a process that never
# reranks (`kb route`, `kb boot`) imports none of the stage, and `import engine.stages.rerank.model`
# does not import the rest of it.

from __future__ import annotations

from engine.stages.lazynames import lazy_names

# The precisions a model is stored at, and each one's file. Defined here, not in model.py,
# so `kb route` builds its --rerank-precision choices without importing the stage.
PRECISIONS = {"fp32": "model.onnx", "int8": "model_int8.onnx"}

__getattr__ = lazy_names(__name__, {
    'engine.stages.rerank.errors': ('RerankBudgetExceeded', 'RerankCallerError', 'RerankError', 'RerankStampMismatch', 'RerankUnavailable'),
    'engine.stages.rerank.reading': ('RerankRequest',),
    'engine.stages.rerank.rule': ('RERANK_DEFAULT_BUDGET_MS', 'RERANK_DEFAULT_ON', 'RERANK_DEFAULT_TOPK_CEILING', 'RERANK_DEFAULT_TOPK_FLOOR', 'RERANK_TEXT_CAP_TOKENS', 'RERANK_TIE_BAND', 'RerankParams', 'default_rerank_params'),
    'engine.stages.rerank.stage': ('RerankOutcome', 'rerank_results', 'restamp', 'warm'),
})


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
