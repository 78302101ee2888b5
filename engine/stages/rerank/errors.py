"""The rerank stage's refusals. Never a silent pass-through: each names its numbers and its cure."""

from __future__ import annotations

from typing import Any

from ...errors import KbError


class RerankError(KbError):
    """Base of every rerank refusal; `cure` says what to do about it. A KbError, so the CLI prints one line."""

    cure: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"error": type(self).__name__, "message": str(self), "cure": self.cure}


class RerankCallerError(RerankError, ValueError):
    """The call itself is malformed; refused before any work."""

    cure = "fix the call"


class RerankUnavailable(RerankError):
    """No usable model: missing, unreadable, or not a cross-encoder this stage can run."""

    def __init__(self, reason: str, path: str, detail: str, cure: str) -> None:
        self.reason = reason  # model-dir-unset | model-missing | model-unreadable | precision-missing | optimizer-unavailable
        # | stamp-unreadable | stamp-unwritable
        self.path = path
        self.cure = cure
        super().__init__(f"{path}: {detail} (cure: {cure})")


class RerankStampMismatch(RerankError):
    """The base was ordered by one cross-encoder and this process loaded another."""

    def __init__(self, stamp_path: str, stored: dict[str, Any], loaded: dict[str, Any], fields: list[str]) -> None:
        self.stamp_path = stamp_path
        self.stored = stored
        self.loaded = loaded
        self.fields = fields
        base = stamp_path.rsplit("/.kb/", 1)[0]
        self.cure = f"kb rerank restamp {base}"
        diffs = ", ".join(f"{f}: stamped {stored.get(f)!r}, loaded {loaded.get(f)!r}" for f in fields)
        super().__init__(f"{stamp_path}: stamped by another model ({diffs}); cure: {self.cure}")


class RerankBudgetExceeded(RerankError):
    """The stage would spend more than budget_ms; the un-reranked candidates come back with it."""

    cure = "serve the fused order (error.candidates) and say so, or pass a larger budget_ms"

    def __init__(
        self,
        *,
        k: int,
        pairs_scored: int,
        per_pair_ms: float,
        projected_ms: float,
        elapsed_ms: float,
        budget_ms: float,
        candidates: tuple[Any, ...],
        memo: bool = False,
    ) -> None:
        self.k = k
        self.pairs_scored = pairs_scored
        self.per_pair_ms = per_pair_ms
        self.projected_ms = projected_ms
        self.elapsed_ms = elapsed_ms
        self.budget_ms = budget_ms
        self.candidates = candidates  # the fused order, never served automatically
        self.memo = memo  # True when refused at once on a host already measured too slow
        why = "host already measured too slow" if memo else "over budget"
        super().__init__(
            f"rerank refused, {why}: k={k} pairs_scored={pairs_scored} per_pair_ms={per_pair_ms:.2f} "
            f"projected_ms={projected_ms:.1f} elapsed_ms={elapsed_ms:.1f} budget_ms={budget_ms:.0f}"
        )

    def numbers(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "pairs_scored": self.pairs_scored,
            "per_pair_ms": round(self.per_pair_ms, 3),
            "projected_ms": round(self.projected_ms, 1),
            "elapsed_ms": round(self.elapsed_ms, 1),
            "budget_ms": self.budget_ms,
            "memo": self.memo,
        }

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), **self.numbers()}
