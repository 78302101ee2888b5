"""`kb index` and `kb route`: the index and the question (rows of engine/cli's verb table).

`kb route` is the one-shot a prompt hook runs many times a minute: this module imports what
a plain route needs and no more (the optional stages' options are parsed here, their code
is imported only when one is asked for).
"""

from __future__ import annotations

import sys

from ..memory import Memory
from ..covered import OPTION, OPTION_HELP
from ..query import Query
from ..render import index_report, json_line, route_hybrid, route_keywords
from . import purpose, rerank


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
    answer = Memory(args.paths, coverage_rule=args.coverage_rule or None).ask(Query(args.question, top=max(args.top, 1), **stages))
    if args.json:
        print(json_line(answer.to_json()))
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


def add_index(sub) -> None:
    ix = sub.add_parser("index", help="build or update each base's index at <base>/.kb/index.db")
    ix.add_argument("paths", nargs="+", metavar="PATH", help="a base or a fleet root")
    ix.add_argument("--force", action="store_true", help="re-read every note, changed or not")
    ix.set_defaults(func=cmd_index)


def add_route(sub) -> None:
    rt = sub.add_parser("route", help="which note answers, which agent owns it, and whether to trust it")
    rt.add_argument("question")
    rt.add_argument("paths", nargs="+", metavar="PATH", help="a base or a fleet root")
    rt.add_argument("--top", type=int, default=5, metavar="N", help="how many rows to show (default 5)")
    rt.add_argument("--hybrid", action="store_true", help="show the fused reading list (labels + full text)")
    rt.add_argument("--json", action="store_true", help="one line of JSON (always fused)")
    rt.add_argument(OPTION, action="store_true", help=OPTION_HELP)
    purpose.add_route_options(rt)
    rerank.add_route_options(rt)
    rt.set_defaults(func=cmd_route)
