"""The stage's typed refusals. Each message is one line that names what is wrong and the cure."""

from __future__ import annotations

from engine.errors import KbError


class FusionError(KbError, ValueError):
    """Base of every purpose-fusion refusal: a KbError, so every surface prints it as the one
    line it is, and a ValueError, because it is always bad input rather than a fault."""


class FusionOptionError(FusionError):
    """A malformed option (purpose, near, boosts), refused before any work is done."""


class FusionStampMismatch(FusionError):
    """The base was stamped with other fusion constants than this build's.

    `fields` lists every differing field as a dotted path (e.g. `conversation.weights.recency`).
    """

    def __init__(self, path: str, fields: tuple[str, ...]):
        self.path = path
        self.fields = fields
        super().__init__(
            f"fusion stamp {path} disagrees with this build on {', '.join(fields)}; "
            f"run `kb fusion restamp <PATH>` to accept this build's weights (future pages will differ from past ones)"
        )
