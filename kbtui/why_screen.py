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

from engine.rrf import RRF_K

from .clean import name_line


def why_text(r) -> Text:
    t = Text()
    t.append(f"{name_line(r.base)}/{name_line(r.path)}\n", style="bold")
    t.append("reading list: Reciprocal Rank Fusion, 1/(60 + rank) per list\n", style="dim")
    total = 0.0
    for label, rank in (("keywords", r.keyword_rank), ("text", r.text_rank)):
        if rank is None:
            t.append(f"  {label:<9} not ranked            0\n")
            continue
        part = 1.0 / (RRF_K + rank)
        total += part
        t.append(f"  {label:<9} #{rank:<3} 1/({RRF_K} + {rank}) = {part:.5f}\n")
    t.append(f"  {'sum':<9} {'':<18}{total:.5f}\n", style="bold")
    if r.fusion:
        f = r.fusion
        t.append(f"\npurpose {f.get('purpose')}: integer fixed point, normalized x weight\n", style="dim")
        running = 0
        for name, c in f.get("contributions", {}).items():
            running += c["contribution"]
            t.append(f"  {name:<8} {c['normalized']:>9,} x {c['weight']:>5,} = {c['contribution']:>15,}\n")
        t.append(f"  {'fused':<8} {'':>9}   {'':>5}   {running:>15,}\n", style="bold")
        if running != f.get("fusedScore"):
            t.append("  (does not add up: report this)\n", style="bold red")
    if r.rerank_score is not None:
        t.append(f"\nrerank: the cross-encoder's logit {r.rerank_score:+.4f} ordered this row\n")
    return t


class WhyScreen(ModalScreen):
    BINDINGS = [Binding("escape,w", "app.pop_screen", "Back", id="why.back")]
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
