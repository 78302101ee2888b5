"""The dossier: what the classifier is shown, and all it is shown.

About three hundred tokens: the roster (what each agent does and where it stops), the
question, up to five evidence lines from the keyword scorer (`base/path`, score, matched
words), one `about:` line per file from its `Exists to:` line (a path is not evidence about
a subject), and the per-agent table of best memory / skills / tools scores with a dash where
there is none. Never the base itself: a chooser that never sees a note cannot invent one,
and its answer is a name from the list it was handed.

The fleet half comes first and does not vary between questions, so a resident model that
caches its longest computed prefix pays for the roster once.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..answer import AgentTotal, KeywordHit
from ..clean import flat
from ..notes.roster import Roster

EVIDENCE_LINES = 5  # "How the Catalogue Ranks": "up to five lines of evidence"
ANSWER_FIELDS = ("SUBJECT", "REASON", "COVERAGE", "OWNER")
COVERAGES = ("covered", "adjacent", "uncovered")

# Section markers the example classifier (and anyone's parser) can rely on.
ROSTER_HEAD = "ROSTER (the only names you may answer with):"
MESSAGE_HEAD = "MESSAGE:"
EVIDENCE_HEAD = "EVIDENCE (keyword scorer, best first; shared words, not shared meaning):"
TABLE_HEAD = "BEST PER AGENT (memory / skills / tools):"
ANSWER_HEAD = "ANSWER in exactly these four lines and nothing else:"

# One line, no control characters: text from a note or a person cannot add a line.
_flat = flat


def _num(x: float) -> str:
    return f"{x:.2f}" if x > 0 else "-"


def fleet_part(roster: Roster) -> str:
    """The half that never varies between questions."""
    out = [
        "Decide which agent of this fleet should answer one message. Judge by what each agent "
        "does and where it stops; the scores only say which notes share words with the message.",
        "covered: plainly that agent's work. adjacent: nobody owns it, the named agent is the "
        "nearest. uncovered: nobody, and no one near enough to name.",
        "",
        f"FLEET: {_flat(roster.name)}" + (f" ({_flat(roster.role)})" if roster.role else ""),
        ROSTER_HEAD,
    ]
    for m in roster.members:
        out.append(f"  {m.key}: {_flat(m.role) or '(no role declared)'}")
        if m.ends:
            out.append(f"    stops: {_flat(m.ends)}")
    return "\n".join(out) + "\n"


def question_part(roster: Roster, question: str, keyword: Sequence[KeywordHit], totals: Sequence[AgentTotal]) -> str:
    """The half that changes with every message."""
    out = ["", MESSAGE_HEAD, f"  {_flat(question)}", "", EVIDENCE_HEAD]
    if not keyword:
        out.append("  (nothing matched: nobody has written about this yet, which is information)")
    for k in keyword[:EVIDENCE_LINES]:
        matched = ", ".join(_flat(m) for m in k.matched) or "text only"
        out.append(f"  {k.base}/{_flat(k.path)}  score {k.score:.2f}  matched: {matched}")
        out.append(f"    about: {_flat(k.purpose) or '(no Exists to: line)'}")
    out += ["", TABLE_HEAD]
    by_agent = {t.agent: t for t in totals}
    width = max((len(m.key) for m in roster.members), default=0)
    for m in roster.members:
        t = by_agent.get(m.key)
        cells = (_num(t.memory), _num(t.skills), _num(t.tools)) if t else ("-", "-", "-")
        out.append(f"  {m.key:<{width}}  " + "  ".join(f"{c:>6}" for c in cells))
    out += [
        "",
        ANSWER_HEAD,
        "SUBJECT: <two to five words naming the subject>",
        "REASON: <one sentence>",
        "COVERAGE: <covered|adjacent|uncovered>",
        "OWNER: <a name from the roster, or none>",
    ]
    return "\n".join(out) + "\n"


def build_dossier(roster: Roster, question: str, keyword: Sequence[KeywordHit], totals: Sequence[AgentTotal]) -> str:
    return fleet_part(roster) + question_part(roster, question, keyword, totals)
