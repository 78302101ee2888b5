"""The verdict bar: HIT / GUESS / NOTHING, the owner, the score against the floor, the margin.

The verdict is a word in a box, not only a colour, so it reads the same in monochrome
(NO_COLOR) and to a colour-blind reader: HIT is reversed, GUESS reversed and underlined,
NOTHING dim.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widgets import Static

from engine.answer import UNREAD_BAR

from .clean import one_line

NO_MARGIN = "—"  # no second file to divide by: the room's one rendering (JSON: null)
VERDICT_LABEL = {"hit": " HIT ", "guess": " GUESS ", "nothing": " NOTHING "}
VERDICT_STYLE = {
    "hit": "bold reverse green",
    "guess": "bold reverse underline yellow",
    "nothing": "bold reverse red",
}


# Said while the room's in-memory text leg builds (seconds on a large fleet): the answers
# meanwhile come from FTS5 on disk, ranked the same, only slower.
BUILDING_SAYS = "text index building"


def verdict_text(answer, *, show_timing: bool = True, building: bool = False) -> Text:
    """One line: the verdict badge, then owner, top score vs floor, margin (and the time;
    and that the text index is still building, while it is)."""
    v = answer.verdict
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(VERDICT_LABEL[v], style=VERDICT_STYLE[v])
    t.append("  ")
    top = answer.confidence.keyword_score
    floor = answer.gate.floor
    if answer.agent.name and answer.gate.served:
        t.append("owner ", style="dim")
        t.append(one_line(answer.agent.name), style="bold")
        if answer.agent.chosen_by != "fold":
            t.append(f" ({one_line(answer.agent.chosen_by)})", style="dim")
        if answer.agent.coverage:
            t.append(f" {one_line(answer.agent.coverage)}", style="italic")
        t.append("  ")
    elif v == "nothing":
        t.append("no owner  ", style="dim")
        if answer.agent.chosen_by == "classifier" and answer.agent.coverage:
            t.append(f"(classifier) {one_line(answer.agent.coverage)}  ", style="italic")
    if answer.indexed.entries == 0:
        # "top 0.00 < floor 0.00" would be arithmetic about labels that do not exist.
        t.append("no note has a label yet: full text only, never a hit (kb label proposes labels)", style="dim")
        if show_timing:
            t.append(f"  {answer.timings.total_ms:.1f} ms", style="dim")
        return t
    t.append("top ", style="dim")
    t.append(f"{top:.2f}", style="bold")
    t.append(" ≥ " if top >= floor and top > 0 else " < ", style="dim")
    t.append(f"floor {floor:.2f}", style="")
    t.append("  margin ", style="dim")
    margin = answer.confidence.margin
    t.append(NO_MARGIN if margin is None else f"{margin:.2f}", style="bold")
    if answer.gate.unread:  # engine/rank/vouch.py: the score rests on keys nobody has read
        t.append(f"  {UNREAD_BAR[answer.gate.unread]}", style="italic")
    if show_timing:
        t.append(f"  {answer.timings.total_ms:.1f} ms", style="dim")
    if building:
        t.append(f"  · {BUILDING_SAYS}", style="dim")
    return t


def waiting_text(message: str, badge: str = " … ") -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(badge, style="reverse dim" if badge == " … " else "bold reverse")
    t.append("  " + message, style="dim")
    return t


READY = " READY "  # the room is indexed and waits for a question: not the … of work under way


def error_text(message: str) -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(" ERROR ", style="bold reverse red")
    t.append("  " + one_line(message))
    return t


class VerdictBar(Static):
    """One line under the question; its class (-hit/-guess/-nothing) tints the border."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._waiting: tuple[str, ...] = ()  # a waiting line and its shorter forms, longest first
        self._badge = " … "

    def show_answer(self, answer, *, show_timing: bool = True, building: bool = False) -> None:
        self._waiting = ()
        self.set_class(answer.verdict == "hit", "-hit")
        self.set_class(answer.verdict == "guess", "-guess")
        self.set_class(answer.verdict == "nothing", "-nothing")
        text = verdict_text(answer, show_timing=show_timing, building=building)
        if text.plain != self.content_plain():  # the same line again is not repainted
            self.update(text, layout=False)  # one line high whatever it says: a repaint

    def content_plain(self) -> str:
        content = self.content
        return getattr(content, "plain", str(content))

    def show_waiting(self, message: str, *shorter: str, badge: str = " … ") -> None:
        """`message`, or the first of `shorter` that fits the bar when it does not (chosen
        again on a resize): a shorter sentence rather than one cut mid-word."""
        self.remove_class("-hit", "-guess", "-nothing")
        self._waiting = (message, *shorter)
        self._badge = badge
        self._show_fitting()

    def show_ready(self, message: str, *shorter: str) -> None:
        """The ready line: what to do next, under a READY badge."""
        self.show_waiting(message, *shorter, badge=READY)

    def _show_fitting(self) -> None:
        width = self.content_size.width  # 0 before the first layout: the resize re-fits
        texts = [waiting_text(m, self._badge) for m in self._waiting]
        fits = next((t for t in texts if width <= 0 or t.cell_len <= width), texts[-1])
        if fits.plain != self.content_plain():
            self.update(fits, layout=False)

    def on_resize(self, event: events.Resize) -> None:
        if self._waiting:
            self._show_fitting()

    def show_error(self, message: str) -> None:
        self._waiting = ()
        self.remove_class("-hit", "-guess")
        self.add_class("-nothing")
        self.update(error_text(message))
