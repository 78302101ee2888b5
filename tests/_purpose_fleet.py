"""A real little fleet on disk for the purpose-fusion tests: markdown notes with links and dates."""

from __future__ import annotations

import os
from pathlib import Path

from engine.stages.purpose.facts import NoteFacts, facts_from_disk
from engine.stages.purpose.stage import PoolRow
from engine.stages.purpose.weights import DAY_MS

# Fixed clock for the tests: 2026-09-10T00:00:00Z.
NOW_MS = 1_788_998_400_000

NOTES: dict[str, str] = {
    # A chain hub -> one -> two -> three -> four, written with every link style we read.
    "zed/knowledge/hub.md": "# Hub\nSearch for: hub\nDate: 2026-09-09\n\nThe business. See [one](one.md).\n",
    "zed/knowledge/one.md": "# One\nUpdated: 2026-09-09\n\nOne hop. Next: [[two]].\n",
    "zed/knowledge/two.md": "# Two\nDate: 2026-09-09\n\nTwo hops, on to [three](../tools/three.md#usage).\n",
    "zed/tools/three.md": "# Three\nDate: 2026-09-09\n\nThree hops; [[steve/knowledge/four|four]].\n",
    "steve/knowledge/four.md": "# Four\nDate: 2026-09-09\n\nFour hops: outside the walk.\n",
    # Unlinked notes that match the question well, at chosen ages.
    "zed/knowledge/pricing.md": "# Pricing\nDate: 2026-09-09\n\nWhat we decided about pricing.\n",
    "zed/knowledge/old-pricing.md": "# Old pricing\nDate: 2016-01-01\n\nPricing, a decade ago.\n",
    "steve/knowledge/fresh.md": "# Fresh\nDate: 2026-09-10\n\nWritten today, barely about pricing.\n",
    "steve/skills/review.md": "# Review\nDate: 2026-09-03\n\nA skill; links nowhere. ```[no](hub.md)```\n",
    # No date line: the file's mtime is its date.
    "steve/knowledge/undated.md": "# Undated\n\nNo date line here; see [hub](../../zed/knowledge/hub.md).\n",
}


def write_fleet(root: Path) -> Path:
    for nid, text in NOTES.items():
        p = root / nid
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    # Undated note's mtime: exactly 14 days (two conversation half-lives) before the clock.
    t = (NOW_MS - 14 * DAY_MS) / 1000
    os.utime(root / "steve/knowledge/undated.md", (t, t))
    for base in ("zed", "steve"):
        (root / base / "agent.txt").write_text(f"name = {base}\n", encoding="utf-8")
    return root


def fleet_facts(root: Path) -> NoteFacts:
    return facts_from_disk({"zed": root / "zed", "steve": root / "steve"})


def rrf(rank: int) -> float:
    return 1.0 / (60 + rank)


def pool_of(facts: NoteFacts, ranked: list[str]) -> list[PoolRow]:
    """A pool whose text raw is the RRF score of each id's rank in `ranked` (1-based)."""
    rows = []
    for i, nid in enumerate(ranked, start=1):
        base, _, path = nid.partition("/")
        species = "skills" if path.startswith("skills/") else "tools" if path.startswith("tools/") else "memory"
        rows.append(
            PoolRow(
                id=nid,
                text=rrf(i),
                date_ms=facts.date_of(nid),
                metadata={"agent": base, "base": base, "path": path, "species": species, "id": nid},
            )
        )
    return rows


# -- a fleet for Memory.ask: entries with labels, a small web of links, various dates --

QUESTION = "pricing decision for the launch"

# Twelve notes: pricing talked about everywhere, linked as a small web, dated variously.
MEMORY_NOTES = {
    "zed/knowledge/pricing.md": ("Pricing", "pricing, price list", "2026-01-10", ["launch.md", "[[discounts]]"]),
    "zed/knowledge/launch.md": ("Launch plan", "launch, launch plan", "2026-09-01", ["../skills/review.md"]),
    "zed/knowledge/discounts.md": ("Discounts", "discounts", "2025-06-01", []),
    "zed/skills/review.md": ("Pricing review", "pricing review", None, ["[[steve/knowledge/decisions]]"]),
    "zed/tools/calculator.md": ("Price calculator", "calculator", "2026-08-30", []),
    "zed/knowledge/old-decision.md": ("Old decision", "decision log", "2019-03-03", []),
    "steve/knowledge/decisions.md": ("Decisions", "decision, decisions", "2026-09-05", ["[[meeting-notes]]"]),
    "steve/knowledge/meeting-notes.md": ("Meeting notes", "meeting", "2026-09-08", []),
    "steve/knowledge/competitors.md": ("Competitors", "competitors", "2024-11-11", []),
    "steve/knowledge/launch-retro.md": ("Launch retro", "retro", "2026-02-02", ["../../zed/knowledge/launch.md"]),
    "steve/skills/negotiate.md": ("Negotiate", "negotiate", "2026-07-07", []),
    "steve/tools/quotes.md": ("Quotes", "quotes", "2026-05-05", []),
}


def _note(title, keys, date, links):
    lines = [f"# {title}", f"Search for: {keys}", ""]
    if date:
        lines.append(f"Date: {date}")
    lines += ["", f"Notes on {title.lower()}: the pricing decision for the launch, and what followed."]
    lines += [f"See {l}." if l.startswith("[[") else f"See [that]({l})." for l in links]
    return "\n".join(lines) + "\n"


def write_memory_fleet(root: Path) -> Path:
    for nid, spec in MEMORY_NOTES.items():
        p = root / nid
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(_note(*spec), encoding="utf-8")
    for b in ("zed", "steve"):
        (root / b / "agent.txt").write_text(f"name = {b}\n", encoding="utf-8")
    return root
