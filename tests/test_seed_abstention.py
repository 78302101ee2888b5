"""The seed's blind abstention figure on the seed's demo fleet, by default, exact (issue 26).

Seed 000 prints it: in-scope 12 confident / 2 guess / 6 nothing, 28 of 30 out-of-scope not
answered confidently, the two medical baits through at 33.0 and 24.8. The seed's files carry
no licence, so they are not in this repository (tests/data/seed_abstention/ORIGIN.md): the
test reads them from a checkout named by KB_SEED_ULPIA, checked file by file against the
hashes of the commits the figure was read at.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import REPO, run_kb

DATA = REPO / "tests" / "data" / "seed_abstention"
# The seed's label spellings, as our matrix names them.
LABEL = {"in-scope": "in-scope", "near-oos": "near", "far-oos": "far", "noise": "noise"}


def _checkout() -> Path:
    named = os.environ.get("KB_SEED_ULPIA")
    if not named:
        pytest.skip("KB_SEED_ULPIA names no checkout of richard-wollyce/ulpia (tests/data/seed_abstention/ORIGIN.md)")
    root = Path(named)
    for line in (DATA / "files.sha256").read_text(encoding="utf-8").splitlines():
        digest, rel = line.split(None, 1)
        f = root / rel
        assert f.is_file(), f"{f}: not in the checkout"
        body = f.read_bytes().replace(b"\r\n", b"\n")  # a Windows checkout's line ends
        assert hashlib.sha256(body).hexdigest() == digest, f"{f}: not the seed's file (tests/data/seed_abstention/files.sha256)"
    return root


def _three_columns(root: Path, dest: Path) -> Path:
    """The seed's `question<TAB>label` set with our reading of which note answers each
    in-scope line added as kb eval's third column."""
    answers = dict(line.split("\t") for line in (DATA / "answers.tsv").read_text(encoding="utf-8").splitlines()
                   if line and not line.startswith("#"))
    src = (root / "benchmarks" / "abstention" / "questions.tsv").read_text(encoding="utf-8").splitlines()
    out = []
    for n, line in enumerate(src, start=1):
        if not line or line.startswith("#"):
            continue
        question, label = line.split("\t")
        out.append(f"{question}\t{LABEL[label]}\t{answers[str(n)] if label == 'in-scope' else '-'}")
    dest.write_text("\n".join(out) + "\n", encoding="utf-8")
    return dest


def _eval(fleet: Path, questions: Path, *opts: str) -> dict:
    r = run_kb("eval", str(questions), str(fleet), "--json", *opts)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.fixture
def seed(tmp_path: Path) -> tuple[Path, Path]:
    root = _checkout()
    fleet = tmp_path / "demo"
    shutil.copytree(root / "examples" / "demo", fleet)
    return fleet, _three_columns(root, tmp_path / "questions.tsv")


def _matrix(out: dict) -> dict[str, tuple[int, int, int]]:
    return {r["label"]: (r["confident"], r["guess"], r["nothing"]) for r in out["abstention"]}


def test_the_seeds_figure_by_default(seed):
    out = _eval(*seed)
    assert out["entries"] == 11 and out["agents"] == 3
    m = _matrix(out)
    assert m["in-scope"] == (12, 2, 6)
    out_of_scope = [q for q in out["questions"] if q["label"] != "in-scope"]
    assert len(out_of_scope) == 30 and sum(q["verdict"] != "hit" for q in out_of_scope) == 28
    through = sorted(((round(q["score"], 1), q["keyword_top"]) for q in out_of_scope if q["verdict"] == "hit"),
                     reverse=True)
    assert through == [(33.0, "yaron/knowledge/protein-basics.md"), (24.8, "yaron/knowledge/training-recovery.md")]
    assert m["far"] == (0, 0, 10) and m["noise"] == (0, 0, 10)


def test_the_coverage_rule_buys_the_two_baits_with_eleven_right_answers(seed):
    # Why the rule is off by default: measured, not assumed.
    default, ruled = _eval(*seed), _eval(*seed, "--coverage-rule")
    assert _matrix(ruled)["in-scope"] == (1, 13, 6)
    assert all(q["verdict"] != "hit" for q in ruled["questions"] if q["label"] != "in-scope")
    right = {r["label"]: r["confident_right"] for r in default["abstention"]}["in-scope"]
    assert right == 8  # of the 12 confident, by our reading of which note answers (answers.tsv)
