"""The command palette (ctrl+p): every screen and pane by name, and the question history."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

# (title, help, action on the app)
_COMMANDS = (
    ("Eval: run the answer key", "the seed's eval table and summary blocks (F2)", "show('eval')"),
    ("Check: grade the notes' labels", "kb check findings; Enter opens the line (F3)", "show('check')"),
    ("Misses: the recall-loss log", "kb-misses.txt, most asked first (F4)", "show('misses')"),
    ("Roster: who each agent is", "agent.txt of every base (F5)", "show('roster')"),
    ("Labels: propose keys for unlabelled notes", "accept, edit or drop each key; see the effect; write (F8)", "show('labels')"),
    ("Pane: reading list", "the fused reading list", "pane('reading')"),
    ("Pane: keywords", "the keyword ranking and its arithmetic", "pane('keywords')"),
    ("Pane: gate", "the floor arithmetic with this fleet's numbers", "pane('gate')"),
    ("Pane: agents", "the species table and the fold", "pane('agents')"),
    ("Reindex now", "bring every base's index up to date and ask again", "reindex"),
    ("Purpose: off", "the plain fused order (RRF)", "purpose('off')"),
    ("Purpose: documents", "text dominant, recency weight exactly 0 (F7 cycles)", "purpose('documents')"),
    ("Purpose: conversation", "text first, recency with a seven-day half-life", "purpose('conversation')"),
    ("Purpose: workspace", "the link graph outweighs text", "purpose('workspace')"),
    ("Toggle rerank", "re-order the reading list with the cross-encoder, after the fused list paints",
     "toggle_rerank"),
)


class KbCommands(Provider):
    async def discover(self) -> Hits:
        for title, help_text, action in _COMMANDS:
            yield DiscoveryHit(title, partial(self.app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in _COMMANDS:
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self.app.run_action, action), help=help_text)
        for q in reversed(self.app.history.items):
            label = f"Ask again: {q}"
            score = matcher.match(label)
            if score > 0:
                yield Hit(score, matcher.highlight(label), partial(self.app.ask, q), help="from this session's history")
