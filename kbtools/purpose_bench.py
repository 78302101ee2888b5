"""The fusion stage's wall, measured: `python3 -m kbtools.purpose_bench [--runs N]`.

Synthetic pools of 100, 500 and 1,000 rows drawn from a fixed store of notes with real ages
(0 to 2 years) and a sparse link graph served from memory; the stage is `order_pool`, i.e.
text normalisation, the hop walk, recency, boosts, the integer combine and the sort. Prints the
median and p95 per purpose and the 1000/500 ratio: the wall should grow with the pool and with
nothing else, which the last block checks by holding the pool at 500 and growing the store.
Never run as a test: timings on a shared machine are evidence, not assertions.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time

from engine.stages.purpose.links import undirected
from engine.stages.purpose.stage import PoolRow, order_pool
from engine.stages.purpose.weights import DAY_MS, PURPOSE_NAMES

NOW_MS = 1_788_998_400_000
POOLS = (100, 500, 1000)
STORE = 20_000  # notes in the synthetic store the pools are drawn from
LINKS_PER_NOTE = 3


def make_store(n: int, seed: int = 11) -> tuple[list[str], dict[str, tuple[str, ...]], dict[str, int]]:
    rng = random.Random(seed)
    ids = [f"{('zed', 'steve', 'yaron')[i % 3]}/knowledge/note-{i:06d}.md" for i in range(n)]
    links = {i: [ids[rng.randrange(n)] for _ in range(LINKS_PER_NOTE)] for i in ids}
    dates = {i: NOW_MS - rng.randrange(730 * DAY_MS) for i in ids}
    return ids, undirected(links), dates


def make_pool(ids: list[str], dates: dict[str, int], size: int, seed: int = 5) -> list[PoolRow]:
    rng = random.Random(seed + size)
    chosen = rng.sample(ids, size)
    rows = []
    for rank, nid in enumerate(chosen, start=1):
        base = nid.split("/", 1)[0]
        # An RRF-shaped text score: one or two lists, each 1/(60 + rank).
        text = 1 / (60 + rank) + (1 / (60 + rng.randrange(1, size + 1)) if rng.random() < 0.5 else 0.0)
        rows.append(PoolRow(nid, text, dates[nid], {"agent": base, "base": base, "species": "memory"}))
    return rows


def time_stage(pool, graph, purpose: str, runs: int, boosts=()) -> list[float]:
    walls = []
    order_pool(pool, purpose=purpose, graph=graph, now_ms=NOW_MS, boosts=boosts)  # warm
    gc.collect()
    for _ in range(runs):
        t = time.perf_counter_ns()
        order_pool(pool, purpose=purpose, graph=graph, now_ms=NOW_MS, boosts=boosts)
        walls.append((time.perf_counter_ns() - t) / 1e6)
    return walls


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, (95 * len(s) + 99) // 100 - 1)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m kbtools.purpose_bench", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200, help="timed runs per cell (default 200)")
    args = ap.parse_args(argv)
    ids, graph, dates = make_store(STORE)
    boosts = ["agent=zed:0.5"]
    print(f"fusion stage wall (ms), {args.runs} runs per cell, store of {STORE:,} notes, ~{LINKS_PER_NOTE} links each")
    print(f"{'purpose':<13}" + "".join(f"{f'pool {n}':>22}" for n in POOLS) + f"{'1000/500':>10}")
    print(f"{'':<13}" + "".join(f"{'median':>11}{'p95':>11}" for _ in POOLS))
    for purpose in PURPOSE_NAMES:
        medians = {}
        cells = []
        for n in POOLS:
            walls = time_stage(make_pool(ids, dates, n), graph, purpose, args.runs, boosts)
            medians[n] = statistics.median(walls)
            cells.append(f"{medians[n]:>11.3f}{p95(walls):>11.3f}")
        print(f"{purpose:<13}" + "".join(cells) + f"{medians[1000] / medians[500]:>10.2f}")
    print()
    print("pool fixed at 500, store grown (the wall should not follow the store):")
    for store in (5_000, 20_000, 80_000):
        s_ids, s_graph, s_dates = make_store(store)
        walls = time_stage(make_pool(s_ids, s_dates, 500), s_graph, "conversation", args.runs, boosts)
        print(f"  store {store:>6,}: conversation median {statistics.median(walls):.3f} ms, p95 {p95(walls):.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
