"""The command palette (ctrl+p): every screen and pane by name, and the question history."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

def palette_rows() -> tuple[tuple[str, str, str], ...]:
    """(title, help, action on the app): screens, then panes and purposes from their own lists,
    so a new pane or purpose appears here without an edit."""
    from engine.stages.purpose.weights import PURPOSES

    from .main_screen import PANES

    screens = (
        ("Eval: run the answer key", "the eval table and its FILE, AGENT, GATE, SPEED blocks (F2)", "show('eval')"),
        ("Check: grade the notes' labels", "kb check findings; Enter opens the line (F3)", "show('check')"),
        ("Misses: the recall-loss log", "kb-misses.txt, most asked first (F4)", "show('misses')"),
        ("Roster: who each agent is", "agent.txt of every base (F5)", "show('roster')"),
        ("Labels: propose keys for unlabelled notes", "accept, edit or drop each key; see the effect; write (F8)",
         "show('labels')"),
    )
    panes = tuple((f"Pane: {p.TITLE.split(' (')[0].lower()}", p.HELP, f"pane('{p.NAME}')") for p in PANES)
    purposes = (("Purpose: off", "the plain fused order (RRF; F7 cycles on the main screen)", "purpose('off')"),) + tuple(
        (f"Purpose: {p.name}", p.plain or p.reason, f"purpose('{p.name}')") for p in PURPOSES.values()
    )
    tools = (
        ("Reindex now", "bring every base's index up to date and ask again", "reindex"),
        ("Toggle rerank", "re-order the reading list with the cross-encoder, after the fused list paints",
         "toggle_rerank"),
    )
    return screens + panes + purposes + tools


class KbCommands(Provider):
    async def discover(self) -> Hits:
        for title, help_text, action in palette_rows():
            yield DiscoveryHit(title, partial(self.app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in palette_rows():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self.app.run_action, action), help=help_text)
        for q in reversed(self.app.history.items):
            label = f"Ask again: {q}"
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), partial(self.app.ask, q), help="from this session's history")
