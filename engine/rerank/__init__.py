"""The cross-encoder rerank stage ("The rerank stage"): re-orders the fused reading list, never the verdict.

This package imports nothing heavy at import time; onnxruntime, tokenizers, onnx and numpy
load inside the functions that need them, so `import engine` stays fast.
"""

# These modules import nothing heavy at import time (a test pins it).
from .errors import (
    RerankBudgetExceeded,
    RerankCallerError,
    RerankError,
    RerankStampMismatch,
    RerankUnavailable,
)
from .reading import RerankRequest
from .rule import (
    RERANK_DEFAULT_BUDGET_MS,
    RERANK_DEFAULT_ON,
    RERANK_DEFAULT_TOPK_CEILING,
    RERANK_DEFAULT_TOPK_FLOOR,
    RERANK_TEXT_CAP_TOKENS,
    RERANK_TIE_BAND,
    RerankParams,
    default_rerank_params,
)
from .stage import RerankOutcome, rerank_results, restamp, warm

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
