"""The classifier as a real process: each coverage value, and every way it can fail back to the fold."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
from _who import (
    ADJACENT, COVERED, EXAMPLE_CLASSIFIER, GOLD_FIRST, UNCOVERED, UNCOVERED_SEED, configure, example_command, script,
)
from conftest import REPO, run_kb

from engine import Memory
from engine.stages.classifier import parse_reply
from engine.stages.coverage import UNCOVERED_LINE, coverage_line
from engine.stages.dossier import EVIDENCE_LINES, build_dossier
from engine.notes.roster import roster_of


def _same_retrieval(a, b) -> None:
    """The classifier chooses who answers and nothing else."""
    assert a.verdict == b.verdict
    assert a.gate == b.gate
    assert [(k.id, k.score) for k in a.keyword] == [(k.id, k.score) for k in b.keyword]
    assert [r.id for r in a.results] == [r.id for r in b.results]
    assert a.agent.totals == b.agent.totals


@pytest.fixture
def example(demo):
    configure(demo, example_command())
    return demo


# -- the example classifier, one case per coverage value -------------------------------------


def test_covered_the_example_classifier_names_the_owner(example):
    mem = Memory(example)
    a = mem.ask(COVERED, record_miss=False)
    plain = mem.ask(COVERED, record_miss=False, classify=False)
    assert (a.agent.name, a.agent.chosen_by, a.agent.coverage) == ("yaron", "classifier", "covered")
    assert a.agent.subject == "protein meal"
    assert a.agent.note is None
    assert coverage_line(a.agent) is None  # covered needs no sentence
    assert plain.agent.chosen_by == "fold"
    _same_retrieval(a, plain)


def test_adjacent_names_the_nearest_agent_and_says_it_is_a_stretch(example):
    mem = Memory(example)
    a = mem.ask(ADJACENT, record_miss=False)
    assert a.verdict == "nothing"  # no note matched: the fold alone has no one to name
    assert mem.ask(ADJACENT, record_miss=False, classify=False).agent.name is None
    assert (a.agent.name, a.agent.coverage, a.agent.chosen_by) == ("zed", "adjacent", "classifier")
    line = coverage_line(a.agent)
    assert line.startswith("VESTA: no agent in this fleet owns kubernetes systems monitoring. zed is the nearest:")
    assert "give zed the knowledge or to create an agent" in line
    out = run_kb("route", ADJACENT, str(example))
    assert out.returncode == 0, out.stderr
    assert line in out.stdout.splitlines()
    assert "agent:    chosen by the classifier: zed, adjacent on kubernetes systems monitoring" in out.stdout


def test_uncovered_prints_the_seeds_one_line_on_every_surface(example):
    mem = Memory(example)
    a = mem.ask(UNCOVERED, record_miss=False)
    assert (a.agent.name, a.agent.coverage, a.agent.chosen_by) == (None, "uncovered", "classifier")
    expected = UNCOVERED_SEED.format(subject=a.agent.subject, reason=a.agent.reason)
    assert a.agent.subject == "acao bolsa comprar"
    assert UNCOVERED_LINE.format(subject=a.agent.subject, reason=a.agent.reason) == expected  # verbatim, "How the Catalogue Ranks"
    assert coverage_line(a.agent) == expected
    text = run_kb("route", UNCOVERED, str(example))
    hybrid = run_kb("route", UNCOVERED, str(example), "--hybrid")
    js = run_kb("route", UNCOVERED, str(example), "--json")
    boot = run_kb("boot", str(example), "--text", stdin=UNCOVERED + "\n")
    for p in (text, hybrid, js, boot):
        assert p.returncode == 0, p.stderr
    assert expected in text.stdout.splitlines()
    assert expected in hybrid.stdout.splitlines()
    assert json.loads(js.stdout)["agent"]["line"] == expected
    assert boot.stdout.strip() == expected  # and no identity is handed over


def test_the_classifier_never_changes_the_verdict_on_any_gold_question(example):
    mem = Memory(example)
    for line in (example / "gold.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        q = line.split("\t")[0]
        a, plain = mem.ask(q, record_miss=False), mem.ask(q, record_miss=False, classify=False)
        _same_retrieval(a, plain)
        assert a.agent.chosen_by == "classifier", (q, a.agent.note)


def test_the_relative_command_in_the_demo_fleet_txt_resolves_against_the_fleet_root(tmp_path, demo):
    # The demo's commented line is `python3 ../classify_by_roster.py`: relative to fleet.txt,
    # while the process runs in an empty directory elsewhere.
    shutil.copy(EXAMPLE_CLASSIFIER, tmp_path / "classify_by_roster.py")
    shipped = (demo / "fleet.txt").read_text()
    line = next(ln for ln in shipped.splitlines() if "classifier" in ln)
    assert line.startswith("#"), "the shipped demo keeps its classifier off (see the README)"
    configure(demo, line.lstrip("# ").split("=", 1)[1].strip().replace("python3", sys.executable, 1))
    a = Memory(demo).ask(GOLD_FIRST, record_miss=False)
    assert (a.agent.name, a.agent.chosen_by, a.agent.coverage) == ("zed", "classifier", "covered"), a.agent.note


# -- every failure falls back to the fold, and says so ----------------------------------------


def _fallback(demo, command, question=COVERED, timeout_ms=None):
    configure(demo, command, timeout_ms)
    mem = Memory(demo)
    plain = mem.ask(question, record_miss=False, classify=False)
    t0 = time.monotonic()
    a = mem.ask(question, record_miss=False)
    took = time.monotonic() - t0
    assert a.agent.chosen_by == "fold"
    assert (a.agent.name, a.agent.score, a.agent.margin) == (plain.agent.name, plain.agent.score, plain.agent.margin)
    assert a.agent.coverage is None
    _same_retrieval(a, plain)
    return a, took


FOUR_LINES = 'print("SUBJECT: protein\\nREASON: r.\\nCOVERAGE: covered\\nOWNER: yaron")\n'


def test_a_classifier_that_exits_non_zero_falls_back_even_if_it_printed_a_verdict(tmp_path, demo):
    cmd = script(tmp_path, "fails.py", "import sys\n" + FOUR_LINES + "print('model unavailable', file=sys.stderr)\n"
                 "sys.exit(3)\n")
    a, _ = _fallback(demo, cmd)
    assert a.agent.note == "the classifier exited with status 3: 'model unavailable'"
    out = run_kb("route", COVERED, str(demo))
    assert "agent:    chosen by the fold, because the classifier exited with status 3: 'model unavailable'" in out.stdout
    assert json.loads(run_kb("route", COVERED, str(demo), "--json").stdout)["agent"]["chosen_by"] == "fold"


def test_a_classifier_past_its_timeout_is_cut_off_on_time(tmp_path, demo):
    # It starts a grandchild that holds the pipe too: the whole group must end, not just the child.
    cmd = script(tmp_path, "hangs.py", """
        import subprocess, sys, time
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        time.sleep(60)
    """)
    a, took = _fallback(demo, cmd, timeout_ms=600)
    assert a.agent.note == "the classifier did not answer within 600 ms"
    assert took < 0.6 + 1.5, f"took {took:.2f} s against a 0.6 s timeout"


def test_a_classifier_that_prints_garbage_falls_back(tmp_path, demo):
    cmd = script(tmp_path, "garbage.py", "print('I think Zed should probably handle this one!')\n")
    a, _ = _fallback(demo, cmd)
    assert a.agent.note.startswith("the classifier's answer was not usable: its reply has none of the four lines")
    assert "I think Zed" in a.agent.note


def test_a_name_off_the_roster_resolves_to_no_owner_and_falls_back(tmp_path, demo):
    cmd = script(tmp_path, "invents.py", 'print("SUBJECT: devops\\nREASON: r.\\nCOVERAGE: covered\\nOWNER: bob")\n')
    a, _ = _fallback(demo, cmd)
    assert a.agent.name == "yaron"  # the fold's owner, not bob
    assert a.agent.note == ("the classifier's answer was not usable: it named 'bob', who is not on the roster "
                            "(steve, yaron, zed), so no owner")


def test_a_missing_line_falls_back(tmp_path, demo):
    cmd = script(tmp_path, "short.py", 'print("SUBJECT: protein\\nREASON: r.\\nCOVERAGE: covered")\n')
    a, _ = _fallback(demo, cmd)
    assert a.agent.note == "the classifier's answer was not usable: its reply has no OWNER line"


def test_a_command_that_does_not_exist_falls_back(demo):
    a, _ = _fallback(demo, "kb-no-such-classifier-4114 --fast")
    assert a.agent.note.startswith("the classifier 'kb-no-such-classifier-4114' could not start")


def test_the_fold_chooses_silently_when_no_classifier_is_configured(demo):
    a = Memory(demo).ask(COVERED, record_miss=False)
    assert (a.agent.chosen_by, a.agent.note, a.agent.coverage) == ("fold", None, None)
    assert "agent:" not in run_kb("route", COVERED, str(demo)).stdout


# -- what it is shown, and where it runs -------------------------------------------------------


def test_it_reads_the_dossier_on_stdin_in_an_empty_directory_outside_the_fleet(tmp_path, demo):
    seen = tmp_path / "seen.json"
    cmd = script(tmp_path, "spy.py", f"""
        import json, os, sys
        json.dump({{"stdin": sys.stdin.read(), "cwd": os.getcwd(), "listing": os.listdir(".")}},
                  open({str(seen)!r}, "w"))
        print("SUBJECT: protein\\nREASON: because.\\nCOVERAGE: covered\\nOWNER: Yaron")
    """)
    configure(demo, cmd)
    mem = Memory(demo)
    a = mem.ask(COVERED, record_miss=False)
    got = json.loads(seen.read_text())
    assert a.agent.name == "yaron"  # the agent.txt name resolves to the base's key
    assert got["stdin"] == build_dossier(mem.roster, COVERED, a.keyword, a.agent.totals)
    assert got["listing"] == []
    cwd = Path(got["cwd"]).resolve()
    assert demo.resolve() not in (cwd, *cwd.parents) and REPO not in (cwd, *cwd.parents)
    assert not cwd.exists(), "the scratch directory is removed afterwards"


def test_the_dossier_holds_the_roster_the_evidence_and_the_table_and_never_a_note(indexed_demo):
    mem = Memory(indexed_demo)
    a = mem.ask(GOLD_FIRST, record_miss=False)
    d = build_dossier(mem.roster, GOLD_FIRST, a.keyword, a.agent.totals)
    lines = d.splitlines()
    for m in mem.roster.members:
        assert f"  {m.key}: {m.role}" in lines
        assert f"    stops: {m.ends}" in lines
    assert f"  {GOLD_FIRST}" in lines
    assert "  zed/knowledge/deploy-checklist.md  score 33.69  matched: deploy, producao" in lines
    assert ("    about: The checklist a change clears before it reaches users, and who signs it off" in lines)
    assert "  steve    7.49       -       -" in lines
    assert "  yaron       -       -       -" in lines  # a dash where an agent has no score
    assert "  zed     33.69       -       -" in lines
    assert lines[-4:] == ["SUBJECT: <two to five words naming the subject>", "REASON: <one sentence>",
                          "COVERAGE: <covered|adjacent|uncovered>", "OWNER: <a name from the roster, or none>"]
    # Never the base itself: no sentence of any note's prose reaches the classifier.
    assert "rollback plan is written before the deploy" not in d
    assert "1.6 grams of protein" not in d
    # About three hundred tokens: a tripwire, at roughly four characters a token.
    assert len(d) < 2400, len(d)


def test_at_most_five_evidence_lines(indexed_demo):
    mem = Memory(indexed_demo)
    q = "deploy protein hooks postgres review recovery food database posting"
    a = mem.ask(q, record_miss=False)
    assert len(a.keyword) > EVIDENCE_LINES
    d = build_dossier(mem.roster, q, a.keyword, a.agent.totals)
    assert sum(1 for ln in d.splitlines() if "  score " in ln) == EVIDENCE_LINES
    assert sum(1 for ln in d.splitlines() if ln.startswith("    about: ")) == EVIDENCE_LINES


def test_one_dossier_is_put_to_the_classifier_once_when_asked_twice(tmp_path, demo):
    # The rerank stage re-asks for its window; a model must not be paid twice for one dossier.
    calls = tmp_path / "calls"
    cmd = script(tmp_path, "counts.py", f"open({str(calls)!r}, 'a').write('x')\n" + FOUR_LINES)
    configure(demo, cmd)
    mem = Memory(demo)
    mem.ask(COVERED, record_miss=False)
    mem.ask(COVERED, record_miss=False)
    assert calls.read_text() == "x"
    mem.ask(GOLD_FIRST, record_miss=False)
    assert calls.read_text() == "xx"


def test_the_reply_parser_takes_decorated_lines_and_refuses_what_it_cannot_use(demo):
    roster = roster_of(Memory(demo).fleet)
    v = parse_reply("Sure!\n**SUBJECT:** deploys\n- **REASON:** it ships.\nCOVERAGE: Covered.\n**OWNER:** Zed\n", roster)
    assert (v.subject, v.reason, v.coverage, v.owner) == ("deploys", "it ships.", "covered", "zed")
    u = parse_reply("SUBJECT: stocks\nREASON: nobody.\nCOVERAGE: uncovered\nOWNER: none\n", roster)
    assert (u.coverage, u.owner) == ("uncovered", None)
    assert parse_reply("SUBJECT: x\nREASON: y\nCOVERAGE: mostly\nOWNER: zed", roster) == (
        "COVERAGE 'mostly' is none of covered, adjacent, uncovered")
    assert parse_reply("SUBJECT: x\nREASON: y\nCOVERAGE: adjacent\nOWNER: none", roster) == (
        "it said adjacent but named no owner")
    bad = parse_reply("SUBJECT: x\x1b[31m\nREASON: y\nCOVERAGE: covered\nOWNER: zed", roster)
    assert bad.subject == "x [31m"  # a terminal escape from a process never reaches a screen


def test_the_example_classifier_is_standalone(tmp_path, demo):
    # Any process will do: it runs with no access to the engine's package.
    mem = Memory(demo)
    a = mem.ask(COVERED, record_miss=False)
    d = build_dossier(mem.roster, COVERED, a.keyword, a.agent.totals)
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([sys.executable, "-I", str(EXAMPLE_CLASSIFIER)], input=d, capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[2:] == ["COVERAGE: covered", "OWNER: yaron"]
