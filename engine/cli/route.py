"""`kb index` and `kb route`: the index and the question (rows of engine/cli's verb table).

`kb route` is the one-shot a prompt hook runs many times a minute: this module imports what
a plain route needs and no more (the optional stages' options are parsed here, their code
is imported only when one is asked for).
"""

from __future__ import annotations

import sys

from ..rank.covered import OPTION, OPTION_HELP
from ..memory import RANK_CANDIDATE_POOL, Memory
from ..query import DEFAULT_TOP, Query, top_limit
from ..render import index_report, json_line, route_hybrid, route_keywords
from . import MISSES_HELP, add_no_record, add_paths, purpose, rerank


def cmd_index(args) -> int:
    code = 0
    for report, unsaved in Memory(args.paths, update=False).index(force=args.force):
        print(index_report(report))  # a skipped note is reported, not fatal: the rest of the base is indexed
        if unsaved:  # indexed, but nothing was saved: the one thing `kb index` is for
            print(f"kb: {unsaved}", file=sys.stderr)
            code = 1
    return code


def cmd_route(args) -> int:
    # Each stage's options come back empty when not given, so a plain route is byte-identical.
    stages = {**purpose.route_kwargs(args), **rerank.route_kwargs(args)}
    answer = Memory(args.paths, coverage_rule=args.coverage_rule or None).ask(
        Query(args.question, top=max(args.top, 1), record_miss=not args.no_record, **stages))
    past = top_limit(args.top, len(answer.results))
    if past and not args.json:
        print(TOP_NOTE.format(**past), file=sys.stderr)
    if args.json:
        print(json_line({**answer.to_json(), **({"top_limit": past} if past else {})}))
    elif args.hybrid or stages:
        print(route_hybrid(answer, args.top))
    elif answer.indexed.entries == 0:
        # No note carries a label: the text reading list is all there is, so it is the answer.
        print("no note here has a Search for: line yet, so this is the full-text reading list "
              "(never a HIT until labelled): kb label PATH proposes labels")
        print(route_hybrid(answer, args.top))
    else:
        print(route_keywords(answer, args.top))
    return 0


# --top has no limit below what a question's candidates hold: the text leg's best
# RANK_CANDIDATE_POOL passages and every label the keywords matched (a constant pool, so a page
# size never changes the ordering). Past it the answer says so, here and over MCP.
POOL_HELP = (f"no limit below what the question's candidates hold: the text leg's {RANK_CANDIDATE_POOL} best "
             "and every label matched")
TOP_NOTE = "kb route: --top {asked}: {rows} rows in the reading list, all this question's candidates hold (" + POOL_HELP.split(": ", 1)[1] + ")"



def add_index(sub) -> None:
    ix = sub.add_parser("index", help="build or update each base's index at <base>/.kb/index.db")
    add_paths(ix)
    ix.add_argument("--force", action="store_true", help="re-read every note, changed or not")
    ix.set_defaults(func=cmd_index)


def add_route(sub) -> None:
    rt = sub.add_parser("route", help="which note answers, which agent owns it, and whether to trust it",
                        epilog=MISSES_HELP)
    rt.add_argument("question")
    add_paths(rt)
    rt.add_argument("--top", type=int, default=5, metavar="N",
                    help=f"how many rows to show (default {DEFAULT_TOP}; {POOL_HELP})")
    rt.add_argument("--hybrid", action="store_true", help="show the fused reading list (labels + full text)")
    rt.add_argument("--json", action="store_true", help="one line of JSON (always fused)")
    rt.add_argument(OPTION, action="store_true", help=OPTION_HELP)
    add_no_record(rt)
    purpose.add_route_options(rt)
    rerank.add_route_options(rt)
    rt.set_defaults(func=cmd_route)
