"""`kb`: the engine on the command line, a thin surface over Memory (model: sqlite-utils).

Every answer comes from one call on Memory. Bad input ends in one line on stderr naming the
file and what is wrong, and a non-zero exit; never a traceback. `VERBS` below is the one
table of verbs: each row is the function that adds a verb's parser (and sets `func`, its
handler). A new verb is a function and one row; tests/test_docs.py fails until README.md
names it and its options.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

from .. import labelcli
from ..clean import shown
from ..errors import KbError, os_error_line
from ..evaluate import run_eval
from ..memory import Memory
from ..query import Query
from ..render import index_report, json_line, route_hybrid, route_keywords
from . import bench, misses, purpose, rerank, who


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
    answer = Memory(args.paths).ask(Query(args.question, top=max(args.top, 1), **stages))
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


def cmd_eval(args) -> int:
    if args.asks < 1:  # a median of no asks is no figure, and a negative count is a typo
        raise KbError(f"--asks {args.asks}: give a count of asks, 1 or more")
    report = run_eval(Memory(args.paths), args.gold, speed=not args.no_speed and not args.json, min_asks=args.asks)
    print(json_line(report.to_json()) if args.json else report.render())
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
    purpose.add_route_options(rt)
    rerank.add_route_options(rt)
    rt.set_defaults(func=cmd_route)


def add_eval(sub) -> None:
    ev = sub.add_parser("eval", help="grade the fleet against an answer key (gold.tsv)")
    ev.add_argument("gold", metavar="GOLD")
    ev.add_argument("paths", nargs="+", metavar="PATH")
    ev.add_argument("--no-speed", action="store_true", help="skip the SPEED block")
    ev.add_argument("--asks", type=int, default=1000, metavar="N", help="asks timed for SPEED (default 1000)")
    ev.add_argument("--json", action="store_true", help="one line of JSON: each question and the abstention matrix")
    ev.set_defaults(func=cmd_eval)


# The verb table, in `kb --help` order.
VERBS: tuple[Callable[[Any], Any], ...] = (
    add_index,
    add_route,
    add_eval,
    misses.add_misses,
    misses.add_check,
    who.add_fleet,
    who.add_boot,
    who.add_remember,
    who.add_serve,
    who.add_list,
    purpose.add_fusion,
    rerank.add_model,
    rerank.add_rerank,
    bench.add_bench,
    labelcli.register,
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kb",
        description="Route a question to the note and the agent that answer it; no model, no network.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add_verb in VERBS:
        add_verb(sub)
    return p


def _speak_utf8() -> None:
    """kb writes UTF-8 whatever the locale says, as git does: under LC_ALL=C Python's ASCII
    stdout would raise on the first accented title, and --json must stay valid JSON (a
    backslash escape would not be). A lone surrogate left in text is written as its byte."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(encoding="utf-8", errors="surrogateescape")
            except (OSError, ValueError):
                pass  # a stream that cannot be reconfigured keeps what it had


def main(argv: list[str] | None = None) -> int:
    _speak_utf8()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KbError as e:
        print(f"kb: {shown(str(e))}", file=sys.stderr)  # a refusal is one line, whatever it quotes
        return e.exit_code
    except BrokenPipeError:
        # The reader went away (`kb misses | head`): not an error. Caught before OSError, of
        # which it is one (it printed "kb: Broken pipe" and exit 1), and stdout pointed at
        # /dev/null so the flush at exit cannot raise it again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        # The last net under every verb: a failure of the file system is one line naming the
        # file and the reason (the verbs refuse what they foresee with a KbError of their own).
        print(f"kb: {os_error_line(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
