"""`kb rerank bench`: what the stage costs on this machine, at the real MiniLM-L6 geometry.

Weights are generated (they do not change what a forward pass costs), the tokenizer is a
WordPiece trained here, and the model goes through `kb model import` like any other, so the
graph timed is the graph the stage runs. Printed, never asserted: a timed test would be a
test of the machine. Beside each per-pair figure the run measures the machine's own limit
(numpy float32 matmul GFLOP/s) and the forward pass's FLOPs per pair, so a figure reads as a
fraction of what the hardware can do.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from .synth import CORPUS, MINILM_L6, train_wordpiece, write_checkpoint

QUESTION = "what did we decide about the embedding spaces"
KS = (16, 32, 64)
ROW_WORDS = (30, 120)
# The bench's WordPiece is trained small so words split into pieces about as often as BERT's
# 30,522-piece vocabulary splits English prose (~1.3 tokens per word); the figure is printed.
BENCH_VOCAB = 480


@dataclass(frozen=True)
class Cell:
    precision: str
    k: int
    words: int
    tokens_per_pair: float  # median pair length, special tokens included
    wall_ms: list[float]
    flops_per_pair: float

    @property
    def median(self) -> float:
        return statistics.median(self.wall_ms)

    @property
    def p95(self) -> float:
        return _p95(self.wall_ms)


def _p95(xs: Sequence[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(0.95 * (len(s) - 1)))))]


def rows_of(words: int, n: int, seed: int = 0) -> list[str]:
    """n distinct rows of about `words` words, windows over the corpus at different offsets."""
    import random

    rnd = random.Random(seed)
    vocab = CORPUS.split()
    out = []
    for i in range(n):
        start = rnd.randrange(len(vocab))
        span = max(1, words + rnd.randint(-words // 10, words // 10))
        out.append(" ".join(vocab[(start + j) % len(vocab)] for j in range(span)))
    return out


def forward_flops(seq: int, geo: dict[str, Any] = MINILM_L6) -> float:
    """Multiply-adds x 2 of one BERT forward pass over one pair of `seq` tokens."""
    H, I, L = geo["hidden_size"], geo["intermediate_size"], geo["num_hidden_layers"]
    per_layer = 2 * seq * H * 3 * H + 2 * 2 * seq * seq * H + 2 * seq * H * H + 2 * 2 * seq * H * I
    return float(L * per_layer + 2 * H * H + 2 * H)


def matmul_gflops(n: int = 1024, seconds: float = 1.5) -> float:
    """numpy float32 GEMM throughput on this machine now (median of repeated n x n products)."""
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    a @ b
    rates = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(rates) < 5:
        t = time.perf_counter()
        a @ b
        rates.append(2 * n**3 / (time.perf_counter() - t) / 1e9)
    return statistics.median(rates)


def build_minilm(workdir: Path, *, log: Any = print) -> Path:
    """A MiniLM-L6-shaped cross-encoder (generated weights), imported with fp32 and int8 files."""
    from .importer import INT8_FILE, MODEL_FILE, import_checkpoint

    out = workdir / "minilm-l6-plain"
    if (out / MODEL_FILE).is_file() and (out / INT8_FILE).is_file():
        return out
    t = time.perf_counter()
    tok = train_wordpiece([CORPUS], vocab_size=BENCH_VOCAB)
    src = write_checkpoint(workdir / "minilm-src", dict(MINILM_L6), tok, seed=7, name="kb-bench/minilm-l6-generated")
    rep = import_checkpoint(src, out, int8=True)
    log(f"built {out} in {time.perf_counter() - t:.1f}s: plain graph, fp32 vs numpy {rep.max_abs_diff:.1e}")
    return out


@dataclass
class _Job:
    label: str
    stage: Any
    cands: list[Any]
    k: int
    words: int
    seq: float
    flops: float
    walls: list[float]


def _job(label: str, model_dir: Path, precision: str, k: int, words: int, threads: int | None, spin: bool | None = None) -> _Job:
    from engine.stages.rerank.stage import Candidate, RerankStage

    stage = RerankStage(model_dir, precision, threads, spin=spin)
    stage.warm()  # the load is not part of the leg
    texts = rows_of(words, k, seed=k * 1000 + words)
    cands = [Candidate(id=f"r{i}", text=t) for i, t in enumerate(texts)]  # no version: never cached
    m = stage.model
    lens = sorted(len(p) for p in m.pairs(m.question_ids(QUESTION), texts))
    return _Job(label, stage, cands, k, words, float(statistics.median(lens)), statistics.mean(forward_flops(n) for n in lens), [])


def time_jobs(jobs: Sequence[_Job], runs: int) -> None:
    """The whole leg as the stage runs it (tokenise, 1-then-4 sub-batches, read the logits), timed
    round-robin: every job runs once per round, so a load spike from elsewhere lands on all alike."""
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(runs + 1):
            for n, j in enumerate(jobs):
                stamp_dir = os.path.join(tmp, str(n))  # one store per job: each is stamped by its own model
                t = time.perf_counter()
                j.stage.rerank(QUESTION, j.cands, j.k, [stamp_dir], top_k=j.k, budget_ms=1e9)
                if r:  # the first round warms allocators and caches; discarded
                    j.walls.append((time.perf_counter() - t) * 1000.0)


def parity(model_dir: Path, n: int = 256, threads: int | None = None) -> dict[str, Any]:
    """fp32 vs int8 served order over one question and n rows: top-32 overlap, Spearman, first differing rank."""
    from engine.stages.rerank.stage import Candidate, RerankStage, order_with_ties

    texts = rows_of(30, n, seed=99)
    cands = [Candidate(id=f"r{i}", text=t) for i, t in enumerate(texts)]
    scores = {}
    for prec in ("fp32", "int8"):
        st = RerankStage(model_dir, prec, threads)
        m = st.model
        scores[prec] = m.score(m.pairs(m.question_ids(QUESTION), texts))
    a = order_with_ties(scores["fp32"])
    b = order_with_ties(scores["int8"])
    first = next((i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    ra = {r: i for i, r in enumerate(a)}
    rb = {r: i for i, r in enumerate(b)}
    d2 = sum((ra[i] - rb[i]) ** 2 for i in range(n))
    spearman = 1 - 6 * d2 / (n * (n * n - 1))
    diffs = [abs(x - y) for x, y in zip(scores["fp32"], scores["int8"])]
    return {
        "rows": n,
        "top32_overlap": len(set(a[:32]) & set(b[:32])),
        "spearman": spearman,
        "first_differing_rank": first,
        "max_abs_logit_diff": max(diffs),
        "median_abs_logit_diff": statistics.median(diffs),
        "logit_spread_fp32": max(scores["fp32"]) - min(scores["fp32"]),
        "candidates": len(cands),
    }


def int8_isolation(model_dir: Path, n: int = 12) -> dict[str, float]:
    """Why int8 runs one pair per call: a pair's logit alone vs inside one padded batch of n."""
    from engine.stages.rerank.model import CrossEncoder

    m = CrossEncoder(model_dir, "int8")
    pairs = m.pairs(m.question_ids(QUESTION), rows_of(30, n, seed=5) + rows_of(120, 2, seed=6))
    alone = [m._run([p])[0] for p in pairs]
    batched = m._run(pairs)  # one call: activation scales taken over every pair and the padding
    stage_way = m.score(pairs)  # what the stage does
    return {
        "batched_max_shift": max(abs(a - b) for a, b in zip(alone, batched)),
        "stage_max_shift": max(abs(a - b) for a, b in zip(alone, stage_way)),
    }


def fused_graph_dir(workdir: Path) -> Path:
    """The same weights after onnxruntime's offline BERT fusions (Attention, SkipLayerNorm, BiasGelu)."""
    from .importer import import_checkpoint

    out = workdir / "minilm-l6-fused"
    if not (out / "model.onnx").is_file() or not (out / "model_int8.onnx").is_file():
        import_checkpoint(workdir / "minilm-src", out, int8=True, fuse=True)
    return out


def levers(workdir: Path, model_dir: Path, runs: int, say: Any) -> None:
    """K=32 at 30-word rows with one lever moved at a time, so each lever's share is visible."""
    fused = fused_graph_dir(workdir)
    jobs = [
        _job(label, d, prec, 32, 30, th, spin)
        for label, d, prec, th, spin in (
            ("fp32 offline-fused graph (--fuse), 2 threads", fused, "fp32", 2, False),
            ("int8 offline-fused graph (--fuse), 2 threads", fused, "int8", 2, False),
            ("fp32 plain graph, 1 thread", model_dir, "fp32", 1, False),
            ("fp32 plain graph, 2 threads, dynamic blocks", model_dir, "fp32", 2, False),
            ("fp32 plain graph, 2 threads, spinning", model_dir, "fp32", 2, True),
            ("int8 plain graph, 1 thread", model_dir, "int8", 1, False),
            ("int8 plain graph, 2 threads, dynamic blocks", model_dir, "int8", 2, False),
            ("int8 plain graph, 2 threads, spinning", model_dir, "int8", 2, True),
        )
    ]
    time_jobs(jobs, runs)
    say("levers, K=32 at ~30-word rows, one moved at a time, interleaved (wall median / p95 ms):")
    for j in jobs:
        say(f"  {j.label:<52} {statistics.median(j.walls):7.1f} / {_p95(j.walls):7.1f}")


def run(workdir: str | Path | None = None, runs: int = 7, threads: int | None = None, precisions: Sequence[str] = ("fp32", "int8"),
        ks: Sequence[int] = KS, words: Sequence[int] = ROW_WORDS, out: Any = None, with_levers: bool = True) -> dict[str, Any]:
    out = out or sys.stdout

    def say(s: str = "") -> None:
        print(s, file=out, flush=True)

    workdir = Path(workdir or Path(tempfile.gettempdir()) / "kb-rerank-bench")
    workdir.mkdir(parents=True, exist_ok=True)
    import onnxruntime as ort

    say(f"kb rerank bench: MiniLM-L6 geometry {MINILM_L6}, generated weights")
    say(f"host: {os.cpu_count()} logical cores, load {os.getloadavg()[0]:.2f}, onnxruntime {ort.__version__}, "
        f"threads {'onnxruntime default' if not threads else threads}, spinning {'on' if os.environ.get('KB_RERANK_SPIN') == '1' else 'off'}, {runs} timed rounds after one discarded, cells interleaved")
    model_dir = build_minilm(workdir, log=say)
    gflops = matmul_gflops()
    say(f"numpy float32 matmul: {gflops:.1f} GFLOP/s (1024x1024, median)")
    say("")
    say(f"{'prec':5} {'K':>3} {'words':>5} {'tok/pair':>8} {'GFLOP/pair':>10} {'ms/pair med':>11} {'p95':>7} "
        f"{'wall med':>9} {'p95':>8} {'eff GFLOP/s':>11} {'of numpy':>8}  fits 300ms")
    jobs = [_job(prec, model_dir, prec, k, w, threads) for prec in precisions for w in words for k in ks]
    time_jobs(jobs, runs)
    cells = [Cell(j.label, j.k, j.words, j.seq, j.walls, j.flops) for j in jobs]
    for c in cells:
        k = c.k
        per_pair = c.median / k
        eff = c.flops_per_pair / (per_pair / 1000.0) / 1e9
        say(f"{c.precision:5} {k:>3} {c.words:>5} {c.tokens_per_pair:>8.0f} {c.flops_per_pair / 1e9:>10.3f} {per_pair:>11.2f} "
            f"{c.p95 / k:>7.2f} {c.median:>9.1f} {c.p95:>8.1f} {eff:>11.1f} {eff / gflops:>8.0%}  "
            f"{'yes' if c.p95 <= 300 else 'no'}")
    say("eff GFLOP/s = forward FLOPs per pair / per-pair wall. Over 100% of numpy means onnxruntime's own GEMM beats")
    say("numpy's BLAS on this CPU; int8 counts the same multiply-adds done at 8 bits (VNNI does more per cycle).")
    say("")
    par = parity(model_dir, threads=threads)
    say(f"fp32 vs int8 order over {par['rows']} rows of ~30 words: top-32 overlap {par['top32_overlap']}/32, "
        f"Spearman {par['spearman']:.4f}, first differing rank {par['first_differing_rank']}, "
        f"max |logit diff| {par['max_abs_logit_diff']:.4f} (median {par['median_abs_logit_diff']:.4f}, fp32 logit spread {par['logit_spread_fp32']:.2f})")
    iso = int8_isolation(model_dir)
    say(f"int8 pair isolation: a pair's logit moved by up to {iso['batched_max_shift']:.4f} when its activations were "
        f"quantized in one padded batch with 13 others; the stage's one-pair-per-call int8 moved it by {iso['stage_max_shift']:.1g}")
    if with_levers:
        say("")
        levers(workdir, model_dir, runs, say)
    say(f"numpy float32 matmul again: {matmul_gflops():.1f} GFLOP/s; load average now {os.getloadavg()[0]:.2f}")
    return {
        "gflops": gflops,
        "cells": [dict(c.__dict__, median=c.median, p95=c.p95) for c in cells],
        "parity": par,
        "int8_isolation": iso,
    }


if __name__ == "__main__":  # python3 -m kbtools.rerank_bench [runs]; `kb rerank bench` has every option
    cli = argparse.ArgumentParser(prog="python3 -m kbtools.rerank_bench", description=__doc__.split("\n\n", 1)[0])
    cli.add_argument("runs", type=int, nargs="?", default=7, help="timed runs per cell (default 7)")
    res = run(runs=cli.parse_args().runs)
    print(json.dumps(res["parity"]))
