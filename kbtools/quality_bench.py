"""How good is the reading list on public test collections with relevance judgements?

    python3 -m kbtools.quality_bench --collection DIR [--collection DIR ...] [--queries N]

DIR is a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) or the
Cranfield collection as three JSON files (cran_docs.json, cran_queries.json,
cran_qrels.json); docs/quality.md says where to get them. Each document becomes a markdown
note (title as `#` heading, then its text; no labels) in a generated base in a temporary
folder, indexed by the engine. Prints nDCG@10 (graded gains) and MAP@100 (any positive
grade is relevant) for:

  text leg       the engine's FTS5 leg as it ranks today, Snowball stems (TextIndex.search)
  text unstemmed the leg before stemming: the question's content terms, exact words, over
                 one FTS5 row per document (the engine before schema 4 ranked chunks)
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

from engine.normalize import unique_terms, words
from engine.fts5search import fts_expression

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
    raise SystemExit(f"{folder}: neither a BEIR folder (corpus.jsonl) nor Cranfield JSON (cran_docs.json)")


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
    """One note per document; returns note path -> document id."""
    notes = root / "notes"
    notes.mkdir(parents=True)
    by_path = {}
    for i, (doc_id, (title, text)) in enumerate(sorted(col.docs.items())):
        rel = f"notes/d{i:06d}.md"
        heading = " ".join(title.split()) or f"Document {doc_id}"
        (root / rel).write_text(f"# {heading}\n\n{text}\n", encoding="utf-8")
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


def run(col: Collection, limit: int | None) -> dict[str, tuple[float, float]]:
    from engine.memory import Memory
    from engine.stopwords import STOPWORDS

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
            r["text unstemmed"] = _fts_rank(con, "bare", terms)
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
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m kbtools.quality_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--collection", action="append", required=True, metavar="DIR", type=Path)
    p.add_argument("--queries", type=int, default=0, metavar="N", help="only the first N questions (default all)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    results = {}
    for folder in args.collection:
        col = load_collection(folder)
        results[col.name] = run(col, args.queries)
    if args.json:
        print(json.dumps(results))
        return 0
    for name, res in results.items():
        print(f"{name}")
        print(f"  {'system':<14} nDCG@{CUTOFF_NDCG}  MAP@{CUTOFF_MAP}")
        for s, (n, m) in res.items():
            print(f"  {s:<14} {n:7.4f}  {m:7.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
