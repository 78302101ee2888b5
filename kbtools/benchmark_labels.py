"""Does a verdict mean something once `kb label`'s proposals are accepted as they come?

    python3 -m kbtools.benchmark_labels CORPUS [QUESTIONS]

CORPUS is a folder of markdown nobody wrote for this project (it is copied; the original is
never touched). QUESTIONS is a TSV of `question<TAB>right note(s)` written before any
labelling (default: textual_docs_questions.tsv beside this file, for Textual's docs/ folder;
the others beside it: mkdocs_material_questions.tsv for Material for MkDocs' docs/,
fastapi_pt_questions.tsv for FastAPI's docs/pt/docs, uv_docs_questions.tsv for uv's docs/).

On the copy, unlabelled, every question is asked and the fused reading list's first row
graded. Then every proposal is written (`kb label --write`, accepted as it comes, no edit)
and every question asked again. Printed: the share answered `hit`, how often a hit names a
right note, and how often the unlabelled first row did; plus the timings of the labelling.
Each question's line shows the owner, and the fused first row when it is another note.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET_HIT_SHARE = 0.30
TARGET_RATIO = 1.5
PROPOSE_RUNS = 1


def load_questions(path: Path) -> list[tuple[str, set[str]]]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 2:
            raise SystemExit(f"{path}:{n}: expected question<TAB>note(s)")
        out.append((cols[0].strip(), set(cols[1].split())))
    return out


def grade(memory, base: str, questions) -> list[dict]:
    rows = []
    for q, right in questions:
        a = memory.ask(q, record_miss=False, with_passages=False, top=5, classify=False)
        ids = {f"{base}/{r}" for r in right}
        first = a.results[0].id if a.results else None
        rows.append({
            "question": q, "verdict": a.verdict, "keyword_top": a.keyword_top, "first_row": first,
            "first_row_right": first in ids, "hit_right": a.verdict == "hit" and a.keyword_top in ids,
        })
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m kbtools.benchmark_labels", description=__doc__.split("\n\n", 1)[0],
        epilog="The corpus is copied; the original is never touched.")
    parser.add_argument("corpus", metavar="CORPUS", type=Path, help="a folder of markdown nobody wrote for this project")
    parser.add_argument("questions", metavar="QUESTIONS", type=Path, nargs="?",
                        default=HERE / "textual_docs_questions.tsv",
                        help="question<TAB>right note(s) (default: textual_docs_questions.tsv beside this file)")
    args = parser.parse_args(argv)
    corpus = args.corpus.resolve()
    for path, what in ((corpus, "no such folder"), (args.questions, "no such question file")):
        if not path.exists():
            parser.error(f"{path}: {what}")
    qpath = args.questions
    questions = load_questions(qpath)

    from engine.fleet import copy_notes, discover
    from engine.labelcli import collect, write
    from engine.memory import Memory

    with tempfile.TemporaryDirectory(prefix="kb-labels-bench-") as tmp:
        copy = Path(tmp) / corpus.name
        copy_notes(corpus, copy, ".git")
        base = copy.name
        before_mem = Memory([copy])
        before = grade(before_mem, base, questions)

        fleet = discover([copy])
        propose_ms = []
        for _ in range(PROPOSE_RUNS):  # nothing is written between runs: the same work each time
            t0 = time.perf_counter()
            proposals = collect(fleet, before_mem)
            propose_ms.append(1000 * (time.perf_counter() - t0))
        t1 = time.perf_counter()
        written, refused = write(proposals, [], merge=True)
        t2 = time.perf_counter()
        keys = [len(np.proposal.keys) for np in proposals]

        after = grade(Memory([copy]), base, questions)

    n = len(questions)
    first_right = sum(r["first_row_right"] for r in before)
    hits = [r for r in after if r["verdict"] == "hit"]
    hit_right = sum(r["hit_right"] for r in after)
    first_rate = first_right / n
    hit_rate = hit_right / len(hits) if hits else 0.0
    after_first = sum(r["first_row_right"] for r in after)
    print(f"corpus:     {corpus} ({len(proposals)} notes proposed, {len(written)} written, {len(refused)} refused)")
    print(f"questions:  {n} from {qpath.name}")
    q = statistics.quantiles(propose_ms, n=20, method="inclusive") if len(propose_ms) > 1 else propose_ms * 19
    print(f"labelling:  proposals median {statistics.median(propose_ms):.0f} ms, p95 {q[18]:.0f} ms "
          f"over {len(propose_ms)} runs; writing {1000 * (t2 - t1):.0f} ms (once); "
          f"keys per note median {statistics.median(keys) if keys else 0}, min {min(keys, default=0)}, max {max(keys, default=0)}")
    print(f"before:     hit {sum(r['verdict'] == 'hit' for r in before)}/{n}; "
          f"fused first row right {first_right}/{n} ({100 * first_rate:.0f}%)")
    print(f"after:      hit {len(hits)}/{n} ({100 * len(hits) / n:.0f}%, target >= {100 * TARGET_HIT_SHARE:.0f}%); "
          f"a hit names a right note {hit_right}/{len(hits)} ({100 * hit_rate:.0f}%); "
          f"fused first row right {after_first}/{n}")
    ratio = hit_rate / first_rate if first_rate else float("inf")
    print(f"ratio:      hit right rate / unlabelled first-row right rate = {ratio:.2f} (target >= {TARGET_RATIO})")
    for r in after:
        mark = "hit " if r["verdict"] == "hit" else r["verdict"][:5].ljust(5)
        ok = "right" if r["hit_right"] else ("wrong" if r["verdict"] == "hit" else "")
        fused = "" if r["first_row"] == r["keyword_top"] else f"  (fused first row {'right' if r['first_row_right'] else 'wrong'}: {r['first_row']})"
        print(f"  {mark} {ok:5} {r['question']}  -> {r['keyword_top']}{fused}")
    for line in refused:
        print(f"refused: {line}")
    met = len(hits) / n >= TARGET_HIT_SHARE and ratio >= TARGET_RATIO
    print("targets:    " + ("met" if met else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
