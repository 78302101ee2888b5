"""Does a verdict mean something once `kb label`'s proposals are accepted as they come?

    python3 -m kbtools.benchmark_labels CORPUS [QUESTIONS] [--json]

CORPUS is a folder holding notes/ and questions.tsv (the held-out corpora of issue 26), or a
folder of markdown with QUESTIONS given (default: textual_docs_questions.tsv beside this file,
for Textual's docs/ folder). It is copied; the original is never touched. QUESTIONS is a TSV
of `question<TAB>right note(s)` (space-separated; `-` when out of scope), optionally a third
column naming the kind (in-scope, near, far, noise), written before any labelling.

On the copy, unlabelled, every question is asked; then every proposal is written (`kb label
--write`, accepted as it comes, no edit) and every question asked again. Printed: the fused
first row right before and after, HIT precision, the HIT rate of answerable questions,
out-of-scope HITs, abstentions turned into wrong HITs, the ratio of HIT precision to the
unlabelled first row, and for each wrong HIT whether a proposed key scored or only the note's
title, file name and purpose words (marked `wrng*`). docs/labels.md holds the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET_HIT_SHARE = 0.30
TARGET_RATIO = 1.5


def load_questions(path: Path) -> list[tuple[str, set[str], str]]:
    """question<TAB>right note(s) (space-separated, `-` when out of scope)[<TAB>kind]."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) not in (2, 3):
            raise SystemExit(f"{path}:{n}: expected question<TAB>note(s)[<TAB>kind]")
        right = set() if cols[1].strip() == "-" else set(cols[1].split())
        kind = cols[2].strip() if len(cols) == 3 else ("in-scope" if right else "out")
        out.append((cols[0].strip(), right, kind))
    return out


def grade(memory, base: str, questions) -> list[dict]:
    rows = []
    for q, right, kind in questions:
        a = memory.ask(q, record_miss=False, with_passages=False, top=5, classify=False)
        ids = {f"{base}/{r}" for r in right}
        first = a.results[0].id if a.results else None
        top = a.keyword[0] if a.keyword else None
        # Did a key (one-word or phrase) score for the keyword top, or only its title, file
        # name and purpose words, which score whatever the label says once the note has one?
        by_key = bool(top) and any(why.startswith(("key", "phrase")) for _, why, _, _ in top.terms)
        rows.append({
            "by_key": by_key,
            "question": q, "kind": kind, "answerable": bool(right), "verdict": a.verdict,
            "keyword_top": a.keyword_top, "first_row": first,
            "first_row_right": first in ids, "hit_right": a.verdict == "hit" and a.keyword_top in ids,
        })
    return rows


def figures(before: list[dict], after: list[dict]) -> dict:
    """The issue's table: every figure from the two gradings of the same questions."""
    ans_b = [r for r in before if r["answerable"]]
    ans_a = [r for r in after if r["answerable"]]
    hits = [r for r in after if r["verdict"] == "hit"]
    right = sum(r["hit_right"] for r in hits)
    first_b = sum(r["first_row_right"] for r in ans_b)
    first_a = sum(r["first_row_right"] for r in ans_a)
    turned = sum(1 for b, a in zip(before, after)
                 if b["verdict"] != "hit" and a["verdict"] == "hit" and not a["hit_right"])
    n, na = len(before), len(ans_b)
    precision = right / len(hits) if hits else 0.0
    first_rate = first_b / na if na else 0.0
    return {
        "questions": n, "answerable": na,
        "before_verdicts": dict(Counter(r["verdict"] for r in before)),
        "after_verdicts": dict(Counter(r["verdict"] for r in after)),
        "first_row_before": first_b, "first_row_after": first_a,
        "hits": len(hits), "hits_right": right, "hit_precision": precision,
        "hit_rate_answerable": sum(1 for r in ans_a if r["verdict"] == "hit") / na if na else 0.0,
        "out_of_scope_hits": sum(1 for r in hits if not r["answerable"]),
        "abstentions_turned_wrong_hits": turned, "turned_share": turned / n if n else 0.0,
        "ratio": precision / first_rate if first_rate else float("inf"),
        "wrong_hits_by_a_key": sum(1 for r in hits if not r["hit_right"] and r["by_key"]),
        "wrong_hits_by_name_words_only": sum(1 for r in hits if not r["hit_right"] and not r["by_key"]),
    }


def corpus_paths(path: Path, questions: Path | None) -> tuple[Path, Path]:
    """A corpus folder holding notes/ and questions.tsv, or a notes folder and a question file."""
    if (path / "notes").is_dir() and questions is None:
        return path / "notes", path / "questions.tsv"
    return path, questions or HERE / "textual_docs_questions.tsv"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m kbtools.benchmark_labels", description=__doc__.split("\n\n", 1)[0],
        epilog="The corpus is copied; the original is never touched.")
    parser.add_argument("corpus", metavar="CORPUS", type=Path,
                        help="a folder of markdown nobody wrote for this project, or a folder holding notes/ and questions.tsv")
    parser.add_argument("questions", metavar="QUESTIONS", type=Path, nargs="?", default=None,
                        help="question<TAB>right note(s)[<TAB>kind] (default: CORPUS/questions.tsv, else "
                             "textual_docs_questions.tsv beside this file)")
    parser.add_argument("--runs", type=int, default=1, help="time the proposals over this many runs")
    parser.add_argument("--json", action="store_true", help="the figures as one line of JSON")
    args = parser.parse_args(argv)
    corpus, qpath = corpus_paths(args.corpus.resolve(), args.questions)
    for path, what in ((corpus, "no such folder"), (qpath, "no such question file")):
        if not path.exists():
            parser.error(f"{path}: {what}")
    questions = load_questions(qpath)

    from engine.notes.fleet import copy_notes, discover
    from engine.review.labelcli import collect, write_all
    from engine.memory import Memory

    with tempfile.TemporaryDirectory(prefix="kb-labels-bench-") as tmp:
        copy = Path(tmp) / corpus.name
        copy_notes(corpus, copy, ".git")
        base = copy.name
        before_mem = Memory([copy])
        before = grade(before_mem, base, questions)

        fleet = discover([copy])
        propose_ms = []
        for _ in range(max(1, args.runs)):  # nothing is written between runs: the same work each time
            t0 = time.perf_counter()
            proposals = collect(fleet, before_mem)
            propose_ms.append(1000 * (time.perf_counter() - t0))
        t1 = time.perf_counter()
        done = write_all(proposals, [], merge=True)
        t2 = time.perf_counter()
        keys = [len(np.proposal.keys) for np in proposals if np.proposal.can_write]

        after = grade(Memory([copy]), base, questions)

    f = figures(before, after)
    f.update(corpus=str(corpus), question_file=str(qpath), written=len(done.written),
             skipped=len(done.skipped), refused=len(done.refused), propose_ms=statistics.median(propose_ms))
    if args.json:
        print(json.dumps(f))
        return 0
    n, na = f["questions"], f["answerable"]
    print(f"corpus:     {corpus} ({len(proposals)} notes proposed, {len(done.written)} written, "
          f"{len(done.skipped)} skipped, {len(done.refused)} refused)")
    print(f"questions:  {n} from {qpath} ({na} answerable, {n - na} out of scope)")
    print(f"labelling:  proposals median {statistics.median(propose_ms):.0f} ms over {len(propose_ms)} run(s); "
          f"writing {1000 * (t2 - t1):.0f} ms; keys per written note median "
          f"{statistics.median(keys) if keys else 0}, max {max(keys, default=0)}")
    print(f"before:     verdicts {f['before_verdicts']}; first row right {f['first_row_before']}/{na}")
    print(f"after:      verdicts {f['after_verdicts']}; first row right {f['first_row_after']}/{na}")
    print(f"HIT:        {f['hits']} hits, {f['hits_right']} right: precision {100 * f['hit_precision']:.0f}%; "
          f"HIT rate of answerable {100 * f['hit_rate_answerable']:.0f}% (aim >= {100 * TARGET_HIT_SHARE:.0f}%)")
    print(f"risk:       out-of-scope HITs {f['out_of_scope_hits']} (target 0); abstentions turned into wrong HITs "
          f"{f['abstentions_turned_wrong_hits']}/{n} ({100 * f['turned_share']:.0f}%, target <= 5%)")
    print(f"ratio:      HIT precision / unlabelled first-row rate = {f['ratio']:.2f}")
    print(f"wrong HITs: {f['wrong_hits_by_a_key']} where a proposed key scored, "
          f"{f['wrong_hits_by_name_words_only']} on title, file name or purpose words alone")
    for r in after:
        mark = "hit " if r["verdict"] == "hit" else r["verdict"][:5].ljust(5)
        ok = "right" if r["hit_right"] else (("wrong" if r["by_key"] else "wrng*") if r["verdict"] == "hit" else "")
        fused = "" if r["first_row"] == r["keyword_top"] else (
            f"  (first row {'right' if r['first_row_right'] else 'wrong'}: {r['first_row']})")
        print(f"  {mark} {ok:5} [{r['kind']}] {r['question']}  -> {r['keyword_top']}{fused}")
    for line in done.refused:
        print(f"refused: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
