"""`kb bench`: how fast each leg answers, how the index builds, and how far from SQLite itself.

Measured in one run, on one fleet and one question set:
- per question, the keyword leg (`Memory.keyword_only`), the text leg (every base's FTS5
  search, merged), and the fused answer (`Memory.ask`, passages included, no miss logged):
  median and p95 over the questions, each question timed `repeat` times (its median kept);
- the reference: a bare FTS5 `MATCH ... ORDER BY rank LIMIT k` sending exactly the
  expression the engine sends (after pruning) to the same connection, and the fused p95 as
  a ratio to its p95 (what the engine adds on top of SQLite);
- the pruning rule on and off (median and p95 of the text leg and the fused answer);
- a full index build into scratch files and a no-op re-index, in a fresh process, with that
  process's peak RSS; the no-op re-index and the staleness check of the live index;
- a fresh process answering fused questions (peak RSS), and `kb route --json` wall time;
- with `bm25s` installed (the `bench` extra): top-10 agreement of the text leg with an
  independent BM25 on the same chunks and terms, its speed in process and in a fresh one.

Nothing here is asserted: speed on a shared machine is evidence, reported with the load
average beside it. The sweep (`kb bench --sweep 1000,10000,60000`) generates haystacks
(kbtools/haystack.py) under a scratch directory and measures each; `--plot` draws latency
against haystack size per leg (matplotlib, imported only then).
"""

from __future__ import annotations

import json
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

BARE_LIMIT = 50  # k of the bare query: the engine's candidate pool (memory.RANK_CANDIDATE_POOL)
DEFAULT_REPEAT = 3
FRESH_RUNS = 5  # fresh-process `kb route --json` runs
AGREEMENT_K = 10
DERIVED_QUESTIONS = 200  # questions drawn from the labels when a fleet brings none


# -- statistics -------------------------------------------------------------------------


def p95(xs: list[float]) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))] if s else 0.0


def dist(ms: list[float]) -> dict[str, float]:
    """Median, p95, mean and max of per-question milliseconds."""
    if not ms:
        return {"n": 0, "median": 0.0, "p95": 0.0, "mean": 0.0, "max": 0.0}
    return {
        "n": len(ms), "median": statistics.median(ms), "p95": p95(ms), "mean": statistics.fmean(ms), "max": max(ms),
    }


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on this platform
        return []


def _rss_mb() -> float:
    """Peak resident set size of this process, in MB.

    /proc's VmHWM where there is one: ru_maxrss survives execve on Linux, so a child started
    by a large parent would report the parent's peak as its own."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB on Linux, bytes on macOS
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


# -- questions --------------------------------------------------------------------------


def load_questions(path: str | os.PathLike[str]) -> list[str]:
    """One question per line, or the gold / questions.tsv form (question TAB answer); `#` is a comment."""
    from engine.errors import KbError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise KbError(f"{path}: cannot read ({e.strerror})") from None
    except UnicodeDecodeError as e:
        raise KbError(f"{path}: not UTF-8 (byte at offset {e.start})") from None
    qs = [line.split("\t", 1)[0].strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    qs = [q for q in qs if q]
    if not qs:
        raise KbError(f"{path}: no questions in it")
    return qs


def find_questions(memory) -> tuple[list[str], str]:
    """The fleet's own question set: questions.tsv (a haystack's), gold.tsv, else drawn from its labels."""
    root = Path(memory.fleet.root)
    for name in ("questions.tsv", "gold.tsv"):
        if (root / name).is_file():
            return load_questions(root / name), str(root / name)
    return derive_questions(memory), "drawn from the labels"


def derive_questions(memory, n: int = DERIVED_QUESTIONS) -> list[str]:
    """Every k-th entry's first key and title, and two questions no note holds."""
    cat = memory.snapshot().catalogue
    entries = list(cat.entries)
    step = max(1, len(entries) // max(1, n // 2))
    qs: list[str] = []
    for e in entries[::step]:
        if e.keys:
            qs.append(e.keys[0])
        if e.title:
            qs.append(e.title)
    qs += ["zwqx kryptz vlarg", "come funziona il quaderno delle decisioni"]
    return list(dict.fromkeys(q for q in qs if q.strip()))[: n + 2]


# -- the run ------------------------------------------------------------------------------


def run_bench(
    paths: list[str],
    *,
    questions: list[str] | None = None,
    questions_source: str = "",
    repeat: int = DEFAULT_REPEAT,
    index: bool = True,
    fresh: bool = True,
    bm25: bool = True,
    prune: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure one fleet. Returns the report as plain data (what `--json` prints)."""
    from engine.memory import Memory
    from engine.index.fts5search import PRUNE_ABOVE_CHUNKS, fts_expression

    say = progress or (lambda s: None)
    # Absolute: the fresh processes below run from the directory `engine` is imported from.
    paths = [os.path.abspath(p) for p in paths]
    load_before = _load()
    t_start = time.perf_counter()
    memory = Memory(paths, update=False)
    say("bringing the index up to date")
    for idx in memory.indexes.values():
        idx.update()
    snap = memory.snapshot()
    files = sum(len(r) for r in snap.records.values())
    per_base = {name: idx.chunk_count() for name, idx in memory.indexes.items()}
    if questions is None:
        questions, questions_source = find_questions(memory)
    report: dict[str, Any] = {
        "fleet": {
            "paths": [str(p) for p in paths], "root": str(memory.fleet.root), "bases": len(per_base), "files": files,
            "entries": snap.catalogue.n, "chunks": sum(per_base.values()), "chunks_per_base": per_base,
        },
        "machine": {
            "cpus": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0],
            "sqlite": sqlite3.sqlite_version, "load_before": load_before,
        },
        "questions": {"n": len(questions), "source": questions_source, "repeat": repeat},
    }

    # Index: a full build into scratch files and a no-op re-index, in a fresh process.
    if index:
        say("full index build in a fresh process (scratch files; the live index is not touched)")
        report["index"] = _fresh_json([sys.executable, "-m", "kbtools.bench", "_index", *map(str, paths)])
        t0 = time.perf_counter()
        for idx in memory.indexes.values():
            idx.update()
        report["index"]["live_noop_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        stale = any(idx.stale() for idx in memory.indexes.values())
        report["index"]["live_stale_check_s"] = time.perf_counter() - t0
        report["index"]["live_stale"] = stale

    # What each question sends: its terms, and per base the expression after pruning.
    say(f"{len(questions)} questions: terms and expressions")
    terms_of: dict[str, list[str]] = {}
    served: list[str] = []
    for q in questions:
        a = memory.ask(q, record_miss=False, with_passages=False)
        terms_of[q] = list(a.terms)
        if a.gate.served:
            served.append(q)
    sent_of = {q: {b: idx.sent_terms(terms_of[q]) for b, idx in memory.indexes.items()} for q in questions}
    pruned = sum(1 for q in questions if any(len(s) < len(terms_of[q]) for s in sent_of[q].values() if terms_of[q]))
    conns = {b: idx.conn() for b, idx in memory.indexes.items()}
    # The resident leg (engine/index/resident.py), as the reading room and kb serve hold it: built
    # once here (its build time reported), then asked the same questions.
    say("building the resident text leg")
    resident = Memory(paths, update=False, resident=True)
    resident.snapshot()
    t0 = time.perf_counter()
    resident.wait_resident(timeout=600)
    report["resident"] = {"build_s": time.perf_counter() - t0}

    def bare(q: str, order: str) -> None:
        for b, sent in sent_of[q].items():
            if sent:
                conns[b].execute(
                    f"SELECT rowid FROM chunks WHERE chunks MATCH ? ORDER BY {order} LIMIT ?",
                    (fts_expression(sent), BARE_LIMIT),
                ).fetchall()

    legs: dict[str, Callable[[str], Any]] = {
        "keyword": lambda q: memory.keyword_only(q),
        "text": lambda q: memory._text_leg(terms_of[q], q),
        "fused": lambda q: memory.ask(q, record_miss=False),
        "resident_text": lambda q: resident._text_leg(terms_of[q], q),
        "resident_fused": lambda q: resident.ask(q, record_miss=False),
        "fts5_bare": lambda q: bare(q, "rank"),
        "fts5_bare_bm25": lambda q: bare(q, "bm25(chunks)"),
    }
    say(f"timing {len(legs)} legs x {len(questions)} questions x {repeat}")
    times = _time_legs(questions, legs, repeat)
    lat = {name: dist(v) for name, v in times.items()}
    report["latency_ms"] = lat
    bare_p95 = lat["fts5_bare"]["p95"]
    report["ratio"] = {
        "fused_p95_to_bare_p95": lat["fused"]["p95"] / bare_p95 if bare_p95 else None,
        "text_p95_to_bare_p95": lat["text"]["p95"] / bare_p95 if bare_p95 else None,
        "fused_median_to_bare_median": (
            lat["fused"]["median"] / lat["fts5_bare"]["median"] if lat["fts5_bare"]["median"] else None
        ),
    }

    # The pruning rule, on and off.
    thresholds = {b: idx.prune_above for b, idx in memory.indexes.items()}
    report["pruning"] = {
        "threshold": PRUNE_ABOVE_CHUNKS, "bases_above": sorted(b for b, n in per_base.items() if n > thresholds[b]),
        "questions_pruned": pruned, "on": {"text": lat["text"], "fused": lat["fused"]},
    }
    if prune and report["pruning"]["bases_above"]:
        say("timing with the pruning rule off")
        for idx in memory.indexes.values():
            idx.prune_above = sys.maxsize
        try:
            off = _time_legs(questions, {"text": legs["text"], "fused": legs["fused"]}, repeat)
        finally:
            for b, idx in memory.indexes.items():
                idx.prune_above = thresholds[b]
        report["pruning"]["off"] = {k: dist(v) for k, v in off.items()}

    report["rss_mb"] = {"bench_process": _rss_mb()}
    if fresh:
        say("fresh processes: fused questions (peak RSS) and kb route --json")
        with tempfile.TemporaryDirectory(prefix="kb-bench-") as tmp:
            qfile = Path(tmp) / "questions.txt"
            qfile.write_text("\n".join(questions[:50]) + "\n", encoding="utf-8")
            report["fresh"] = _fresh_json(
                [sys.executable, "-m", "kbtools.bench", "_probe", "--questions", str(qfile), *map(str, paths)]
            )
        report["rss_mb"]["fused_question_fresh"] = report["fresh"].get("rss_mb")
        walls = []
        for q in served[:FRESH_RUNS]:
            t0 = time.perf_counter()
            r = subprocess.run(
                [sys.executable, "-m", "engine.cli", "route", q, *map(str, paths), "--json"],
                capture_output=True, text=True, cwd=_repo_root(),
            )
            walls.append((time.perf_counter() - t0) * 1000)
            if r.returncode != 0:
                report["fresh"]["route_error"] = r.stderr.strip()[-300:]
                break
        report["fresh"]["route_json_wall_ms"] = dist(walls)
        walls = []  # `kb boot`, what a prompt hook runs on every message: the same open, then the handover
        for q in served[:FRESH_RUNS]:
            t0 = time.perf_counter()
            r = subprocess.run(
                [sys.executable, "-m", "engine.cli", "boot", "--text", *map(str, paths[:1])],
                input=q, capture_output=True, text=True, cwd=_repo_root(),
            )
            walls.append((time.perf_counter() - t0) * 1000)
            if r.returncode != 0:
                report["fresh"]["boot_error"] = r.stderr.strip()[-300:]
                break
        report["fresh"]["boot_wall_ms"] = dist(walls)

    if bm25:
        say("bm25s: agreement and speed")
        report["bm25s"] = _bm25s(memory, questions, terms_of, sent_of, times["text"], fresh=fresh)

    report["machine"]["load_after"] = _load()
    report["seconds"] = time.perf_counter() - t_start
    for idx in memory.indexes.values():
        idx.close()
    return report


def _time_legs(questions: list[str], legs: dict[str, Callable[[str], Any]], repeat: int) -> dict[str, list[float]]:
    """Per leg, per question, the median of `repeat` timings (ms); legs interleaved per question
    so a burst of load from elsewhere lands on every leg alike."""
    for q in questions:  # warm: caches a first ask fills, pages the OS has not read yet
        for fn in legs.values():
            fn(q)
    raw: dict[str, list[list[float]]] = {name: [[] for _ in questions] for name in legs}
    for _ in range(max(1, repeat)):
        for i, q in enumerate(questions):
            for name, fn in legs.items():
                t0 = time.perf_counter()
                fn(q)
                raw[name][i].append((time.perf_counter() - t0) * 1000)
    return {name: [statistics.median(v) for v in per_q] for name, per_q in raw.items()}


def _fresh_json(cmd: list[str]) -> dict[str, Any]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=_repo_root())
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return {"error": (r.stderr or r.stdout).strip()[-500:], "wall_s": wall}
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"no JSON from {' '.join(cmd[:4])}", "wall_s": wall}
    out["wall_s"] = wall
    return out


def _repo_root() -> str:
    # The directory `engine` is importable from, so `python -m engine...` finds this engine.
    return str(Path(__file__).resolve().parent.parent)


# -- bm25s ------------------------------------------------------------------------------------


def _tokens(text: str) -> list[str]:
    """FTS5's unicode61 remove_diacritics 2, approximated: folded, split on non-alphanumerics."""
    from engine.rank.normalize import _SPLIT, fold

    return [w for w in _SPLIT.split(fold(text)) if w]


def _bm25s(memory, questions, terms_of, sent_of, engine_text_ms, *, fresh: bool) -> dict[str, Any]:
    try:
        import bm25s
        import numpy as np
    except ImportError:
        return {"available": False, "note": "pip install 'kbtui[bench]' (bm25s) for the agreement and speed columns"}

    out: dict[str, Any] = {"available": True, "version": getattr(bm25s, "__version__", "?"), "method": "robertson k1=1.2 b=0.75"}
    t0 = time.perf_counter()
    models = {}
    for b, idx in memory.indexes.items():
        # The stemmed columns: the tokens FTS5 indexes (engine/rank/stemming.py).
        rows = idx.conn().execute("SELECT rowid, heading_stems, body_stems FROM chunks ORDER BY rowid").fetchall()
        if not rows:
            continue
        paths = dict(idx.conn().execute("SELECT id, path FROM files").fetchall())
        fids = np.array([r[0] >> 20 for r in rows], dtype=np.int64)
        # Chunks of one file are adjacent in rowid order: each file is a run starting here.
        starts = np.flatnonzero(np.r_[True, fids[1:] != fids[:-1]])
        corpus = [_tokens(f"{r[1]}\n{r[2]}") for r in rows]
        model = bm25s.BM25(method="robertson", k1=1.2, b=0.75)
        model.index(corpus, show_progress=False)
        ids = [f"{b}/{paths.get(int(f), '?')}" for f in fids[starts]]
        models[b] = (model, starts, ids)
    out["index_s"] = time.perf_counter() - t0

    def ask(q: str) -> list[tuple[float, str]]:
        hits: list[tuple[float, str]] = []
        for b, (model, starts, ids) in models.items():
            toks = [t for t in sent_of[q].get(b, []) if t in model.vocab_dict]
            if not toks:
                continue
            scores = model.get_scores(toks)
            best = np.maximum.reduceat(scores, starts)
            top = np.flatnonzero(best > 0)
            hits.extend((-float(best[i]), ids[i]) for i in top)
        hits.sort()
        return hits[:50]

    agree, same_order, compared = [], 0, 0
    q_ms = []
    for q in questions:
        engine_top = [h.id for h in memory._text_leg(terms_of[q], q)[:AGREEMENT_K]]
        t0 = time.perf_counter()
        theirs = ask(q)
        q_ms.append((time.perf_counter() - t0) * 1000)
        their_top = [i for _, i in theirs[:AGREEMENT_K]]
        if not engine_top and not their_top:
            continue
        compared += 1
        agree.append(len(set(engine_top) & set(their_top)) / max(len(engine_top), len(their_top)))
        same_order += engine_top == their_top
    out["questions_compared"] = compared
    out["top10_agreement"] = statistics.fmean(agree) if agree else None
    out["top10_identical_order"] = same_order / compared if compared else None
    out["query_ms"] = dist(q_ms)
    out["engine_text_ms"] = dist(engine_text_ms)
    if fresh and models:
        with tempfile.TemporaryDirectory(prefix="kb-bench-bm25s-") as tmp:
            for b, (model, starts, ids) in models.items():
                model.save(os.path.join(tmp, b))
                np.save(os.path.join(tmp, b, "starts.npy"), starts)
            q = next((q for q in questions if any(sent_of[q].values())), questions[0])
            terms = sorted({t for s in sent_of[q].values() for t in s})
            walls = []
            for _ in range(3):
                t0 = time.perf_counter()
                r = subprocess.run(
                    [sys.executable, "-c", _BM25S_FRESH, tmp, json.dumps(terms)], capture_output=True, text=True,
                )
                walls.append((time.perf_counter() - t0) * 1000)
            out["fresh_process_ms"] = dist(walls)
            if r.returncode != 0:
                out["fresh_error"] = r.stderr.strip()[-300:]
    return out


_BM25S_FRESH = """
import json, os, sys
import numpy as np, bm25s
root, terms = sys.argv[1], json.loads(sys.argv[2])
best = []
for b in sorted(os.listdir(root)):
    m = bm25s.BM25.load(os.path.join(root, b))
    starts = np.load(os.path.join(root, b, "starts.npy"))
    toks = [t for t in terms if t in m.vocab_dict]
    if toks:
        s = np.maximum.reduceat(m.get_scores(toks), starts)
        best.extend(sorted(s[s > 0].tolist(), reverse=True)[:50])
print(len(best))
"""


# -- fresh-process probes (python3 -m kbtools.bench _index|_probe ...) -------------------------


def _probe_index(paths: list[str]) -> dict[str, Any]:
    """Full build of every base into scratch files, then a no-op re-index of the same."""
    from engine.notes.fleet import discover
    from engine.index.textindex import TextIndex

    fleet = discover(paths)
    out: dict[str, Any] = {"bases": {}}
    with tempfile.TemporaryDirectory(prefix="kb-bench-index-") as tmp:
        idxs = []
        total_s, chunks, files = 0.0, 0, 0
        for b in fleet.bases:
            idx = TextIndex(b)
            idx.path = Path(tmp) / b.name / "index.db"
            r = idx.update()
            idxs.append(idx)
            total_s += r.seconds
            chunks += r.chunks
            files += r.files
            out["bases"][b.name] = {"chunks": r.chunks, "files": r.files, "seconds": r.seconds}
        out.update(full_s=total_s, chunks=chunks, files=files, chunks_per_s=chunks / total_s if total_s else None)
        out["rss_mb_after_build"] = _rss_mb()
        t0 = time.perf_counter()
        for idx in idxs:
            idx.update()
        out["noop_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        for idx in idxs:
            idx.stale()
        out["stale_check_s"] = time.perf_counter() - t0
        for idx in idxs:
            idx.close()
    out["rss_mb"] = _rss_mb()
    return out


def _probe_fused(paths: list[str], questions: list[str]) -> dict[str, Any]:
    """A fresh process: open the fleet, answer fused questions; its peak RSS and the first ask.

    The engine is already imported when this runs (`python3 -m kbtools.bench` imports it):
    the import's cost is in the caller's wall time and in `kb route --json`'s."""
    from engine.memory import Memory

    t_import = time.perf_counter()
    rss_import = _rss_mb()
    m = Memory(paths)
    m.snapshot()
    t_open = time.perf_counter()
    rss_open = _rss_mb()
    first = None
    walls = []
    for q in questions:
        t = time.perf_counter()
        m.ask(q, record_miss=False)
        walls.append((time.perf_counter() - t) * 1000)
        first = walls[0] if first is None else first
    return {
        "open_ms": (t_open - t_import) * 1000, "first_ask_ms": first,
        "asks": len(walls), "ask_ms": dist(walls), "rss_mb_after_import": rss_import, "rss_mb_after_open": rss_open,
        "rss_mb": _rss_mb(),
    }


# -- the sweep ------------------------------------------------------------------------------------


def sweep(
    sizes: list[int], workdir: str, *, seed: int, bases: int, n_questions: int, progress=None, **bench_kw
) -> list[dict[str, Any]]:
    """Generate (or reuse) a haystack per size under `workdir` and measure each."""
    from dataclasses import asdict

    from .haystack import GENERATOR_VERSION, generate

    say = progress or (lambda s: None)
    runs = []
    for size in sizes:
        root = Path(workdir) / f"h{size}-s{seed}-b{bases}"
        meta = root / "haystack.json"
        ok = False
        if meta.is_file():
            try:
                m = json.loads(meta.read_text())
                ok = (m.get("chunks"), m.get("seed"), m.get("generator_version"), len(m.get("bases", {})),
                      m.get("questions")) == (size, seed, GENERATOR_VERSION, bases, n_questions)
            except ValueError:
                ok = False
        t0 = time.perf_counter()
        if not ok:
            say(f"generating a {size:,}-chunk haystack in {root}")
            info = asdict(generate(root, size, seed=seed, bases=bases, questions=n_questions, force=True))
        else:
            info = json.loads(meta.read_text())
        gen_s = time.perf_counter() - t0
        say(f"measuring {root}")
        r = run_bench([str(root)], progress=lambda s, size=size: say(f"  [{size:,}] {s}"), **bench_kw)
        r["haystack"] = {**info, "generate_s": gen_s, "reused": ok}
        runs.append(r)
    return runs


# -- printing ---------------------------------------------------------------------------------------


def _ms(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:,.0f} ms"
    if x >= 10:
        return f"{x:.1f} ms"
    return f"{x:.2f} ms"


def _s(x: float | None) -> str:
    return "-" if x is None else (f"{x:.2f} s" if x < 10 else f"{x:.1f} s")


def render(r: dict[str, Any]) -> str:
    f, mach, q = r["fleet"], r["machine"], r["questions"]
    largest = max(f["chunks_per_base"].items(), key=lambda kv: kv[1]) if f["chunks_per_base"] else ("-", 0)
    lines = [
        f"kb bench  {' '.join(f['paths'])}",
        f"fleet     {f['bases']} bases, {f['files']:,} files, {f['entries']:,} entries, {f['chunks']:,} chunks"
        f" (largest base {largest[0]}: {largest[1]:,})",
        f"machine   {mach['cpus']} CPUs, load {_loadtxt(mach.get('load_before'))} before, "
        f"{_loadtxt(mach.get('load_after'))} after; Python {mach['python']}, SQLite {mach['sqlite']}",
        f"questions {q['n']} ({q['source']}); each timed {q['repeat']}x, its median kept",
        "",
        f"  {'per question':<34} {'median':>10} {'p95':>10} {'max':>10}",
    ]
    names = (
        ("keyword", "keyword leg"), ("text", "text leg (every base)"), ("fused", "fused answer (Memory.ask)"),
        ("resident_text", "resident text leg (every base)"), ("resident_fused", "fused answer, resident"),
        ("fts5_bare", f"bare FTS5 ORDER BY rank LIMIT {BARE_LIMIT}"),
        ("fts5_bare_bm25", f"bare FTS5 ORDER BY bm25() LIMIT {BARE_LIMIT}"),
    )
    for key, label in names:
        if key not in r["latency_ms"]:
            continue  # a report written before this leg was measured (--from)
        d = r["latency_ms"][key]
        lines.append(f"  {label:<34} {_ms(d['median']):>10} {_ms(d['p95']):>10} {_ms(d['max']):>10}")
    ratio = r["ratio"]
    lines.append(
        f"  fused p95 / bare p95: {_x(ratio['fused_p95_to_bare_p95'])}   text p95 / bare p95: "
        f"{_x(ratio['text_p95_to_bare_p95'])}   fused median / bare median: {_x(ratio['fused_median_to_bare_median'])}"
    )
    pr = r["pruning"]
    lines += ["", f"pruning   above {pr['threshold']:,} chunks per base; bases above: "
              f"{', '.join(pr['bases_above']) or 'none'}; {pr['questions_pruned']}/{q['n']} expressions pruned"]
    if "off" in pr:
        for leg in ("text", "fused"):
            on, off = pr["on"][leg], pr["off"][leg]
            lines.append(
                f"  {leg:<6} on  median {_ms(on['median']):>9} p95 {_ms(on['p95']):>9}   "
                f"off median {_ms(off['median']):>9} p95 {_ms(off['p95']):>9}"
            )
    else:
        lines.append("  off: not measured (no base above the threshold)" if not pr["bases_above"] else "  off: not measured")
    ix = r.get("index")
    if ix:
        lines.append("")
        if "error" in ix:
            lines.append(f"index     failed: {ix['error']}")
        else:
            lines += [
                f"index     full build {_s(ix['full_s'])} for {ix['chunks']:,} chunks in {ix['files']:,} files"
                f" ({ix['chunks_per_s']:,.0f} chunks/s), peak RSS {ix['rss_mb']:.0f} MB (fresh process)",
                f"          no-op re-index {_s(ix['noop_s'])} (staleness check {_s(ix['stale_check_s'])});"
                f" live index: no-op {_s(ix['live_noop_s'])}, check {_s(ix['live_stale_check_s'])}",
            ]
    if r.get("resident"):
        lines += ["", f"resident  postings built in {_s(r['resident']['build_s'])} (once per process that stays up)"]
    fr = r.get("fresh")
    lines.append("")
    if fr and "error" not in fr:
        rw = fr.get("route_json_wall_ms", {})
        lines += [
            f"fresh     fused questions: peak RSS {fr['rss_mb']:.0f} MB (after import {fr['rss_mb_after_import']:.0f},"
            f" after opening {fr['rss_mb_after_open']:.0f}); open {_ms(fr['open_ms'])},"
            f" first ask {_ms(fr['first_ask_ms'])}, process wall {_s(fr['wall_s'])}",
        ]
        if not rw.get("n"):  # the walls are timed on served questions, and a plain vault serves none
            lines.append("          kb route --json wall: not measured: no question was served as a hit"
                         " (kb boot's neither)")
        else:
            lines.append(f"          kb route --json wall: median {_ms(rw.get('median'))}, max {_ms(rw.get('max'))}"
                         f" ({rw['n']} runs, served questions)")
        bw = fr.get("boot_wall_ms")
        if bw and bw.get("n"):
            lines.append(f"          kb boot --text wall: median {_ms(bw.get('median'))}, max {_ms(bw.get('max'))}"
                         f" ({bw.get('n', 0)} runs, the same questions)")
    elif fr:
        lines.append(f"fresh     failed: {fr['error']}")
    lines.append(f"memory    this process peak RSS {r['rss_mb']['bench_process']:.0f} MB")
    bm = r.get("bm25s")
    if bm:
        lines.append("")
        if not bm.get("available"):
            lines.append(f"bm25s     not installed: {bm['note']}")
        else:
            fp = bm.get("fresh_process_ms", {})
            lines += [
                f"bm25s {bm['version']} ({bm['method']}), same chunks and the same terms sent:",
                f"  top-10 agreement {_pct(bm['top10_agreement'])}, identical top-10 order {_pct(bm['top10_identical_order'])}"
                f" ({bm['questions_compared']} questions with hits)",
                f"  in process: index {_s(bm['index_s'])}; query median {_ms(bm['query_ms']['median'])}, p95"
                f" {_ms(bm['query_ms']['p95'])} (engine text leg {_ms(bm['engine_text_ms']['median'])},"
                f" {_ms(bm['engine_text_ms']['p95'])})",
                f"  fresh process (import, load, one question): median {_ms(fp.get('median'))}",
            ]
    return "\n".join(lines)


def render_sweep(runs: list[dict[str, Any]]) -> str:
    """One line per haystack size: how each figure grows."""
    head = (f"{'chunks':>8} {'files':>6} {'kw med':>8} {'kw p95':>8} {'text med':>9} {'text p95':>9} {'fused med':>10}"
            f" {'fused p95':>10} {'bare p95':>9} {'ratio':>6} {'prune off p95':>13} {'index':>7} {'no-op':>7}"
            f" {'RSS':>6} {'route':>8} {'bm25s':>6}")
    lines = ["growth, per haystack (fused p95 / bare p95 = ratio; RSS = fresh process answering fused questions)", head]
    for r in runs:
        lat, ix, fr = r["latency_ms"], r.get("index") or {}, r.get("fresh") or {}
        off = r["pruning"].get("off", {}).get("fused", {}).get("p95")
        bm = r.get("bm25s") or {}
        lines.append(
            f"{r['fleet']['chunks']:>8,} {r['fleet']['files']:>6,} {lat['keyword']['median']:>8.2f} {lat['keyword']['p95']:>8.2f}"
            f" {lat['text']['median']:>9.2f} {lat['text']['p95']:>9.2f} {lat['fused']['median']:>10.2f}"
            f" {lat['fused']['p95']:>10.2f} {lat['fts5_bare']['p95']:>9.2f} {_x(r['ratio']['fused_p95_to_bare_p95']):>6}"
            f" {('-' if off is None else f'{off:.2f}'):>13} {_s(ix.get('full_s')):>7} {_s(ix.get('noop_s')):>7}"
            f" {fr.get('rss_mb', 0):>5.0f}M {_ms((fr.get('route_json_wall_ms') or {}).get('median')):>8}"
            f" {_pct(bm.get('top10_agreement')):>6}"
        )
    # The resident leg beside FTS5, the bare query and bm25s on the same chunks (median / p95).
    head2 = (f"{'chunks':>8} {'FTS5 text':>15} {'resident text':>15} {'bare FTS5':>15} {'bm25s':>15}"
             f" {'fused, FTS5':>15} {'fused, resident':>15} {'build':>7}")
    lines += ["", "the text leg's engines, per question (median / p95)", head2]
    for r in runs:
        lat, bm = r["latency_ms"], (r.get("bm25s") or {}).get("query_ms")
        pair = lambda d: "-" if not d else f"{d['median']:.2f} / {d['p95']:.2f}"  # noqa: E731
        lines.append(
            f"{r['fleet']['chunks']:>8,} {pair(lat.get('text')):>15} {pair(lat.get('resident_text')):>15}"
            f" {pair(lat.get('fts5_bare')):>15} {pair(bm):>15} {pair(lat.get('fused')):>15}"
            f" {pair(lat.get('resident_fused')):>15} {_s((r.get('resident') or {}).get('build_s')):>7}"
        )
    lines.append("(milliseconds unless marked; load average before/after each run is in --json)")
    return "\n".join(lines)


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _loadtxt(v: list[float] | None) -> str:
    return " ".join(f"{x:.2f}" for x in v) if v else "?"


# -- the plot -------------------------------------------------------------------------------------


def plot(runs: list[dict[str, Any]], path: str) -> None:
    """Latency against haystack size, per leg: median (solid) and p95 (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = sorted(runs, key=lambda r: r["fleet"]["chunks"])
    xs = [r["fleet"]["chunks"] for r in runs]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    legs = (("keyword", "keyword leg", "tab:green"), ("text", "text leg", "tab:blue"),
            ("fused", "fused answer", "tab:red"), ("fts5_bare", "bare FTS5 (rank)", "tab:gray"),
            ("resident_text", "resident text leg", "tab:cyan"), ("resident_fused", "fused, resident", "tab:orange"))
    for key, label, color in legs:
        if any(key not in r["latency_ms"] for r in runs):
            continue
        ax.plot(xs, [r["latency_ms"][key]["median"] for r in runs], "o-", color=color, label=f"{label}, median")
        ax.plot(xs, [r["latency_ms"][key]["p95"] for r in runs], "s--", color=color, alpha=0.7, label=f"{label}, p95")
    off = [(r["fleet"]["chunks"], r["pruning"]["off"]["fused"]["p95"]) for r in runs if "off" in r["pruning"]]
    if off:
        ax.plot([x for x, _ in off], [y for _, y in off], "x:", color="tab:purple", label="fused p95, pruning off")
    # bm25s in process on the same chunks and terms: the reference the resident leg is held to.
    bm = [(r["fleet"]["chunks"], r["bm25s"]["query_ms"]) for r in runs if (r.get("bm25s") or {}).get("query_ms")]
    if bm:
        ax.plot([x for x, _ in bm], [d["median"] for _, d in bm], "^-", color="tab:brown", label="bm25s in process, median")
        ax.plot([x for x, _ in bm], [d["p95"] for _, d in bm], "^--", color="tab:brown", alpha=0.7, label="bm25s in process, p95")
    # A fresh `kb route --json` is one whole process, not one question: its wall on the same axis.
    walls = [(r["fleet"]["chunks"], r["fresh"]["route_json_wall_ms"]) for r in runs
             if ((r.get("fresh") or {}).get("route_json_wall_ms") or {}).get("n")]
    if walls:
        ax.plot([x for x, _ in walls], [d["median"] for _, d in walls], "D-", color="black",
                label="fresh kb route --json, wall median")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks in the fleet")
    ax.set_ylabel("ms per question (a fresh process: ms per run)")
    loads = ", ".join(_loadtxt(r["machine"].get("load_before"))[:4] for r in runs)
    m = runs[0]["machine"] if runs else {}
    ax.set_title(f"kb bench: latency vs haystack size ({m.get('cpus', '?')} CPUs, load {loads})", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, loc="upper left", ncol=2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# -- python3 -m kbtools.bench _index|_probe (what the fresh processes run) ---------------------------


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "_index":
        print(json.dumps(_probe_index(argv[1:])))
        return 0
    if argv and argv[0] == "_probe":
        rest = argv[1:]
        qfile = rest[rest.index("--questions") + 1]
        paths = [a for i, a in enumerate(rest) if a != "--questions" and (i == 0 or rest[i - 1] != "--questions")]
        print(json.dumps(_probe_fused(paths, load_questions(qfile))))
        return 0
    from engine.cli import main as kb

    return kb(["bench", *argv])


if __name__ == "__main__":
    sys.exit(main())
