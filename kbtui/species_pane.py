"""The species table: each agent's best memory / skills / tools score and the fold total.

The fold sums at most three numbers per agent (the best file of each species), so the table
shows exactly the numbers that were added, with the owner marked.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult

from .clean import one_line
from .line_table import AUTO, Column, LineTable
from .line_view import LineView
from .pane import Pane


def _cell(x: float) -> Text:
    return Text("—" if x <= 0 else f"{x:.2f}", style="dim" if x <= 0 else "", justify="right")


def fold_caption(answer) -> Text:
    """What the fold decided, in one or two lines under the table."""
    a = answer.agent
    t = Text()
    if not a.totals:
        t.append("no agent scored: no owner", style="dim")
        return t
    # The seed's words, each said once in plain ones (F1's glossary has them too).
    t.append("fold = best memory (what it knows) + best skills (how it works) + best tools (what it can use)\n",
             style="dim")
    if not answer.gate.served:
        t.append("not served, so no owner is named", style="dim")
    elif a.margin is None:
        t.append(f"{one_line(a.name or '')} owns it: the only agent that scored", style="")
    else:
        runner = a.totals[1]
        t.append(f"{one_line(a.name or '')} owns it: {a.score:.2f} / {runner.score:.2f} "
                 f"({one_line(runner.agent)}) = margin {a.margin:.2f}")
    if a.chosen_by != "fold":
        t.append(f"\nchosen by the {one_line(a.chosen_by)}", style="bold")
        if a.coverage:
            t.append(f": {one_line(a.coverage)}")
        if a.reason:
            t.append(f", {one_line(a.reason)}", style="dim")
    elif a.note:
        t.append(f"\n{one_line(a.note)}", style="dim")
    return t


class SpeciesPane(Pane):
    NAME, TITLE, FOCUS, GRID_SLOT = "agents", "Agents (▸ owner)", "#species-table", 2
    HELP = "each agent's best memory, skills and tools score, and their sum (the fold) that names the owner"
    DEFAULT_CSS = """
    SpeciesPane #species-table { height: auto; max-height: 1fr; }
    SpeciesPane #species-caption { height: auto; padding: 1 1 0 1; }
    MainScreen.-wide.-tall SpeciesPane { column-span: 4; }
    """

    def compose(self) -> ComposeResult:
        numbers = [Column(name, 6, "right") for name in ("memory", "skills", "tools", "fold")]
        yield LineTable([Column(" ", 1), Column("agent", AUTO), *numbers], id="species-table")
        yield LineView(id="species-caption")

    def signature(self, answer) -> object:
        a = answer.agent
        return (a, answer.gate.served, tuple(self.app.roster))

    def show_answer(self, answer) -> None:
        roster = self.app.roster
        totals = {t.agent: t for t in answer.agent.totals}
        owner = answer.agent.name if answer.gate.served else None
        ordered = [t.agent for t in answer.agent.totals] + [a for a in roster if a not in totals]
        rows = []
        for name in ordered:
            t = totals.get(name)
            mark = Text("▸", style="bold") if name == owner else Text(" ")
            label = Text(one_line(name), style="bold" if name == owner else "")
            if t is None:
                rows.append((name, (mark, label, _cell(0), _cell(0), _cell(0), _cell(0))))
            else:
                fold = _cell(t.score)
                fold.stylize("bold")
                rows.append((name, (mark, label, _cell(t.memory), _cell(t.skills), _cell(t.tools), fold)))
        self.query_one(LineTable).set_rows(rows)
        self.query_one("#species-caption", LineView).update(fold_caption(answer))
