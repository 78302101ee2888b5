"""A pane of the main screen, as data: its name, title, CSS, focus target and `show_answer`.

Adding a pane is writing one `Pane` subclass and naming it in `main_screen.PANES`: the tabs,
the grid slot, F6/Tab, the command palette and the answer painting all read from there.
"""

from __future__ import annotations

from typing import ClassVar

from textual.containers import Vertical
from textual.widget import Widget


class Pane(Vertical):
    NAME: ClassVar[str] = ""  # "reading": tab id, palette row, `pane(NAME)` action
    TITLE: ClassVar[str] = ""  # the border title and the tab's label
    HELP: ClassVar[str] = ""  # the palette's one line about it
    FOCUS: ClassVar[str] = ""  # selector of the child that takes focus ("" = the pane itself)
    GRID_SLOT: ClassVar[int] = 0  # DOM order = place in the wide grid (tabs follow PANES' order)

    # Not scoped: a pane's rules name the screen classes (-wide, -tall) it is laid out under.
    SCOPED_CSS = False
    DEFAULT_CSS = """
    Pane {
        border: round $foreground 25%;
        border-title-color: $text-muted;
        height: 1fr;
        display: none;
    }
    /* Focus is marked by the title's weight as well as the border's colour: under NO_COLOR
       two greys are hard to tell apart. */
    Pane:focus-within {
        border: round $primary;
        border-title-color: $text;
        border-title-style: bold reverse;
    }
    Pane.-shown { display: block; }
    MainScreen.-wide.-tall Pane { display: block; }
    """

    def __init_subclass__(cls, **kw) -> None:
        # Textual reads SCOPED_CSS per class, not inherited: each pane's rules name the screen
        # classes it is laid out under, so none of them is scoped to the pane.
        super().__init_subclass__(**kw)
        cls.SCOPED_CSS = False

    def on_mount(self) -> None:
        self.border_title = self.TITLE

    def focus_target(self) -> Widget:
        return self.query_one(self.FOCUS) if self.FOCUS else self

    def show_answer(self, answer) -> None:
        """Paint `answer`; called on the UI thread, after every ask."""

    def signature(self, answer) -> object:
        """What this pane shows of `answer`, as a comparable value: when it equals the last
        one painted the pane is left alone (repaint only what changed). None: always paint."""
        return None

    def paint(self, answer) -> bool:
        """`show_answer` unless nothing this pane shows has changed; True when it painted."""
        sig = self.signature(answer)
        if sig is not None and sig == getattr(self, "_painted_sig", None):
            return False
        self.show_answer(answer)
        self._painted_sig = sig
        return True

    def clear(self) -> None:
        """No question: nothing from the last answer may linger as if it were this one's."""

    def forget(self) -> None:
        """The next answer is painted whatever it is (after a clear)."""
        self._painted_sig = None
