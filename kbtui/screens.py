"""The screens the F-keys and the palette open, by name (one table for the app and its help)."""

from __future__ import annotations


def screen_class(name: str):
    """The screens the F-keys and the palette name, imported when first shown."""
    from .check_screen import CheckScreen
    from .eval_screen import EvalScreen
    from .labels_screen import LabelsScreen
    from .misses_screen import MissesScreen
    from .roster_screen import RosterScreen

    return {s.NAME: s for s in (EvalScreen, CheckScreen, MissesScreen, RosterScreen, LabelsScreen)}[name]
