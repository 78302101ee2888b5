"""`kb misses` and `kb check`: the miss path's verbs (rows of engine/cli's verb table).

`kb misses PATH` reads kb-misses.txt back, most asked first, beside today's near misses and
a proposed alias line; it writes nothing. `kb check PATH` lints every base (engine/review/check.py
lists the codes) and exits 1 on an error, or on a warning with --strict.
"""

from __future__ import annotations

import sys
import textwrap

from ..index import collector
from ..review.check import check, summary
from ..notes.thin import THIN_ASK, THIN_BELOW
from ..errors import KbError
from ..notes.fleet import discover
from ..memory import Memory
from ..review.misses import DAMAGED_SHOWN, misses_path
from ..review.missjson import report_json_line
from ..review.missreview import REVIEW_AT_MOST, review_misses
from ..render import counted, json_line, printable
from ..notes.notefiles import list_notes
from . import add_paths

WIDTH = 100  # where the key lists wrap


def add_misses(sub) -> None:
    ms = sub.add_parser(
        "misses",
        help="the questions this fleet could not answer, most asked first, with what nearly caught them",
    )
    add_paths(ms)
    ms.add_argument("--near", type=int, default=3, metavar="N", help="files shown beside each question (default 3)")
    ms.add_argument("--limit", type=int, default=REVIEW_AT_MOST, metavar="N",
                    help=f"review the N most asked entries (default {REVIEW_AT_MOST:,}; 0: every one)")
    ms.add_argument("--json", action="store_true", help="one line of JSON")
    ms.set_defaults(func=cmd_misses)


def add_check(sub) -> None:
    ck = sub.add_parser("check", help="lint every base: labels, links, aliases; each finding names file and line")
    add_paths(ck)
    ck.add_argument("--strict", action="store_true", help="exit non-zero on warnings too")
    ck.add_argument("--json", action="store_true", help="one line of JSON")
    ck.add_argument("--all", action="store_true",
                    help="list every finding, even those folded into one line per base (missing labels, thin lines)")
    ck.set_defaults(func=cmd_check)


# -- kb misses -----------------------------------------------------------------------


def cmd_misses(args) -> int:
    if args.near < 0:
        raise KbError(f"--near {args.near}: give a count of files, 0 or more")
    if args.limit < 0:
        raise KbError(f"--limit {args.limit}: give a count of entries, or 0 for every one")
    mem = Memory(args.paths)
    # The review and its rendering keep a row per entry: no collector pass walks them, now,
    # when the pause ends, or at exit (engine/index/collector.py).
    collector.no_pass_at_exit()
    with collector.paused(freeze_after=True):
        try:
            report = review_misses(mem, near=args.near, limit=args.limit or None)
        except (OSError, UnicodeDecodeError) as e:
            raise KbError(f"{misses_path(mem.fleet.root)}: cannot read ({getattr(e, 'strerror', None) or e})") from e
        for line in damaged_lines(report):
            print(f"kb: {line}", file=sys.stderr)
        if args.json:
            print(report_json_line(report))  # C1 and bidi escaped: safe on a terminal
        else:
            snap = mem.snapshot()
            print(render_misses(report, entries=snap.catalogue.n, agents=len(mem.bases), aliases=len(snap.aliases)))
    return 0


def damaged_lines(report) -> list[str]:
    """The first few unreadable lines of the log, then how many more: a log torn tens of
    thousands of times must not bury the worklist under a stderr line each."""
    shown = [printable(p) for p in report.problems[:DAMAGED_SHOWN]]
    more = len(report.problems) - len(shown)
    if more > 0:
        shown.append(f"and {more:,} more damaged lines in {printable(str(report.path))}")
    return shown


def render_misses(report, *, entries: int, agents: int, aliases: int) -> str:
    path = printable(str(report.path))
    if not report.reviews:
        why = "nothing has been missed yet" if not report.exists else "it holds no entries"
        return f"misses:   {path}: {why}"
    q = len(report.reviews)
    lines = [
        f"misses:   {path}, {counted(q, 'question', 'questions')}, asked {counted(report.total, 'time', 'times')}",
        f"indexed:  {counted(entries, 'entry', 'entries')} across {counted(agents, 'agent', 'agents')}, "
        f"{counted(aliases, 'alias', 'aliases')}",
    ]
    for r in report.reviews:
        e = r.entry
        lines += ["", f"  {e.count:>3}  {printable(e.question)}"]
        now = r.verdict_now + (f" on {printable(r.top_now)}" if r.top_now and r.verdict_now != "nothing" else "")
        lines.append(f"       first {e.first_seen}, last {e.last_seen}; today: {now}")
        lines.append(f"       looked like: {printable(e.looked_like) if e.looked_like else '(nothing)'}")
        for kind, near in (("the text of:", [f for f in r.near if f.text_rank]),
                           ("the spelling of a key in:", [f for f in r.near if not f.text_rank])):
            if not near:
                continue
            lines.append("       nearly caught by " + kind)
            for f in near:
                rank = f"text #{f.text_rank}  " if f.text_rank else ""
                lines.append(f"         {rank}{printable(f.id)}")
                if f.keys:
                    head = f"keys (line {f.label_line}): " if f.label_line else "keys: "
                    body = printable(", ".join(f.keys))
                    wrapped = textwrap.wrap(head + body, WIDTH - 11, break_on_hyphens=False) or [head]
                    lines += ["           " + w for w in wrapped]
                else:
                    lines.append("           no keys: it has no Search for: line")
        p = r.proposal
        if p is not None:
            basis = (
                f"spelled like a key of {printable(p.file)}" if p.basis == "spelling"
                else f"the text of {printable(p.file)} holds these words; {printable(p.canonical)} is its first key"
            )
            with_it = p.verdict_with_it + (f" on {printable(p.top_with_it)}" if p.top_with_it else "")
            lines.append(f"       propose: {printable(p.line)}")
            lines.append(f"                ({basis}; with it: {with_it}, {p.score_with_it:.2f})")
        for a in r.advice:
            lines.append(f"       {printable(a)}")
    if any(r.proposal for r in report.reviews):
        # `me conta uma piada` is spelled like `contar calorias`: a proposal can be proved to
        # hit and still be false, and only a reader can tell.
        lines += ["", "  a proposed line is spelled like the question, which is not the same as meaning it:",
                  "  write it to kb-aliases.txt only if it is true."]
    if report.not_reviewed:
        n = report.not_reviewed
        lines += ["", f"  {n:,} less asked entr{'ies' if n != 1 else 'y'} not reviewed (--limit {len(report.reviews)}; "
                  "--limit 0 reviews every one)."]
    lines += ["", "  kb misses writes nothing; delete an entry from kb-misses.txt once it is answered."]
    return "\n".join(lines)


# -- kb check ------------------------------------------------------------------------


def cmd_check(args) -> int:
    fleet = discover(args.paths)
    findings = check(fleet)
    errors, warnings = summary(findings)
    if args.json:
        print(json_line({
            "root": str(fleet.root),
            "bases": [b.name for b in fleet.bases],
            "errors": errors,
            "warnings": warnings,
            "findings": [f.to_json() for f in findings],
        }))
        return 1 if errors or (args.strict and warnings) else 0
    folded = {} if args.all else fold(fleet, findings)
    for f in findings:
        if (f.base, f.code) not in folded:
            print(f"{printable(f.where)}: {f.code} {f.severity}: {printable(f.message)}")
    for (base, code), count in folded.items():
        print(f"{printable(base)}: {code} {FOLDED[code](count, fleet, base)} (kb check --all lists them)")
    n = len(fleet.bases)
    hidden_e = sum(c for (_, code), c in folded.items() if code.startswith("E"))
    hidden_w = sum(c for (_, code), c in folded.items() if code.startswith("W"))
    verdict = "clean" if not findings else ", ".join([
        f"{errors} error{'s' if errors != 1 else ''}" + (f" ({hidden_e} of them folded above)" if hidden_e else ""),
        f"{warnings} warning{'s' if warnings != 1 else ''}" + (f" ({hidden_w} of them folded above)" if hidden_w else ""),
    ])
    print(f"kb check: {n} base{'s' if n != 1 else ''} under {printable(str(fleet.root))}: {verdict}")
    return 1 if errors or (args.strict and warnings) else 0


# A code repeated more than this in one base is one line for the base (--all lists each):
# 4,580 thin lines after a first `kb label` buried the one broken link among them.
FOLD_OVER = 5


def _notes(fleet, base: str) -> int:
    return len(list_notes(next(b for b in fleet.bases if b.name == base).root)[0])


def _unlabelled(count: int, fleet, base: str) -> str:
    return (f"{count} of {_notes(fleet, base)} notes have no Search for: line; the text search reaches them, "
            "but none can be a HIT until labelled: kb label proposes labels")


FOLDED = {
    "E02": lambda count, fleet, base: "error: " + _unlabelled(count, fleet, base),
    "W09": lambda count, fleet, base: "warning: " + _unlabelled(count, fleet, base),
    "W06": lambda count, fleet, base: (
        f"warning: {count} notes have a thin keyword line (under {THIN_BELOW} terms). A question uses words the "
        f"writer did not think of; aim for {THIN_ASK}, in both languages, including the words somebody types "
        "from inside the problem"),
}


def fold(fleet, findings) -> dict[tuple[str, str], int]:
    """{(base, code): count} for the findings printed as one line per base: missing labels
    where most of the base lacks one (one error per note would bury a broken link under a
    plain folder's first run), and any foldable code repeated more than FOLD_OVER times."""
    counts: dict[tuple[str, str], int] = {}
    for f in findings:
        if f.code in FOLDED:
            counts[(f.base, f.code)] = counts.get((f.base, f.code), 0) + 1
    out = {}
    for (base, code), count in counts.items():
        if count > FOLD_OVER or (code != "W06" and count > 1 and 2 * count > _notes(fleet, base)):
            out[(base, code)] = count
    return out
