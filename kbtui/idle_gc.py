"""The cycle collector's full passes, moved to when nobody is waiting for a frame.

The policy (what is frozen, the thresholds, when a pass is due, the pass) is
engine/index/collector.py's, the one place for it; this module is the room's timer.

A full pass walks every container the process holds. The room holds a great many for its
whole life (its widgets and styles, the index, the text leg in memory): at 60,000 chunks a
pass took 80-150 ms on a loaded machine, and Python starts one every dozen keystrokes or
so, each a dropped frame while typing. So once the room has settled:

- what is alive then is frozen (`gc.freeze`): passes no longer walk it;
- automatic full passes are put off (the third threshold raised), and a full pass runs
  instead after a second without a keystroke, when one would have been due.

The young generations are collected as before, during typing: they are small. On unmount
the freeze and the threshold are undone, so a process that runs many rooms (the tests)
reclaims each one. The engine lifts and redoes the freeze itself when it rebuilds a large
snapshot, which is compatible with this.
"""

from __future__ import annotations

import time

from engine.index import collector
from engine.index.collector import IDLE_S, PUT_OFF  # noqa: F401  (read here, so a test may shorten IDLE_S)

CHECK_EVERY_S = 0.5


class IdleCollector:
    def __init__(self, app) -> None:
        self.app = app
        self._last_activity = time.monotonic()
        self._threshold: tuple[int, int, int] | None = None  # as found, while put off
        self._timer = None
        self.passes = 0  # full passes run while idle

    @property
    def running(self) -> bool:
        return self._threshold is not None

    def start(self) -> None:
        if self.running:
            return
        self._threshold = collector.put_off()
        self._timer = self.app.set_interval(CHECK_EVERY_S, self._maybe_collect, name="idle gc")

    def activity(self) -> None:
        """A keystroke: the next full pass waits until the person pauses."""
        self._last_activity = time.monotonic()

    def _maybe_collect(self) -> None:
        if self._threshold is None or time.monotonic() - self._last_activity < IDLE_S:
            return
        if collector.pass_if_due(self._threshold):
            self.passes += 1

    def stop(self) -> None:
        if self._threshold is None:
            return
        if self._timer is not None:
            self._timer.stop()
        collector.restore(self._threshold)
        self._threshold = None
