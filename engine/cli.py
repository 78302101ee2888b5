"""`kb`: the engine on the command line. Every answer comes from one call on Memory.

Bad input ends in one line on stderr naming the file and what is wrong, and a non-zero
exit; never a traceback. Verbs that belong to an optional stage live beside the stage
(engine/<stage>/cli.py) and are mounted here, so this file stays a table of contents.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

# Stage modules that add verbs (`register(subparsers)`) and/or `kb route` options
# (`add_route_options(parser)` + `route_kwargs(args)`). Imported only when `kb` starts.
STAGE_CLI_MODULES = ("engine.purpose.cli", "engine.rerank.cli", "engine.whocli", "engine.misscli", "engine.benchcli")


def _stage_modules() -> list[Any]:
    mods = []
    for name in STAGE_CLI_MODULES:
        try:
            mods.append(importlib.import_module(name))
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
    return mods


def _memory(paths, **kw):
    from .memory import Memory

    return Memory(paths, **kw)


def cmd_index(args) -> int:
    from .render import index_report

    mem = _memory(args.paths, update=False)
    code = 0
    for name, idx in mem.indexes.items():
        report = idx.update(force=args.force)
        print(index_report(report))
        if report.skipped:
            code = 0  # a skipped note is reported, not fatal: the rest of the base is indexed
        if idx.memory_reason:  # indexed, but nothing was saved: the one thing `kb index` is for
            print(f"kb: {idx.memory_reason}", file=sys.stderr)
            code = 1
    return code


def cmd_route(args, stage_kwargs: dict[str, Any]) -> int:
    from .render import json_line, route_hybrid, route_keywords

    mem = _memory(args.paths)
    answer = mem.ask(args.question, top=max(args.top, 1), **stage_kwargs)
    if args.json:
        print(json_line(answer.to_json()))
    elif args.hybrid or stage_kwargs:
        print(route_hybrid(answer, args.top))
    else:
        print(route_keywords(answer, args.top))
    return 0


def cmd_eval(args) -> int:
    from .evaluate import run_eval

    mem = _memory(args.paths)
    report = run_eval(mem, args.gold, speed=not args.no_speed and not args.json, min_asks=args.asks)
    if args.json:
        from .render import json_line

        print(json_line(report.to_json()))
    else:
        print(report.render())
    return 0


def build_parser(mods: list[Any]) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kb",
        description="Route a question to the note and the agent that answer it; no model, no network.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    ix = sub.add_parser("index", help="build or update each base's index at <base>/.kb/index.db")
    ix.add_argument("paths", nargs="+", metavar="PATH", help="a base or a fleet root")
    ix.add_argument("--force", action="store_true", help="re-read every note, changed or not")
    ix.set_defaults(func=lambda a: cmd_index(a))

    rt = sub.add_parser("route", help="which note answers, which agent owns it, and whether to trust it")
    rt.add_argument("question")
    rt.add_argument("paths", nargs="+", metavar="PATH", help="a base or a fleet root")
    rt.add_argument("--top", type=int, default=5, metavar="N", help="how many rows to show (default 5)")
    rt.add_argument("--hybrid", action="store_true", help="show the fused reading list (labels + full text)")
    rt.add_argument("--json", action="store_true", help="one line of JSON (always fused)")
    for m in mods:
        if hasattr(m, "add_route_options"):
            m.add_route_options(rt)
    rt.set_defaults(func=None)

    ev = sub.add_parser("eval", help="grade the fleet against an answer key (gold.tsv)")
    ev.add_argument("gold", metavar="GOLD")
    ev.add_argument("paths", nargs="+", metavar="PATH")
    ev.add_argument("--no-speed", action="store_true", help="skip the SPEED block")
    ev.add_argument("--asks", type=int, default=1000, metavar="N", help="asks timed for SPEED (default 1000)")
    ev.add_argument("--json", action="store_true", help="one line of JSON: each question and the abstention matrix")
    ev.set_defaults(func=lambda a: cmd_eval(a))

    for m in mods:
        if hasattr(m, "register"):
            m.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    from .errors import KbError

    mods = _stage_modules()
    parser = build_parser(mods)
    args = parser.parse_args(argv)
    try:
        if args.command == "route":
            stage_kwargs: dict[str, Any] = {}
            for m in mods:
                if hasattr(m, "route_kwargs"):
                    stage_kwargs.update(m.route_kwargs(args))
            return cmd_route(args, stage_kwargs)
        return int(args.func(args) or 0)
    except KbError as e:
        print(f"kb: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
