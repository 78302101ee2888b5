"""What the verdicts mean here (issue 26): for the fleet's own key, how often hit, guess and
nothing were right, and the scores of right and wrong answers drawn against the floor, in
`kb eval` (text and --json) and on the eval screen."""

from __future__ import annotations

import asyncio
import json

from conftest import copy_demo, run_kb
from tui_support import make_app, ready, run_eval, screen_text

from engine.review.evaluate import GoldQuestion, GradedQuestion, score_strip, verdict_meaning

# One right hit, one hit on the wrong note, a bait that hits, two right refusals.
SET = (
    "how much protein per meal\tin-scope\tyaron/knowledge/protein-basics.md\n"
    "quem decide se um deploy pode ir pra producao\tin-scope\tyaron/knowledge/protein-basics.md\n"
    "how do I deploy a sailboat anchor\tnear\t-\n"
    "qual a capital da mongolia\tfar\t-\n"
    "xyzzy plugh\tnoise\t-\n"
)


def _graded(verdict: str, files: tuple[str, ...], top: str | None, score: float = 10.0) -> GradedQuestion:
    return GradedQuestion(gold=GoldQuestion(1, "q", files), verdict=verdict, keyword_top=top, fused_top=top,
                          owner=None, score=score, margin=1.0)


def test_right_means_the_note_to_open_is_named_or_a_decline_was_declined():
    m = {v.verdict: (v.right, v.total) for v in verdict_meaning([
        _graded("hit", ("a/x.md",), "a/x.md"),       # right
        _graded("hit", (), "a/x.md"),                # a hit on a question to decline: wrong
        _graded("guess", ("a/x.md",), "a/x.md"),     # the guess offered the right note: right
        _graded("guess", ("a/x.md",), "a/y.md"),     # wrong
        _graded("nothing", (), None, 0.0),           # declined a decline: right
        _graded("nothing", ("a/x.md",), None, 0.0),  # declined a question a note answers: wrong
    ])}
    assert m == {"hit": (1, 2), "guess": (1, 2), "nothing": (1, 2)}


def test_the_demo_key_in_json_and_text(demo):
    out = json.loads(run_kb("eval", str(demo / "gold.tsv"), str(demo), "--json").stdout)
    assert out["verdicts"] == [{"verdict": "hit", "right": 10, "total": 10}, {"verdict": "guess", "right": 0, "total": 0},
                               {"verdict": "nothing", "right": 3, "total": 3}]
    assert out["scores"]["floor"] == 6.9162 and len(out["scores"]["correct"]) == 10 and out["scores"]["misses"] == []
    text = run_kb("eval", str(demo / "gold.tsv"), str(demo), "--no-speed").stdout
    assert "VERDICT  how often each verdict was right on this key" in text
    assert "       hit        10/10 right (100%): the note to open is one the key names" in text
    assert "       nothing      3/3 right (100%): the key says to decline the question" in text


def test_wrong_answers_are_counted_and_drawn_beside_the_floor_in_80_plain_columns(demo):
    key = demo / "questions.tsv"
    key.write_text(SET, encoding="utf-8")
    out = json.loads(run_kb("eval", str(key), str(demo), "--json").stdout)
    assert {v["verdict"]: (v["right"], v["total"]) for v in out["verdicts"]} == {
        "hit": (1, 3), "guess": (0, 0), "nothing": (2, 2)}
    text = run_kb("eval", str(key), str(demo), "--no-speed").stdout
    block = text[text.index("VERDICT"):].splitlines()
    assert all(len(line) <= 80 and line.isascii() for line in block)
    misses = next(line for line in block if line.startswith("       misses  "))
    assert misses.count("x") + sum(int(c) for c in misses if c.isdigit()) == 2  # the two wrong hits
    assert "|" in misses and "floor 6.92" in block[-1]


def test_the_strip_puts_the_floor_between_scores_below_and_above():
    correct, misses, axis = score_strip([30.0], [3.0], 10.0)
    cells = correct[15:]
    assert cells.index("|") < cells.index("o")
    assert misses[15:].index("x") < misses[15:].index("|")
    assert axis.strip().startswith("0") and "floor 10.00" in axis


def test_the_eval_screen_shows_the_verdict_block(tmp_path):
    async def go():
        app = make_app(copy_demo(tmp_path / "demo"))
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await run_eval(pilot, to_end=True)
            text = screen_text(app)
            assert "VERDICT" in text and "10/10 right (100%)" in text and "3/3 right (100%)" in text
            assert "floor 6.92" in text
    asyncio.run(go())
