"""Does the resident text leg rank as FTS5 on a real fleet? Every question, every base, every row.

    python3 -m kbtools.resident_identity FLEET [--questions FILE]

For each question (default: the fleet's questions.tsv, as `kb bench` reads it) and each base,
the resident leg's rows (path, bm25, heading, text, line) are compared with FTS5's, scored
both ways the leg scores (numpy arrays and plain Python), and the text leg's pool over the
bases with the FTS5 one's (id, score, best chunk). Prints the differences and their count;
exits 1 if there is any. The property test (tests/test_resident_identity.py) does the same
over random notes and edits; this is the check on a large fleet (docs/speed.md).
"""

from __future__ import annotations

import argparse
import sys

from engine.errors import KbError
from engine.memory import Memory

from .bench import find_questions, load_questions

BOTH_WAYS = (0, 10**9)  # small_postings: every question by numpy, every question in Python


def differences(paths: list[str], questions: list[str] | None = None, say=print) -> tuple[int, int]:
    """(differences, comparisons) between the resident leg and FTS5 on these bases."""
    fts5 = Memory(paths, update=False)
    for name, idx in fts5.indexes.items():
        # Opened without an update, an index of another schema opens empty: every comparison
        # would then agree, nothing against nothing.
        if idx.chunk_count() == 0 or idx.was_rebuilt:
            raise KbError(f"{idx.path}: base {name} holds no index of this kb (run kb index first); nothing compared")
    resident = Memory(paths, update=False, resident=True)
    if not resident.wait_resident(timeout=3600):
        raise SystemExit("the resident leg was not built")
    if questions is None:
        questions, _ = find_questions(fts5)
    found = compared = 0
    for q in questions:
        terms = list(fts5.ask(q, record_miss=False, with_passages=False).terms)
        for name, idx in fts5.indexes.items():
            leg = resident._resident[name]
            want = idx.search(terms, 50, q)
            for small in BOTH_WAYS:
                leg.small_postings = small
                compared += 1
                if leg.search(terms, 50, q) != want:
                    found += 1
                    say(f"differs: base {name}, {'Python' if small else 'numpy'}: {q}")
            del leg.small_postings
        pools = [[(h.id, h.score, h.chunk.get()) for h in m._text_leg(terms, q)] for m in (resident, fts5)]
        compared += 1
        if pools[0] != pools[1]:
            found += 1
            say(f"differs: the pool over the bases: {q}")
    return found, compared


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m kbtools.resident_identity", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", metavar="PATH", help="a base or a fleet root, indexed")
    ap.add_argument("--questions", metavar="FILE", help="one question per line, or question<TAB>answer lines")
    args = ap.parse_args(argv)
    try:
        questions = load_questions(args.questions) if args.questions else None
        found, compared = differences(args.paths, questions)
    except KbError as e:
        print(f"resident_identity: {e}", file=sys.stderr)
        return 2
    print(f"{compared} comparisons (each base's rows both ways, and the pool): {found} differences")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
