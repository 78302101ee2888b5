"""Purpose fusion ("The rerank stage", "Fusion and purposes"): an integer, fully explained ordering
of the fused reading list's candidate pool. It re-orders passages only; the owner and the
verdict stay the keyword ranking's. Pure stdlib, never imports textual.
"""

# What the package names is imported when first asked for (PEP 562): a process that never
# fuses for a purpose (`kb route` without --purpose) imports none of the stage, and
# `import engine.stages.purpose.weights` does not import the rest of it.

from __future__ import annotations

from engine.stages.lazynames import lazy_names

# Off by default, like RERANK_DEFAULT_ON: turning it on would re-order every existing
# reading list at once, and that flips on a measured receipt, not on a hope. Defined here,
# not in weights.py, so Memory reads it on every question without importing the stage.
PURPOSE_DEFAULT_ON = False
# The purposes' names in their declared order (weights.PURPOSES, which checks it holds these),
# here so that a parser's --purpose choices do not import the stage's weights.
PURPOSE_NAMES: tuple[str, ...] = ("documents", "conversation", "workspace")

__getattr__ = lazy_names(__name__, {
    'engine.stages.purpose.errors': ('FusionError', 'FusionOptionError', 'FusionStampMismatch'),
    'engine.stages.purpose.stage': ('Boost', 'Contribution', 'Fused', 'FusedRow', 'FusionOptions', 'PageStamp', 'PoolRow', 'order_pool', 'parse_options'),
    'engine.stages.purpose.weights': ('DEFAULT_PURPOSE', 'PURPOSES', 'Purpose', 'Weights'),
})


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
