"""`kb bench`, a row of engine/cli's verb table. The measuring itself lives in kbtools/bench.py and is
imported only when the verb runs, so `kb route` never pays for it.

    kb bench PATH... [--questions FILE] [--repeat N] [--json] [--plot FILE.png|svg]
    kb bench --sweep 1000,10000,60000 [--dir DIR] [--seed N] [--bases N] [--json] [--plot FILE]
    kb bench --from RESULTS.json [--plot FILE]          (re-print / re-plot saved --json output)
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import KbError

DEFAULT_SWEEP_DIR = "/tmp/kb-bench"


def add_bench(subparsers: Any) -> None:
    b = subparsers.add_parser(
        "bench",
        help="measure each leg's latency, the index build, memory, and the distance to a bare FTS5 query",
        description="Per-question latency of the keyword leg, the text leg and the fused answer (median, p95), "
        "against a bare FTS5 query sending the engine's own expression; index build and no-op re-index; peak RSS; "
        "the pruning rule on and off; top-10 agreement and speed against bm25s when installed. "
        "Speed on a shared machine is evidence, so the load average is printed beside it.",
    )
    b.add_argument("paths", nargs="*", metavar="PATH", help="a base or a fleet root (default: .; none with --sweep / --from)")
    b.add_argument("--questions", metavar="FILE", help="one question per line, or question<TAB>answer lines"
                   " (default: the fleet's questions.tsv, else gold.tsv, else drawn from its labels)")
    b.add_argument("--repeat", type=int, default=3, metavar="N", help="times each question is timed (median kept)")
    b.add_argument("--json", action="store_true", help="print the report as JSON")
    b.add_argument("--plot", metavar="FILE", help="draw latency against haystack size per leg (.png or .svg; matplotlib)")
    b.add_argument("--sweep", metavar="SIZES", help="generate haystacks of these chunk counts (e.g. 1000,10000,60000) and measure each")
    b.add_argument("--dir", default=DEFAULT_SWEEP_DIR, metavar="DIR", help=f"where the sweep's haystacks go (default {DEFAULT_SWEEP_DIR})")
    b.add_argument("--seed", type=int, default=8, help="the haystack seed (default 8)")
    b.add_argument("--bases", type=int, default=4, help="agents per haystack; the first holds 70%% (default 4)")
    b.add_argument("--sweep-questions", type=int, default=300, metavar="N", help="questions per haystack (default 300)")
    b.add_argument("--from", dest="from_json", nargs="+", metavar="JSON", help="saved --json output to print or plot again")
    b.add_argument("--no-index", action="store_true", help="skip the full index build")
    b.add_argument("--no-fresh", action="store_true", help="skip the fresh-process measurements")
    b.add_argument("--no-bm25s", action="store_true", help="skip the bm25s comparison")
    b.add_argument("--no-prune-off", action="store_true", help="skip timing with the pruning rule off")
    b.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    b.set_defaults(func=cmd_bench)


def _sizes(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        mult = 1000 if part.endswith("k") else 1
        try:
            n = int(float(part.rstrip("k")) * mult)
        except ValueError:
            raise KbError(f"--sweep: {part!r} is not a chunk count (write 1000,10000,60000 or 1k,10k,60k)") from None
        if n < 20:
            raise KbError(f"--sweep: {n} chunks is too few to measure (at least 20)")
        out.append(n)
    return out


def cmd_bench(args: argparse.Namespace) -> int:
    from kbtools import bench  # tooling: imported when the verb runs

    say = None if args.quiet else (lambda s: print(f"bench: {s}", file=sys.stderr, flush=True))
    if args.plot and not args.plot.lower().endswith((".png", ".svg", ".pdf")):
        raise KbError(f"--plot {args.plot}: name a .png or .svg file")
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise KbError("--plot needs matplotlib: pip install 'kbtui[bench]'") from None
    kw = dict(
        repeat=max(1, args.repeat), index=not args.no_index, fresh=not args.no_fresh, bm25=not args.no_bm25s,
        prune=not args.no_prune_off, progress=say,
    )
    if args.from_json:
        runs = []
        for p in args.from_json:
            try:
                data = json.loads(open(p, encoding="utf-8").read())
            except (OSError, ValueError) as e:
                raise KbError(f"{p}: not a kb bench --json file ({e})") from None
            runs.extend(data["runs"] if isinstance(data, dict) and "runs" in data else [data])
        sweep_mode = len(runs) > 1
    elif args.sweep:
        if args.paths:
            raise KbError("--sweep generates its own haystacks: give no PATH with it")
        runs = bench.sweep(_sizes(args.sweep), args.dir, seed=args.seed, bases=args.bases,
                           n_questions=args.sweep_questions, **kw)
        sweep_mode = True
    else:
        args.paths = args.paths or ["."]  # PATH defaults to . for every verb; --sweep and --from read none
        questions = bench.load_questions(args.questions) if args.questions else None
        runs = [bench.run_bench(args.paths, questions=questions, questions_source=args.questions or "", **kw)]
        sweep_mode = False
    if args.plot:
        bench.plot(runs, args.plot)
        if say:
            say(f"plot written to {args.plot}")
    if args.json:
        print(json.dumps({"runs": runs} if sweep_mode else runs[0], indent=1, sort_keys=True))
    else:
        print("\n\n".join(bench.render(r) for r in runs))
        if sweep_mode:
            print("\n" + bench.render_sweep(runs))
    return 0
