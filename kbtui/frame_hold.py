"""Hold the next frame while a quick answer is on its way, so a keystroke costs one frame.

Without it a key is drawn twice: the echo of the letter in the question (a frame at the
next 60 Hz tick), then the answer one or two ticks later, each frame a full layout of the
screen. Holding screen updates from the moment an ask starts until its answer is painted
puts the echo and the answer in the same frame: one layout, one write to the terminal.
The hold is capped (`HOLD_S`), so a slow answer never delays the echo by more than that.
"""

from __future__ import annotations

# Long enough for an answer from a warm index plus its paint (about 5-15 ms here), short
# enough that a slow answer's echo still appears within two frames at 60 Hz.
HOLD_S = 0.025


class FrameHold:
    """Suspends the app's screen updates (`App.batch_update`) until `release` or `HOLD_S`."""

    def __init__(self, app) -> None:
        self.app = app
        self._batch = None  # the entered batch_update context, while holding
        self._timer = None

    @property
    def holding(self) -> bool:
        return self._batch is not None

    def hold(self) -> None:
        """Start holding (a hold already running keeps its original deadline)."""
        if self._batch is not None:
            return
        self._batch = self.app.batch_update()
        self._batch.__enter__()
        # On the app, not the screen: the cap must fire whichever screen is in front.
        self._timer = self.app.set_timer(HOLD_S, self.release, name="frame hold")

    def release(self) -> None:
        if self._batch is None:
            return
        batch, self._batch = self._batch, None
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        batch.__exit__(None, None, None)
        # The screen schedules its next frame when it next goes idle: prompt it now, or the
        # held frame waits for some unrelated message to wake the screen.
        self.app.screen.check_idle()
