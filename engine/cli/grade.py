"""`kb eval`: grade the fleet against an answer key (a row of engine/cli's verb table)."""

from __future__ import annotations

from ..rank.covered import OPTION, OPTION_HELP
from ..errors import KbError
from ..review.evaluate import SPEED_MAX_ASKS, run_eval
from ..memory import Memory
from ..render import json_line
from . import add_paths


def cmd_eval(args) -> int:
    if args.asks < 1:  # a median of no asks is no figure, and a negative count is a typo
        raise KbError(f"--asks {args.asks}: give a count of asks, 1 or more")
    if args.asks > SPEED_MAX_ASKS:
        raise KbError(f"--asks {args.asks}: at most {SPEED_MAX_ASKS:,} asks (a median is steady long before)")
    report = run_eval(Memory(args.paths, coverage_rule=args.coverage_rule or None), args.gold, speed=not args.no_speed and not args.json, min_asks=args.asks,
                      pipe_ok=True)  # the key named on the command line may be `<(...)`
    print(json_line(report.to_json()) if args.json else report.render())
    return 0


def add_eval(sub) -> None:
    ev = sub.add_parser("eval", help="grade the fleet against an answer key (gold.tsv)")
    ev.add_argument("gold", metavar="GOLD")
    add_paths(ev)
    ev.add_argument("--no-speed", action="store_true", help="skip the SPEED block")
    ev.add_argument("--asks", type=int, default=1000, metavar="N", help=f"asks timed for SPEED (default 1000, at most {SPEED_MAX_ASKS:,})")
    ev.add_argument("--json", action="store_true", help="one line of JSON: each question and the abstention matrix")
    ev.add_argument(OPTION, action="store_true", help=OPTION_HELP)
    ev.set_defaults(func=cmd_eval)
