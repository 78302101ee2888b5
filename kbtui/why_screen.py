"""Why this row: the reading list's arithmetic for one row, added up on screen.

The RRF sum from the row's ranks, then, when a purpose ordered the list, the four
fixed-point contributions that add up to its fused score to the digit, then the rerank
logit when the cross-encoder re-ordered it. Everything a person needs to argue with the order.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from engine.rank.rrf import RRF_K, parts
from engine.rank.terms import fusion_parts

from .clean import name_line, one_line


def why_text(r) -> Text:
    """The engine's own terms for this row (engine.rank.rrf.parts, engine.rank.terms.fusion_parts),
    laid out; nothing here re-derives a number."""
    t = Text()
    t.append(f"{name_line(r.base)}/{name_line(r.path)}\n", style="bold")
    t.append(f"reading list: Reciprocal Rank Fusion, 1/({RRF_K} + rank) per list\n", style="dim")
    *lists, total = parts({"keywords": r.keyword_rank, "text": r.text_rank})
    for term in lists:
        value = f"{term.value:.5f}" if term.formula != "not ranked" else "0"
        t.append(f"  {term.label:<9} {term.formula:<18} = {value}\n")
    t.append(f"  {'sum':<9} {'':<18}   {total.value:.5f}\n", style="bold")
    if r.fusion:
        *signals, fused = fusion_parts(r.fusion)
        t.append(f"\npurpose {one_line(fused.formula)}: integer fixed point, normalized × weight\n", style="dim")
        for term in signals:
            t.append(f"  {term.label:<8} {term.formula:>20} = {term.value:>15,}\n")
        t.append(f"  {'fused':<8} {'':>20}   {fused.value:>15,}\n", style="bold")
        if sum(term.value for term in signals) != fused.value:
            t.append("  (does not add up: report this)\n", style="bold red")
    if r.rerank_score is not None:
        t.append(f"\nrerank: the cross-encoder's logit {r.rerank_score:+.4f} ordered this row\n")
    return t


class WhyScreen(ModalScreen):
    BINDINGS = [Binding("escape,space", "app.pop_screen", "Back", id="why.back")]
    DEFAULT_CSS = """
    WhyScreen { align: center middle; }
    WhyScreen > VerticalScroll { width: 76; max-width: 100%; height: auto; max-height: 90%;
        border: round $accent; padding: 0 1; background: $surface; }
    """

    def __init__(self, result) -> None:
        super().__init__()
        self.result = result

    def compose(self) -> ComposeResult:
        with VerticalScroll() as v:
            v.border_title = "Why this row"
            yield Static(why_text(self.result), id="why-text")
