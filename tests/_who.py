"""Helpers for the who-answers tests: a demo copy with a classifier configured, and tiny classifiers."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE_CLASSIFIER = REPO / "examples" / "classify_by_roster.py"
GOLD_FIRST = "quem decide se um deploy pode ir pra producao"

# One question per coverage value, as the example classifier judges the demo.
COVERED = "how much protein per meal"  # yaron's notes and role agree
ADJACENT = "kubernetes systems monitoring"  # no note matches; only zed's role says "systems"
UNCOVERED = "qual acao da bolsa devo comprar"  # no note, no role

UNCOVERED_SEED = (
    "VESTA: nothing in this fleet covers {subject}, and no agent is near enough to name. {reason} This is a gap in "
    "the fleet rather than a gap in the question: it is worth deciding whether an agent should exist for it."
)


def configure(fleet: Path, command: str, timeout_ms: int | None = None) -> None:
    """Enable a classifier in the copy's fleet.txt (the shipped demo keeps its line commented)."""
    f = fleet / "fleet.txt"
    lines = [ln for ln in f.read_text().splitlines() if not ln.lstrip("# ").startswith("classifier")]
    lines.append(f"classifier = {command}")
    if timeout_ms is not None:
        lines.append(f"classifier_timeout_ms = {timeout_ms}")
    f.write_text("\n".join(lines) + "\n")
    allow_classifier(fleet)


def allow_classifier(fleet: Path) -> None:
    """What the person does once for a classifier they trust: `kb allow PATH` (engine/stages/classifier)."""
    from engine.stages.classifier import allow
    from engine.notes.fleet import discover
    from engine.notes.roster import roster_of

    roster = roster_of(discover([fleet]))
    allow(roster.root, roster.classifier)


def example_command() -> str:
    return f"{sys.executable} {EXAMPLE_CLASSIFIER}"


def script(tmp: Path, name: str, body: str) -> str:
    """Write a small classifier outside the fleet; return the fleet.txt command that runs it."""
    p = tmp / name
    p.write_text(textwrap.dedent(body))
    return f"{sys.executable} {p}"
