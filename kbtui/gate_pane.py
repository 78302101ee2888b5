"""The GATE pane: the floor arithmetic with this fleet's numbers put in, in words.

A threshold nobody can read is a threshold nobody can argue with, so every number the
verdict depends on is printed with where it comes from: N, idf_unique(N) = ln(1 + N/2),
floor_for(N), the top keyword score against it, the margin, MIN_ENTRIES_TO_ROUTE and the
text-only refusal.
"""

from __future__ import annotations

from engine.answer import UNREAD_WHY
from engine.rank.gate import explain
from rich.segment import Segment
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll

from .line_view import LineView
from .pane import Pane
from .verdict_bar import NO_MARGIN


def gate_rows(answer, *, agents: int | None = None) -> list[tuple[str, Text]]:
    """The gate's arithmetic for `answer`: (label, claim) rows, each claim checkable."""
    g = answer.gate
    n = g.entries
    top = answer.confidence.keyword_score
    agents = answer.indexed.agents if agents is None else agents
    terms = {t.label: t for t in explain(n)}  # the engine's formula with this fleet's numbers
    floor = g.floor
    out = _Rows()
    row, note = out.row, out.note

    row("N", (f"{n}", "bold"), f" {terms['N'].formula} across {agents} agent{'s' if agents != 1 else ''}")
    iu = terms["idf_unique"]
    row("idf_unique", f"{iu.formula} = ", (f"{iu.value:.4f}", "bold"), (f"  {iu.note}", "dim"))
    fl = terms["floor"]
    row("floor", f"{fl.formula} = ", (f"{floor:.2f}", "bold"))
    note(fl.note)
    _top_rows(out, top, floor, n)
    _margin_row(out, answer, top)
    _minimum_rows(out, terms["minimum"], n)
    _text_only_row(out, answer)
    _unread_row(out, answer)
    row("verdict", (f" {answer.verdict.upper()} ", "bold reverse"), "  served" if g.served else "  not served")
    return out.rows


class _Rows:
    """The pane's rows as they are made: a labelled claim of styled parts, or a note under it."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, Text]] = []

    def row(self, label: str, *parts) -> None:
        t = Text()
        for p in parts:
            if isinstance(p, tuple):
                t.append(p[0], style=p[1])
            else:
                t.append(p)
        self.rows.append((label, t))

    def note(self, text: str, style: str = "dim") -> None:
        self.rows.append(("", Text(text, style=style)))


def _top_rows(out: _Rows, top: float, floor: float, n: int) -> None:
    """The top keyword score against the floor."""
    row, note = out.row, out.note
    if top <= 0 and n == 0:
        row("top score", ("0.00", "bold"), ": no note has a label, so no key could score")
    elif top <= 0:
        row("top score", ("0.00", "bold"), ": no label shares a word with the question, and a zero clears no floor")
    elif top >= floor:
        row("top score", (f"{top:.2f}", "bold"), f" ≥ {floor:.2f}: clears the floor by {top - floor:.2f}"
            f" ({top / floor:.2f}× it)")
    else:
        row("top score", (f"{top:.2f}", "bold"), f" < {floor:.2f}: short of the floor by {floor - top:.2f}"
            f" ({top / floor:.0%} of it)")
        note("served as a guess, with its warning: the evidence is thin", "")


def _margin_row(out: _Rows, answer, top: float) -> None:
    """The top file over the second, or the dash when there is no second."""
    m = answer.confidence.margin
    if m is not None:
        second = answer.keyword[1].score
        out.row("margin", (f"{m:.2f}", "bold"), f" = {top:.2f} / {second:.2f}, the top file over the second")
    else:
        # One rendering on every surface of the room: the dash, never a made-up ratio.
        why = "one file scored, no second to divide by" if len(answer.keyword) == 1 else "no file scored"
        out.row("margin", (NO_MARGIN, "bold"), f": {why} (kb eval's table writes 1.00)")


def _minimum_rows(out: _Rows, mn, n: int) -> None:
    """The fewest entries a hit needs, against this fleet's."""
    if n < mn.value:
        out.row("minimum", f"{mn.formula}; this fleet has {n}:", (" below it, a guess at most", "bold"))
        if n == 0:
            out.note("with no entries there is nothing to weigh: no note has a label yet (kb label proposes labels)")
        else:
            out.note(mn.note)
    else:
        out.row("minimum", f"{mn.formula}; this fleet has {n}, so a hit is allowed")


def _text_only_row(out: _Rows, answer) -> None:
    """Whether the text scorer alone ranked the files (it never serves an answer)."""
    if answer.gate.ranked_by_text_only:
        texts = len(answer.text)
        out.row("text-only", ("refused", "bold"),
                f": the text scorer found {texts} file{'s' if texts != 1 else ''} but no label matched; "
                "full text alone never serves an answer (its files stay in the reading list)")
    elif answer.keyword:
        out.row("text-only", "no: the labels matched, so the verdict is theirs")
    else:
        out.row("text-only", "no: neither scorer found anything")


def _unread_row(out: _Rows, answer) -> None:
    """What engine/rank/vouch.py said, when the top note's score rests on keys nobody has read."""
    u = answer.gate.unread
    if u:
        out.row("unread", (u, "bold"), f": {UNREAD_WHY[u]}")


LABEL_WIDTH = 10


class GateLines:
    """Label column and claim column: claims wrap under themselves, not under the labels.
    Drawn by hand rather than as a Rich table grid: the gate is rendered again whenever its
    numbers change while typing, and a table measures every cell first."""

    def __init__(self, rows: list[tuple[str, Text]]) -> None:
        self.rows = rows

    def __rich_console__(self, console, options):
        width = max(1, options.max_width - LABEL_WIDTH - 1)
        blank = Segment(" " * (LABEL_WIDTH + 1))
        label_style = console.get_style("bold")
        for label, claim in self.rows:
            for i, line in enumerate(claim.wrap(console, width) or [Text()]):
                if i == 0:
                    yield Segment(f"{label[:LABEL_WIDTH]:<{LABEL_WIDTH}} ", label_style)
                else:
                    yield blank
                # Text.render leaves out the text's own base style (a note's dim)
                yield from Segment.apply_style(line.render(console), console.get_style(line.style) if line.style else None)
                yield Segment.line()


def gate_table(rows: list[tuple[str, Text]]) -> GateLines:
    return GateLines(rows)


def gate_plain(answer) -> str:
    """The pane as plain lines, for tests and for copying."""
    return "\n".join(f"{label:<10} {claim.plain}" for label, claim in gate_rows(answer))


class GatePane(Pane):
    """Scrolls when the terminal is short; the arithmetic is never cut."""

    NAME, TITLE, FOCUS, GRID_SLOT = "gate", "Gate", "#gate-scroll", 3
    HELP = "why it is a hit, a guess or nothing: the floor's sum with this fleet's numbers"
    DEFAULT_CSS = """
    GatePane #gate-scroll { padding: 0 1; }
    MainScreen.-wide.-tall GatePane { column-span: 6; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="gate-scroll"):
            yield LineView(Text("ask a question to see the floor arithmetic", style="dim"), id="gate-text")

    def signature(self, answer) -> object:
        kw = answer.keyword
        return (answer.gate, answer.confidence, answer.verdict, len(kw), kw[1].score if len(kw) > 1 else None,
                len(answer.text), answer.indexed.agents)

    def show_answer(self, answer) -> None:
        self.query_one("#gate-text", LineView).update(gate_table(gate_rows(answer)))
