"""Purpose fusion ("The rerank stage", "Fusion and purposes"): an integer, fully explained ordering
of the fused reading list's candidate pool. It re-orders passages only; the owner and the
verdict stay the keyword ranking's. Pure stdlib, never imports textual.
"""

from engine.purpose.errors import FusionError, FusionOptionError, FusionStampMismatch
from engine.purpose.stage import (
    Boost,
    Contribution,
    Fused,
    FusedRow,
    FusionOptions,
    PageStamp,
    PoolRow,
    order_pool,
    parse_options,
)
from engine.purpose.weights import DEFAULT_PURPOSE, PURPOSE_DEFAULT_ON, PURPOSE_NAMES, PURPOSES, Purpose, Weights

__all__ = [
    "Boost",
    "Contribution",
    "DEFAULT_PURPOSE",
    "Fused",
    "FusedRow",
    "FusionError",
    "FusionOptionError",
    "FusionOptions",
    "FusionStampMismatch",
    "PURPOSES",
    "PURPOSE_DEFAULT_ON",
    "PURPOSE_NAMES",
    "PageStamp",
    "PoolRow",
    "Purpose",
    "Weights",
    "order_pool",
    "parse_options",
]
