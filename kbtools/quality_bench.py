"""How good is the reading list on public test collections with relevance judgements?

    python3 -m kbtools.quality_bench --collection DIR [--collection DIR ...] [--queries N]

DIR is a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/test.tsv), the
Cranfield collection as three JSON files (cran_docs.json, cran_queries.json,
cran_qrels.json), or NFCorpus's test split as its authors distribute it (test.docs,
test.titles.queries, test.2-1-0.qrel); docs/quality.md says where to get them. Each document becomes a markdown
note (title as `#` heading, then its text; no labels) in a generated base in a temporary
folder, indexed by the engine. Prints nDCG@10 (graded gains) and MAP@100 (any positive
grade is relevant) for:

  text leg       the engine's FTS5 leg as it ranks today, Snowball stems (TextIndex.search)
  text unstemmed the leg before stemming (schema 3): the engine's own chunks read back from
                 its index, exact words, each file at its best chunk; the same ranking to
                 the digit while a collection stays under the pruning threshold
  stems, whole   the engine's stems over one FTS5 row per document instead of its chunks:
                 what the chunk rule (windows of ~1800 characters, a file at its best
                 chunk) costs on collections judged document by document
  fused          the engine's reading list (memory.ask), with no labels in the base
  fts5 bare      every word of the question OR'ed, unicode61, nothing dropped
  fts5 porter    FTS5's porter tokenizer, the engine's stopwords dropped
  bm25s          bm25s with PyStemmer English stems and its English stopwords

Nothing is downloaded here; the bench extra holds bm25s and PyStemmer.
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from engine.rank.normalize import unique_terms, words
from engine.index.fts5search import fts_expression

CUTOFF_NDCG = 10
CUTOFF_MAP = 100


@dataclass(frozen=True)
class Collection:
    name: str
    docs: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]  # query id -> doc id -> grade (> 0)


def load_collection(folder: Path) -> Collection:
    if (folder / "cran_docs.json").is_file():
        return _load_cranfield(folder)
    if (folder / "corpus.jsonl").is_file():
        return _load_beir(folder)
    if (folder / "test.docs").is_file():
        return _load_nfcorpus(folder)
    raise SystemExit(f"{folder}: not a BEIR folder (corpus.jsonl), Cranfield JSON (cran_docs.json)"
                     " or NFCorpus (test.docs)")


def _load_cranfield(folder: Path) -> Collection:
    docs = {str(d["id"]): (d["title"].strip(), d["body"].strip()) for d in json.loads((folder / "cran_docs.json").read_text())}
    raw_q = json.loads((folder / "cran_queries.json").read_text())
    # The queries are numbered 1..225 by position; `query number` skips values (a known quirk).
    numbered = {str(i): q["query"].strip() for i, q in enumerate(raw_q, start=1)}
    qrels: dict[str, dict[str, int]] = {}
    for r in json.loads((folder / "cran_qrels.json").read_text()):
        pos = int(r["position"])
        if pos < 1:
            continue  # -1: of no interest
        # Position 1 is a complete answer, 4 of minimum interest: gain 4 down to 1.
        qrels.setdefault(str(r["query_num"]), {})[str(r["id"])] = 5 - pos
    return Collection("cranfield", docs, {k: v for k, v in numbered.items() if k in qrels}, qrels)


def _load_beir(folder: Path) -> Collection:
    docs = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs[str(d["_id"])] = (d.get("title", "").strip(), d.get("text", "").strip())
    queries = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            queries[str(q["_id"])] = q["text"].strip()
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / "test.tsv", encoding="utf-8") as f:
        for n, line in enumerate(f):
            cols = line.rstrip("\n").split("\t")
            if n == 0 and not cols[-1].strip().lstrip("-").isdigit():
                continue  # header
            if int(cols[-1]) > 0:
                qrels.setdefault(cols[0], {})[cols[1]] = int(cols[-1])
    return Collection(folder.name, docs, {k: v for k, v in queries.items() if k in qrels}, qrels)


def _load_nfcorpus(folder: Path) -> Collection:
    """NFCorpus's test split in its authors' own files: the same 323 judged questions and
    12,334 judgements as BEIR's NFCorpus test set (BEIR took the 2-1-0 grades and the
    titles queries). The documents come lowercased, stopwords and numbers removed, title and
    abstract run together, so every system here reads the same already-filtered text and the
    figures are not those published on BEIR's raw text."""
    docs = {}
    with open(folder / "test.docs", encoding="utf-8") as f:
        for line in f:
            doc_id, _, text = line.rstrip("\n").partition("\t")
            docs[doc_id] = ("", text.strip())
    queries = {}
    with open(folder / "test.titles.queries", encoding="utf-8") as f:
        for line in f:
            q_id, _, text = line.rstrip("\n").partition("\t")
            queries[q_id] = text.strip()
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "test.2-1-0.qrel", encoding="utf-8") as f:
        for line in f:
            q_id, _, doc_id, grade = line.split()
            if int(grade) > 0:
                qrels.setdefault(q_id, {})[doc_id] = int(grade)
    return Collection("nfcorpus", docs, {k: v for k, v in queries.items() if k in qrels}, qrels)


# -- metrics ---------------------------------------------------------------------------


def ndcg(ranked: list[str], grades: dict[str, int], k: int = CUTOFF_NDCG) -> float:
    dcg = sum((2 ** grades.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(grades.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def average_precision(ranked: list[str], grades: dict[str, int], k: int = CUTOFF_MAP) -> float:
    hits, total = 0, 0.0
    for i, d in enumerate(ranked[:k], start=1):
        if grades.get(d, 0) > 0:
            hits += 1
            total += hits / i
    relevant = sum(1 for g in grades.values() if g > 0)
    return total / min(relevant, k) if relevant else 0.0


# -- the systems -----------------------------------------------------------------------


def write_base(col: Collection, root: Path) -> dict[str, str]:
    """One note per document; returns note path -> document id. A document without a title
    (NFCorpus runs its title into the text) becomes a note without a heading: a made-up
    heading such as its id would put the same words in every note's heading column."""
    notes = root / "notes"
    notes.mkdir(parents=True)
    by_path = {}
    for i, (doc_id, (title, text)) in enumerate(sorted(col.docs.items())):
        rel = f"notes/d{i:06d}.md"
        heading = " ".join(title.split())
        (root / rel).write_text(f"# {heading}\n\n{text}\n" if heading else f"{text}\n", encoding="utf-8")
        by_path[rel] = doc_id
    return by_path


def _fts_table(con: sqlite3.Connection, name: str, tokenizer: str, rows) -> None:
    con.execute(f"CREATE VIRTUAL TABLE {name} USING fts5(doc UNINDEXED, body, tokenize = '{tokenizer}')")
    con.executemany(f"INSERT INTO {name}(doc, body) VALUES (?, ?)", rows)


def _fts_rank(con: sqlite3.Connection, name: str, terms: list[str]) -> list[str]:
    if not terms:
        return []
    return [
        r[0]
        for r in con.execute(
            f"SELECT doc FROM {name} WHERE {name} MATCH ? ORDER BY bm25({name}), rowid LIMIT ?",
            (fts_expression(terms), CUTOFF_MAP),
        )
    ]


def _chunk_table(con: sqlite3.Connection, name: str, rows) -> None:
    """rows: (document path, heading path, body), one per chunk."""
    con.execute(f"CREATE VIRTUAL TABLE {name} USING fts5(doc UNINDEXED, heading, body,"
                " tokenize = 'unicode61 remove_diacritics 2')")
    con.executemany(f"INSERT INTO {name}(doc, heading, body) VALUES (?, ?, ?)", rows)


def _best_chunk_rank(con: sqlite3.Connection, name: str, terms: list[str]) -> list[str]:
    """Documents at their best chunk, ties by path: the engine's rule (engine/index/textindex.py)."""
    if not terms:
        return []
    return [
        r[0]
        for r in con.execute(
            f"WITH m AS MATERIALIZED (SELECT doc, bm25({name}) AS s FROM {name} WHERE {name} MATCH ?)"
            " SELECT doc, min(s) AS best FROM m GROUP BY doc ORDER BY best, doc LIMIT ?",
            (fts_expression(terms), CUTOFF_MAP),
        )
    ]


def run(col: Collection, limit: int | None, per_query: dict[str, list[float]] | None = None) -> dict[str, tuple[float, float]]:
    """Each system's mean nDCG@10 and MAP@100; `per_query`, when given, receives each
    system's nDCG@10 question by question (the same question order for every system)."""
    from engine.memory import Memory
    from engine.rank.normalize import words
    from engine.rank.stemming import index_stems, note_language, stem_question
    from engine.rank.stopwords import STOPWORDS

    qids = sorted(col.queries, key=lambda q: (len(q), q))[: limit or None]
    rankings: dict[str, dict[str, list[str]]] = {}
    with tempfile.TemporaryDirectory(prefix="kb-quality-") as tmp:
        root = Path(tmp) / col.name
        by_path = write_base(col, root)
        t0 = time.perf_counter()
        mem = Memory([str(root)])
        mem.snapshot()
        base, idx = next(iter(mem.indexes.items()))
        print(f"  {col.name}: {len(col.docs)} notes, snapshot in {time.perf_counter() - t0:.1f} s,"
              f" {len(qids)} questions", file=sys.stderr)
        con = sqlite3.connect(":memory:")
        texts = [(doc, f"{t}\n{x}") for doc, (t, x) in col.docs.items()]
        _fts_table(con, "bare", "unicode61 remove_diacritics 2", texts)
        _fts_table(con, "porter", "porter unicode61 remove_diacritics 2", texts)
        _chunk_table(con, "exact", ((p, h, b) for p in by_path for h, b, _line in idx.chunks_of(p)))
        _fts_table(con, "whole", "unicode61 remove_diacritics 2",
                   [(d, index_stems(words(t), note_language([t]))) for d, t in texts])

        import bm25s
        import Stemmer

        stemmer = Stemmer.Stemmer("english")
        doc_ids = [d for d, _ in texts]
        retriever = bm25s.BM25()
        retriever.index(bm25s.tokenize([t for _, t in texts], stopwords="en", stemmer=stemmer, show_progress=False),
                        show_progress=False)

        def ours(ranked_paths):
            return [by_path[p] for p in ranked_paths if p in by_path]

        for q in qids:
            text = col.queries[q]
            terms = unique_terms(text)
            r = rankings.setdefault(q, {})
            rows, _ = idx.search(terms, CUTOFF_MAP, text)
            r["text leg"] = ours([row[0] for row in rows])
            r["text unstemmed"] = ours(_best_chunk_rank(con, "exact", terms))
            r["stems, whole"] = _fts_rank(con, "whole", stem_question(text, terms))
            ans = mem.ask(text, top=CUTOFF_MAP, record_miss=False, with_passages=False)
            r["fused"] = ours([res.path for res in ans.results])
            r["fts5 bare"] = _fts_rank(con, "bare", list(dict.fromkeys(words(text))))
            r["fts5 porter"] = _fts_rank(con, "porter", [w for w in dict.fromkeys(words(text)) if w not in STOPWORDS])
            qtok = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
            if qtok.vocab:
                docs, _scores = retriever.retrieve(qtok, k=min(CUTOFF_MAP, len(doc_ids)), show_progress=False)
                r["bm25s"] = [doc_ids[i] for i in docs[0]]
            else:
                r["bm25s"] = []
    systems = list(next(iter(rankings.values())))
    out = {}
    for s in systems:
        n = [ndcg(rankings[q][s], col.qrels[q]) for q in qids]
        m = [average_precision(rankings[q][s], col.qrels[q]) for q in qids]
        out[s] = (sum(n) / len(n), sum(m) / len(m))
        if per_query is not None:
            per_query[s] = n
    return out


@dataclass(frozen=True)
class Paired:
    """One system against another, question by question."""

    mean: float  # mean of (a - b)
    low: float  # 95% bootstrap interval of that mean
    high: float
    wins: int
    losses: int


def paired(a: list[float], b: list[float], resamples: int = 2000, seed: int = 0) -> Paired:
    """A difference of means on a few hundred questions is evidence only beside its spread:
    a percentile bootstrap over the questions, seeded so the printed figures repeat."""
    import random

    diffs = [x - y for x, y in zip(a, b)]
    rng = random.Random(seed)
    n = len(diffs)
    means = sorted(sum(rng.choice(diffs) for _ in range(n)) / n for _ in range(resamples))
    return Paired(sum(diffs) / n, means[int(0.025 * resamples)], means[int(0.975 * resamples) - 1],
                  sum(d > 1e-12 for d in diffs), sum(d < -1e-12 for d in diffs))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kbtools.quality_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--collection", action="append", required=True, metavar="DIR", type=Path)
    p.add_argument("--queries", type=int, default=0, metavar="N", help="only the first N questions (default all)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    results, per_query = {}, {}
    for folder in args.collection:
        col = load_collection(folder)
        per_query[col.name] = {}
        results[col.name] = run(col, args.queries, per_query[col.name])
    if args.json:
        print(json.dumps(results))
        return 0
    for name, res in results.items():
        print(f"{name}")
        print(f"  {'system':<14} nDCG@{CUTOFF_NDCG}  MAP@{CUTOFF_MAP}")
        for s, (n, m) in res.items():
            print(f"  {s:<14} {n:7.4f}  {m:7.4f}")
        pq = per_query[name]
        for other in ("text unstemmed", "fts5 porter"):
            d = paired(pq["text leg"], pq[other])
            print(f"  text leg - {other}: nDCG@{CUTOFF_NDCG} {d.mean:+.4f} (95% interval {d.low:+.4f} to"
                  f" {d.high:+.4f}; better on {d.wins} questions, worse on {d.losses})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
