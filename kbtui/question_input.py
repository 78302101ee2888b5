"""The question box: an Input with history on up/down."""

from __future__ import annotations

from textual.actions import SkipAction
from textual.binding import Binding
from textual.widgets import Input

from .history import History


class QuestionInput(Input):
    BINDINGS = [
        Binding("up", "history_older", "Older question", show=False, tooltip="the question asked before (history)",
                id="question.older"),
        Binding("down", "history_newer", "Newer question", show=False,
                tooltip="back towards the newest, when going through the history", id="question.newer"),
    ]

    def __init__(self, history: History, **kw) -> None:
        super().__init__(**kw)
        self.history = history
        self._browsing = False

    def _set(self, value: str | None) -> None:
        if value is None:
            return
        self._browsing = True
        self.value = value
        self.cursor_position = len(value)

    def action_history_older(self) -> None:
        self._set(self.history.older(self.value))

    def action_history_newer(self) -> None:
        newer = self.history.newer()
        if newer is None:
            # Down with no newer question to show: the key is the screen's (into the reading
            # list), handled in this same dispatch so a key sent with it finds focus moved.
            raise SkipAction()
        self._set(newer)
