"""kb misses: the log read back against today's index, and it writes nothing."""

from __future__ import annotations

import json
import sys

from conftest import kb_here, run_kb

from engine import Memory
from engine.review.misses import HEADER, MissEntry, load, render_log
from engine.review.missreview import review_misses
from engine.rank.question import MAX_QUESTION_CHARS

ROLL = "how do I roll back"
DECISIONI = "come funziona il registro delle decisioni"
CANARY = "what about the canary rollout percentage"
NOWHERE = "xyzzy qwfp"
DEPLOY = "zed/knowledge/deploy-checklist.md"


def _miss(demo, question, times=1):
    for _ in range(times):  # the log arranged in this process; `kb misses` itself runs for real below
        r = kb_here("route", question, str(demo))
        assert r.returncode == 0, r.stderr


def _snapshot_of(demo):
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in demo.rglob("*") if p.is_file() and ".kb" not in p.parts}


def test_most_asked_first_with_the_near_files_their_keys_and_a_proved_alias_line(demo):
    _miss(demo, DECISIONI)
    _miss(demo, ROLL, times=3)
    _miss(demo, NOWHERE, times=2)
    r = run_kb("misses", str(demo))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.splitlines()[0] == f"misses:   {demo / 'kb-misses.txt'}, 3 questions, asked 6 times"
    assert out.index(f"    3  {ROLL}") < out.index(f"    2  {NOWHERE}") < out.index(f"    1  {DECISIONI}")

    roll = out[out.index(f"    3  {ROLL}"):out.index(f"    2  {NOWHERE}")]
    assert "today: nothing" in roll
    assert "looked like: backup do banco, database backup, parar o scroll, stop the scroll" in roll
    assert f"text #1  {DEPLOY}" in roll
    assert "keys (line 3): deploy, producao, production, rollback, release," in roll
    assert "propose: roll back = rollback" in roll
    assert f"(spelled like a key of {DEPLOY}; with it: hit on {DEPLOY}, 11.23)" in roll

    dec = out[out.index(f"    1  {DECISIONI}"):]
    assert "nearly caught by the spelling of a key in:" in dec and "zed/index.md" in dec
    assert "propose: decisioni = technical decision" in dec and "with it: hit on zed/index.md" in dec

    nowhere = out[out.index(f"    2  {NOWHERE}"):out.index(f"    1  {DECISIONI}")]
    assert "looked like: (nothing)" in nowhere and "propose:" not in nowhere
    assert "a note is missing, not an alias" in nowhere


def test_the_proposed_line_does_what_it_says_when_written(demo):
    _miss(demo, ROLL)
    report = review_misses(Memory(demo))
    (rev,) = report.reviews
    p = rev.proposal
    assert (p.line, p.basis, p.verdict_with_it, p.top_with_it) == ("roll back = rollback", "spelling", "hit", DEPLOY)
    (demo / "kb-aliases.txt").write_text(p.line + "\n")
    a = json.loads(kb_here("route", ROLL, str(demo), "--json").stdout)
    assert (a["verdict"], a["keyword_top"]) == (p.verdict_with_it, p.top_with_it)
    assert round(a["confidence"]["keyword_score"], 2) == round(p.score_with_it, 2)
    # and kb misses now says the entry has done its job
    again = kb_here("misses", str(demo)).stdout
    assert f"today: hit on {DEPLOY}" in again and "can be deleted" in again and "propose:" not in again


def test_it_writes_nothing(demo):
    _miss(demo, ROLL, times=2)
    _miss(demo, CANARY)
    Memory(demo).refresh()
    before = _snapshot_of(demo)
    for args in ((), ("--json",), ("--near", "0")):
        assert kb_here("misses", str(demo), *args).returncode == 0
    assert _snapshot_of(demo) == before
    assert not (demo / "kb-aliases.txt").exists()
    assert [(e.question, e.count) for e in load(demo / "kb-misses.txt")[0]] == [(ROLL, 2), (CANARY, 1)]


def test_json_carries_every_entry_with_its_near_files_and_proposal(demo):
    _miss(demo, CANARY)
    _miss(demo, ROLL, times=2)
    j = json.loads(kb_here("misses", str(demo), "--json", "--near", "2").stdout)
    assert (j["path"], j["exists"], j["questions"], j["misses"], j["problems"]) == (
        str(demo / "kb-misses.txt"), True, 2, 3, [],
    )
    assert "problems_not_shown" not in j
    first, second = j["entries"]
    assert (first["question"], first["count"]) == (ROLL, 2) and second["question"] == CANARY
    assert first["now"] == {"verdict": "nothing", "keyword_top": None}
    assert len(first["near"]) == 2 and first["near"][0]["id"] == DEPLOY and first["near"][0]["text_rank"] == 1
    assert "rollback" in first["near"][0]["keys"] and first["near"][0]["label_line"] == 3
    assert first["proposal"]["line"] == "roll back = rollback"
    assert first["proposal"]["with_it"]["verdict"] == "hit"
    # the text scorer found the canary question in the checklist's prose; the label says `canary release`
    assert second["near"][0]["id"] == DEPLOY
    assert second["proposal"]["line"] == "canary = canary release"
    assert second["proposal"]["with_it"] == {"verdict": "hit", "keyword_top": DEPLOY,
                                             "keyword_score": second["proposal"]["with_it"]["keyword_score"]}


def test_an_unlabelled_note_the_text_found_is_named_as_the_fix(demo):
    (demo / "zed" / "knowledge" / "on-call.md").write_text(
        "# Pager duty\n\nWho carries the pager overnight, and how escalation works.\n"
    )
    _miss(demo, "who carries the pager overnight")
    (rev,) = review_misses(Memory(demo)).reviews
    near = {f.id: f for f in rev.near}
    assert "zed/knowledge/on-call.md" in near and not near["zed/knowledge/on-call.md"].is_entry
    (fix,) = [a for a in rev.advice if "zed/knowledge/on-call.md" in a]
    assert "no `Search for:` line" in fix
    # The text search did reach it (it is named above as near): what it cannot be is a HIT.
    assert "no question can reach it" not in fix and "HIT" in fix


def test_no_log_yet_is_not_an_error(demo):
    r = kb_here("misses", str(demo))
    assert r.returncode == 0
    assert r.stdout == f"misses:   {demo / 'kb-misses.txt'}: nothing has been missed yet\n"
    j = json.loads(kb_here("misses", str(demo), "--json").stdout)
    assert j["exists"] is False and j["entries"] == []


def test_it_reads_where_kb_misses_path_points(demo, tmp_path):
    log = tmp_path / "elsewhere.txt"
    env = {"KB_MISSES_PATH": str(log)}
    assert kb_here("route", ROLL, str(demo), env=env).returncode == 0
    j = json.loads(kb_here("misses", str(demo), "--json", env=env).stdout)
    assert j["path"] == str(log) and j["entries"][0]["question"] == ROLL
    assert json.loads(kb_here("misses", str(demo), "--json").stdout)["exists"] is False


def test_a_damaged_line_is_one_line_on_stderr_and_the_rest_is_read(demo):
    (demo / "kb-misses.txt").write_text(HEADER + f"2\t2026-09-01\t2026-09-02\t{ROLL}\nnonsense here\n")
    r = run_kb("misses", str(demo))
    assert r.returncode == 0
    assert r.stderr == (
        f"kb: {demo / 'kb-misses.txt'}:5: damaged line (a miss is: count, first seen, last seen, question): nonsense here\n"
    )
    assert f"    2  {ROLL}" in r.stdout


def test_an_unreadable_log_is_one_line(demo):
    (demo / "kb-misses.txt").mkdir()
    r = kb_here("misses", str(demo))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"kb: {demo / 'kb-misses.txt'}: cannot read (") and r.stderr.count("\n") == 1


def test_a_terminal_escape_in_a_hand_edited_log_is_made_harmless(demo):
    (demo / "kb-misses.txt").write_text("1\t2026-09-01\t2026-09-01\troll \x1b[2J back\n")
    out = kb_here("misses", str(demo)).stdout
    assert "\x1b" not in out and "roll \\x1b[2J back" in out


def test_kb_misses_never_calls_the_classifier(demo, tmp_path):
    # Which file nearly caught a question is retrieval; a model call per entry would cost seconds.
    marker = tmp_path / "classifier-ran"
    script = tmp_path / "classifier.py"
    script.write_text(f"import pathlib, sys\nsys.stdin.read()\npathlib.Path({str(marker)!r}).touch()\n")
    with open(demo / "fleet.txt", "a") as f:
        f.write(f"classifier = {sys.executable} {script}\n")
    from _who import allow_classifier

    allow_classifier(demo)
    _miss(demo, ROLL)
    assert marker.exists()  # the premise: the classifier is configured and route does call it
    marker.unlink()
    r = kb_here("misses", str(demo))
    assert r.returncode == 0 and "propose: roll back = rollback" in r.stdout
    assert not marker.exists()


def test_near_limits_what_is_shown_not_what_the_proposal_looks_at(demo):
    _miss(demo, ROLL)
    out = kb_here("misses", str(demo), "--near", "0").stdout
    assert "nearly caught" not in out and "keys (line" not in out
    assert "propose: roll back = rollback" in out and "a note is missing" not in out
    assert "which is not the same as meaning it" in out  # a proposal always carries its limit
    assert kb_here("misses", str(demo), "--near", "-1").stderr == "kb: --near -1: give a count of files, 0 or more\n"


def test_a_question_longer_than_a_route_reads_is_reviewed_as_the_route_read_it(demo):
    # A hand-edited (or hostile) log line of any length: the review re-asks, proposes and
    # proves from the part a route reads (engine/rank/question.py), never from words past it.
    head = "how do i rollbak"
    (demo / "kb-misses.txt").write_text(render_log([
        MissEntry(1, "2026-11-02", "2026-11-02", head + " " + "zzqx " * 900 + "how much protein per meal"),
        MissEntry(1, "2026-11-01", "2026-11-01", head)]), encoding="utf-8")
    long, short = review_misses(Memory(demo)).reviews
    assert len(long.entry.question) > MAX_QUESTION_CHARS  # shown as it was logged
    assert long.proposal.line == short.proposal.line == "rollbak = rollback"
    assert long.proposal.top_with_it == short.proposal.top_with_it == DEPLOY


def test_limit_reviews_the_most_asked_and_counts_the_rest(demo):
    # A log appended to for years (or planted) is not reviewed whole unless asked: the most
    # asked come first, the rest are counted and stay in the log.
    (demo / "kb-misses.txt").write_text(render_log([
        MissEntry(3, "2026-11-01", "2026-11-03", ROLL), MissEntry(2, "2026-11-01", "2026-11-02", CANARY),
        MissEntry(1, "2026-11-01", "2026-11-01", NOWHERE)]), encoding="utf-8")
    r = kb_here("misses", str(demo), "--limit", "2", "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert [e["question"] for e in got["entries"]] == [ROLL, CANARY] and got["not_reviewed"] == 1
    text = kb_here("misses", str(demo), "--limit", "2").stdout
    assert "1 less asked entry not reviewed (--limit 2; --limit 0 reviews every one)." in text
    assert NOWHERE not in text
    every = json.loads(kb_here("misses", str(demo), "--limit", "0", "--json").stdout)
    assert every["questions"] == 3 and "not_reviewed" not in every
    bad = run_kb("misses", str(demo), "--limit", "-1")
    assert bad.returncode != 0 and "--limit -1" in bad.stderr


def test_a_one_shot_review_is_frozen_before_the_collector_comes_back(demo):
    """What `kb misses` built while the collector was paused is moved out of its sight before
    it is switched back on: otherwise the first allocation after the pause starts a pass over
    every row of the review (0.15-0.2 s of a fresh 10,000-entry run, none of it garbage)."""
    import subprocess

    (demo / "kb-misses.txt").write_text(
        render_log([MissEntry(1, "2026-11-01", "2026-11-20", f"{NOWHERE} n{i}", "") for i in range(300)]),
        encoding="utf-8")
    probe = (
        "import gc, io, sys\n"
        "from engine.cli import main\n"
        "out, sys.stdout = sys.stdout, io.StringIO()\n"
        f"rc = main(['misses', {str(demo)!r}, '--json'])\n"
        "sys.stdout = out\n"
        "print(rc, gc.isenabled(), gc.get_freeze_count())\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rc, enabled, frozen = r.stdout.split()
    assert rc == "0" and enabled == "True"  # the collector is back on for whatever runs next
    # 300 reviews of a dozen containers each, and the index: all of it frozen, none left to walk.
    assert int(frozen) > 300 * 12


def test_the_json_line_written_part_by_part_is_the_whole_report_encoded(demo):
    """`kb misses --json` encodes each near file's part once (engine/review/missjson.py) and splices
    the parts into the report encoded with empty near lists: the line must be the one
    json_line(report.to_json()) writes, whatever the questions hold (the key's own text,
    quotes, controls, bidi, a lone surrogate, non-ASCII) and for every near count."""
    from engine.review.missjson import report_json_line
    from engine.render import json_line

    tricky = [ROLL, CANARY, NOWHERE, DECISIONI, 'roll "near": [] back', 'x"near": []', "near",
              "roll \x85back \u202e deploy", "deploy \udcff rollback", "deploy checklist ção", "canary \\ \"near\""]
    (demo / "kb-misses.txt").write_text(
        render_log([MissEntry(len(tricky) - i, "2026-11-01", "2026-11-20", q, 'a "near": [] b, c')
                    for i, q in enumerate(tricky)]), encoding="utf-8", errors="surrogateescape")
    mem = Memory(demo)
    for near in (0, 1, 3, 5):
        report = review_misses(mem, near=near)
        assert len(report.reviews) == len(tricky) and any(r.near for r in report.reviews) == (near > 0)
        assert report_json_line(report) == json_line(report.to_json())
    # The command writes that line.
    whole = json_line(review_misses(mem).to_json())
    assert kb_here("misses", str(demo), "--json").stdout == whole + "\n"


def test_json_caps_the_damaged_lines_as_stderr_does(demo):
    # A log torn tens of thousands of times listed every damaged line in the JSON.
    torn = "".join(f"torn {i}\n" for i in range(25))
    (demo / "kb-misses.txt").write_text(HEADER + f"2\t2026-09-01\t2026-09-02\t{ROLL}\n" + torn)
    r = kb_here("misses", str(demo), "--json")
    j = json.loads(r.stdout)
    assert len(j["problems"]) == 10 and j["problems_not_shown"] == 15
    assert j["problems"][0] == f"{demo / 'kb-misses.txt'}:5: damaged line (a miss is: count, first seen, last seen, question): torn 0"
    assert r.stderr.splitlines()[-1] == f"kb: and 15 more damaged lines in {demo / 'kb-misses.txt'}"
    assert j["questions"] == 1
