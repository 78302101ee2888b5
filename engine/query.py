"""Query: one question and how to answer it, checked once, carried on the Answer.

Every option of `Memory.ask` lives here, so a surface builds one value and hands it on (the
reading room keeps one, `kb route` makes one from its flags) instead of re-passing options
by hand, and a stage that needs to know how the page was asked (the rerank's wider window)
reads it from `answer.query`. Bad values are refused here, before any work, in one line.
What needs the fleet to check (a `near` note that does not exist) is checked by the purpose
stage when Memory starts the answer.
"""

from __future__ import annotations

from typing import Any

from .errors import KbError
from .shared.record import record, replace

DEFAULT_TOP = 5


class QueryError(KbError, ValueError):
    """An option of a question that can never be right (a negative page, a word for a number)."""


@record
class Query:
    """One question and how to answer it, checked once."""

    question: str
    top: int = DEFAULT_TOP  # rows on the page
    offset: int = 0  # where the page starts in the one ordering
    purpose: str | bool | None = None  # documents | conversation | workspace; False = off; None = the default
    near: tuple[str, ...] | None = None  # purpose anchors: "base/path" ids or note paths
    boosts: tuple[Any, ...] = ()  # purpose boost rules, "field=value:amount" or parsed
    rerank: Any = None  # None, or an engine.stages.rerank.reading.RerankRequest (True/False accepted and normalised)
    record_miss: bool = True  # log a refusal to kb-misses.txt
    with_passages: bool = True  # each row carries its best passage
    classify: bool = True  # consult fleet.txt's classifier, when one is named

    def __post_init__(self) -> None:
        if not isinstance(self.question, str):
            raise QueryError(f"question must be text, got {type(self.question).__name__}")
        for name in ("top", "offset"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise QueryError(f"{name} must be a whole number 0 or more, got {value!r}")
        # Lists become tuples so the value stays immutable; anything else is left for the
        # purpose stage to judge, which names what is wrong with it.
        for name in ("near", "boosts"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        if self.rerank is False:
            object.__setattr__(self, "rerank", None)
        elif self.rerank is not None:
            from .stages.rerank.reading import RerankRequest  # an optional stage: imported when asked for

            object.__setattr__(self, "rerank", RerankRequest.of(self.rerank))

    def page(self, top: int) -> "Query":
        """The same question and ordering, `top` rows long."""
        return replace(self, top=top)



def top_limit(top: int, rows: int) -> dict | None:
    """{"asked", "rows"} when an explicit `top` (past the default) asks for more rows than the
    answer's candidates hold (the text leg's constant pool and every label matched); None
    otherwise. `kb route` and MCP say it rather than stop short without a word."""
    return {"asked": top, "rows": rows} if top > max(rows, DEFAULT_TOP) else None
