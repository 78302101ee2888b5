"""Plain-text renderings of an Answer and an index report, as `kb` prints them.

Everything from a note passes through `printable` first: a title with an ANSI escape in it
must not reach the reader's terminal as a command.
"""

from __future__ import annotations

import json

from .answer import Answer
from .clean import escaped, json_safe, repaired, shown
from .answer import UNREAD_SHORT as VOUCH_SHORT
from .stages.coverage import chooser_line, coverage_line
from .rank.gate import MIN_ENTRIES_TO_ROUTE
from .rank.question import MAX_QUESTION_CHARS
from .sentences import INDEX_REBUILT, INDEX_REBUILT_VERSION, LIMIT_NOTE, NOTHING_LINES, SUGGEST_LEAD
from .rank.terms import fusion_parts
from .index.indexupdate import IndexReport



def printable(s: str) -> str:
    """One value on one line: a name, a question, a finding. Every control character (newline
    and tab too: a note named `evil\\nverdict:  hit...` must not print a line of its own), the
    bidi overrides and bytes that are not UTF-8 made visible as escapes (engine/clean.py)."""
    return shown(s)


def printable_block(s: str) -> str:
    """Several lines of prose (a constitution): line breaks and tabs kept, other controls escaped."""
    return escaped(repaired(s))


def json_line(obj: object) -> str:
    """One line of JSON that is safe on a terminal and parses to exactly the same strings."""
    return json_safe(json.dumps(obj, ensure_ascii=False, sort_keys=True))


def one_line(s: str) -> str:
    return printable(" ".join(s.split()))


def header(a: Answer) -> list[str]:
    out = [f"question: {one_line(a.question)}"]
    if a.question_chars:
        out.append(f"cut:      the question has {a.question_chars:,} characters; only the first "
                   f"{MAX_QUESTION_CHARS:,} or fewer were read")
    n = a.indexed
    out.append(f"indexed:  {counted(n.entries, 'entry', 'entries')} across {counted(n.agents, 'agent', 'agents')}, "
               f"{counted(n.aliases, 'alias', 'aliases')}")
    return out


def counted(n: int, one: str, many: str) -> str:
    """`1 agent`, `3 agents`: a single vault is one agent, and "1 agents" read as a slip."""
    return f"{n} {one if n == 1 else many}"


def notices(a: Answer) -> list[str]:
    out = []
    if a.index_was_rebuilt:
        out.append(f"note:     {INDEX_REBUILT_VERSION if a.index_rebuilt_for_version else INDEX_REBUILT}")
    elif a.reindexed:
        out.append(f"note:     {a.reindexed} changed file(s) re-indexed before answering")
    for s in a.skipped[:5]:
        out.append(f"skipped:  {printable(s)}")
    if len(a.skipped) > 5:
        out.append(f"skipped:  ... and {len(a.skipped) - 5} more (kb index shows them all)")
    return out


def verdict_line(a: Answer) -> str:
    g = a.gate
    if a.verdict == "nothing":
        if g.ranked_by_text_only:
            return "verdict:  nothing (no label matched; the text scorer found passages, listed below, but the gate serves on labels)"
        return "verdict:  nothing"
    top = a.confidence.keyword_score
    why = f"{top:.2f} {'>=' if top >= g.floor else '<'} floor {g.floor:.2f} at {g.entries} entries"
    if g.entries < MIN_ENTRIES_TO_ROUTE:
        why = f"{counted(g.entries, 'entry', 'entries')}, below {MIN_ENTRIES_TO_ROUTE}: one note has no ruler"
    owner = printable(a.agent.name or "-")
    margin = f", agent margin {a.agent.margin:.2f}" if a.agent.margin is not None else ""
    line = f"verdict:  {a.verdict}, owner {owner} ({why}{margin})"
    if g.unread:
        line += f"; {VOUCH_SHORT[g.unread]}"
    if a.agent.chosen_by == "classifier":
        line += f"; chosen by the classifier, coverage {a.agent.coverage}"
    return line


def who_lines(a: Answer) -> list[str]:
    """Who chose the agent when a classifier was asked, and the coverage line (engine/stages/coverage)."""
    out = []
    chooser = chooser_line(a.agent)
    if chooser:
        out.append(f"agent:    {printable(chooser)}")
    line = coverage_line(a.agent)
    if line:
        out += ["", printable(line)]
    return [""] + out if out else []


def nothing_block(a: Answer) -> list[str]:
    out = ["  " + NOTHING_LINES[0], "  " + NOTHING_LINES[1]]
    if a.suggestions:
        out += ["", "  " + SUGGEST_LEAD, "    " + printable(", ".join(a.suggestions))]
        out += ["  " + LIMIT_NOTE[0], "  " + LIMIT_NOTE[1]]
    if a.miss is not None and not a.miss.recorded:
        out += ["", f"  the miss could not be logged: {printable(a.miss.error or '')}"]
    return out


def fusion_sum(fusion: dict) -> str:
    """A row's purpose-fusion score as the sum it is, so the order can be checked by hand."""
    *signals, fused = fusion_parts(fusion)
    parts = " + ".join(f"{t.label} {t.formula.replace(' × ', 'x')}" for t in signals)
    return f"{fused.formula} {fused.value:,} = {parts}"


def result_rows(a: Answer, top: int) -> list[str]:
    """The fused reading list's first `top` rows: score, agent, path, provenance, excerpt."""
    lines = []
    for r in a.results[:top]:
        lines.append(f"  {r.score:.3f}  {printable(r.base):<8} {printable(r.path):<44} {r.why}")
        if r.passages:
            lines.append(f"         {one_line(r.passages[0].excerpt)}")
        if r.fusion is not None:
            lines.append("         " + fusion_sum(r.fusion))
        if r.rerank_score is not None:
            lines.append(f"         rerank {r.rerank_score:+.3f}")
    return lines


def unvouched_rows(a: Answer, top: int) -> list[str]:
    """On a refusal, the rows the text scorer found anyway, said to be what they are."""
    rows = result_rows(a, top)
    return ["", "  the text scorer alone found these; no label vouches for them:", *rows] if rows else []


def route_keywords(a: Answer, top: int) -> str:
    lines = header(a) + notices(a) + [""]
    if not a.keyword:
        # The seed's reply to a miss, then the text scorer's rows: --json and the room's
        # reading list carry them, so the plain reply must not hide what the fleet holds.
        lines += nothing_block(a) + unvouched_rows(a, top)
        lines += who_lines(a)
        return "\n".join(lines)
    for i, k in enumerate(a.keyword[:top], start=1):
        lines.append(f"  {i:>2}. {k.score:6.2f}  {printable(k.id)}")
        lines.append(f"      matched: {printable(', '.join(k.matched))}")
    lines += ["", verdict_line(a)]
    lines += first_rows(a)
    lines += who_lines(a)
    return "\n".join(lines)


def first_rows(a: Answer) -> list[str]:
    """When the fused reading list starts elsewhere, the two first rows named with their
    scorers: row 1 above is the labels' pick (`keyword_top`, the note to open), while --json's
    `results[0]` and --hybrid's first row are the fusion's (issue 26)."""
    if not a.results or not a.keyword or a.results[0].id == a.keyword_top:
        return []
    return [
        "rows:     the keyword scorer's (labels); row 1 is the note to open (--json keyword_top)",
        f"fused:    {printable(a.results[0].id)} is row 1 of the reading list (--hybrid, --json results[0])",
    ]


def route_hybrid(a: Answer, top: int) -> str:
    lines = header(a) + notices(a) + [""]
    if a.verdict == "nothing" and a.indexed.entries == 0 and a.results:
        # "The labels do not carry the words" would be false: there are no labels at all.
        lines += ["  the text scorer found these; no note has a label yet, so none can be a HIT:"]
        lines += result_rows(a, top)
    elif a.verdict == "nothing":
        lines += nothing_block(a) + unvouched_rows(a, top)
    else:
        lines += result_rows(a, top)
    if a.verdict != "nothing":
        lines += ["", verdict_line(a)]
    lines += who_lines(a)
    for name, stage in a.stages.items():
        if isinstance(stage, dict) and stage.get("summary"):
            lines.append(f"{name}:{' ' * max(1, 9 - len(name))}{printable(str(stage['summary']))}")
    return "\n".join(lines)


UNREACHABLE_LISTED = 10  # unlabelled files listed by name when most of a base is unlabelled


def index_report(r: IndexReport, base_root: str = "") -> str:
    head = (
        f"{printable(r.base)}: {r.files} files, {r.entries} entries, {r.chunks} chunks; "
        f"{r.unchanged} unchanged, {r.added} added, {r.changed} changed, {r.removed} removed "
        f"({r.seconds * 1000:.0f} ms)"
    )
    lines = [head]
    if r.rebuilt:
        lines.append(f"  {INDEX_REBUILT_VERSION if r.rebuilt_for_version else INDEX_REBUILT}")
    if r.unreachable:
        # The text search reaches them; only the verdict, the owner and the gate need a label.
        n = len(r.unreachable)
        lines.append(f"  {n} file(s) with no Search for: line: reached by full text only, never a HIT until "
                     "labelled (kb label proposes labels):")
        # Most of a plain folder lacks labels: a list of every file would bury the rest.
        shown = r.unreachable if n <= UNREACHABLE_LISTED or 2 * n <= r.files else r.unreachable[:UNREACHABLE_LISTED]
        lines += [f"    {printable(p)}" for p in shown]
        if len(shown) < n:
            lines.append(f"    ... and {n - len(shown)} more (kb check --all lists every one)")
    if r.skipped:
        lines.append(f"  {len(r.skipped)} file(s) skipped:")
        lines += [f"    {printable(s)}" for s in r.skipped]
    if r.warnings:
        lines += [f"  warning: {printable(w)}" for w in r.warnings]
    return "\n".join(lines)
