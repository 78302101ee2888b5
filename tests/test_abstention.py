"""The abstention instrument in `kb eval`: a labelled question set, counted per label."""

from __future__ import annotations

import json

from conftest import kb_here

SET = (
    "how much protein per meal\tin-scope\tyaron/knowledge/protein-basics.md\n"
    "quem decide se um deploy pode ir pra producao\tin-scope\tyaron/knowledge/protein-basics.md\n"
    "how do I deploy a sailboat anchor\tnear\t-\n"
    "qual a capital da mongolia\tfar\t-\n"
    "xyzzy plugh\tnoise\t-\n"
)


def _eval_json(demo, text: str):
    gold = demo / "questions.tsv"
    gold.write_text(text, encoding="utf-8")
    return kb_here("eval", str(gold), str(demo), "--json")


def test_matrix_counts_each_label_by_verdict(demo):
    r = _eval_json(demo, SET)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    by_q = {q["question"]: q for q in out["questions"]}
    rows = {row["label"]: row for row in out["abstention"]}
    assert list(rows) == ["in-scope", "near", "far", "noise"]
    for label, row in rows.items():
        mine = [q for q in out["questions"] if q["label"] == label]
        assert row["total"] == len(mine)
        assert (row["confident"], row["guess"], row["nothing"]) == tuple(
            sum(q["verdict"] == v for q in mine) for v in ("hit", "guess", "nothing")
        )
    # Both in-scope questions are answered confidently; only the first names the right file.
    assert rows["in-scope"]["confident"] == 2 and rows["in-scope"]["confident_right"] == 1
    assert by_q["xyzzy plugh"]["verdict"] == "nothing"
    assert by_q["qual a capital da mongolia"]["verdict"] == "nothing"


def test_matrix_is_printed_for_a_labelled_set(demo):
    gold = demo / "questions.tsv"
    gold.write_text(SET, encoding="utf-8")
    r = kb_here("eval", str(gold), str(demo), "--no-speed")
    assert r.returncode == 0, r.stderr
    assert "ABSTAIN" in r.stdout
    assert any(line.split()[:1] == ["noise"] and line.split()[1:4] == ["0", "0", "1"] for line in r.stdout.splitlines())


def test_a_two_column_key_prints_no_matrix(demo):
    r = kb_here("eval", str(demo / "gold.tsv"), str(demo), "--no-speed")
    assert r.returncode == 0, r.stderr
    assert "ABSTAIN" not in r.stdout


def test_bad_labels_are_one_line_errors_with_the_line_number(demo):
    cases = [
        ("x\tmaybe\t-\n", " label 'maybe' is not one of in-scope, near, far, noise"),
        ("x\tin-scope\t-\n", ":1: an in-scope question names the file that answers it"),
        ("x\tnear\tyaron/knowledge/protein-basics.md\n", ":1: a near question names no file"),
        ("x\tfar\t-\ny\t-\n", ":2: 2 columns, but line 1 has 3"),
    ]
    for text, message in cases:
        r = _eval_json(demo, text)
        assert r.returncode != 0
        assert message in r.stderr, (text, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1


def test_the_demo_set_is_blind_and_large_enough():
    from conftest import DEMO

    labels = [line.split("\t")[1] for line in (DEMO / "questions.tsv").read_text(encoding="utf-8").splitlines()
              if line and not line.startswith("#")]
    assert labels.count("in-scope") >= 20
    assert all(labels.count(k) >= 10 for k in ("near", "far", "noise"))
