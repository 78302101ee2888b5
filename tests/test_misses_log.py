"""The recall-loss log: what counts as a loss, one entry per question, no lost counts,
KB_MISSES_PATH, a log that cannot be written, and a log git never sees.

Everything runs on a private copy of the demo fleet, through real SQLite, real files and
real processes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import REPO, copy_demo, kb_here

from engine import Memory
from engine.review.misses import (HEADER, REWRITE_BELOW_BYTES, MissEntry, load, misses_path, parse_lines, record,
                           render_log)

MISSED = "how do I roll back"


def _entries(log: Path):
    entries, problems = load(log)
    assert problems == []
    return {e.question: e for e in entries}


# -- what counts as a loss: decided once, in Memory.recall_loss -----------------------------


def test_a_guess_is_served_and_is_not_a_loss(demo):
    mem = Memory(demo)
    a = mem.ask("who signs it off")  # a purpose-line word only: above zero, under the floor
    assert a.verdict == "guess" and a.gate.served
    assert a.miss is None and mem.recall_loss(a) is None
    assert not (demo / "kb-misses.txt").exists()


def test_a_question_the_text_scorer_answered_but_the_gate_refused_is_a_loss(demo):
    mem = Memory(demo)
    a = mem.ask("what about the canary rollout percentage")
    assert a.verdict == "nothing" and not a.gate.served
    assert a.gate.ranked_by_text_only and a.text  # the prose had it; no label vouched for it
    assert a.miss is not None and a.miss.recorded
    assert _entries(demo / "kb-misses.txt")["what about the canary rollout percentage"].count == 1


def test_a_hit_is_not_a_loss(demo):
    mem = Memory(demo)
    a = mem.ask("quem decide se um deploy pode ir pra producao")
    assert a.verdict == "hit" and a.miss is None
    assert not (demo / "kb-misses.txt").exists()


def test_record_miss_false_decides_nothing_and_writes_nothing(demo):
    a = Memory(demo).ask(MISSED, record_miss=False)
    assert a.verdict == "nothing" and a.miss is None and a.suggestions  # still offered
    assert not (demo / "kb-misses.txt").exists()


def test_recall_loss_hands_back_the_vocabulary_offered(demo):
    mem = Memory(demo)
    a = mem.ask(MISSED, record_miss=False)
    miss = mem.recall_loss(a)
    assert miss.looked_like == ("backup do banco", "database backup", "parar o scroll", "stop the scroll")
    assert miss.path == str(demo / "kb-misses.txt") and miss.recorded and miss.error is None
    assert miss.question == MISSED and len(miss.date) == 10


# -- the log's shape ---------------------------------------------------------------------


def test_the_same_missed_question_three_times_is_one_entry_with_count_3(demo):
    for _ in range(3):
        assert kb_here("route", MISSED, str(demo)).returncode == 0
    text = (demo / "kb-misses.txt").read_text()
    assert text.count(MISSED) == 1
    e = _entries(demo / "kb-misses.txt")[MISSED]
    assert e.count == 3 and e.first_seen == e.last_seen
    assert e.looked_like == "backup do banco, database backup, parar o scroll, stop the scroll"
    lines = text.splitlines()
    i = lines.index(f"3\t{e.first_seen}\t{e.last_seen}\t{MISSED}")
    assert lines[i + 1] == "    looked like: backup do banco, database backup, parar o scroll, stop the scroll"


def test_case_and_spacing_do_not_make_a_new_question_and_the_first_wording_is_kept(tmp_path):
    log = tmp_path / "kb-misses.txt"
    record(log, "How do I  roll back", ["x"], "2026-09-01")
    record(log, "how do i roll back", ["y"], "2026-09-02")
    (e,) = load(log)[0]
    assert (e.count, e.first_seen, e.last_seen, e.question, e.looked_like) == (
        2, "2026-09-01", "2026-09-02", "How do I  roll back", "y",
    )


def test_the_log_is_written_most_asked_first(tmp_path):
    log = tmp_path / "kb-misses.txt"
    record(log, "asked once", [], "2026-09-01")
    for _ in range(2):
        record(log, "asked twice", [], "2026-09-01")
    body = log.read_text()
    assert body.startswith(HEADER)
    assert body.index("asked twice") < body.index("asked once")
    assert [e.question for e in load(log)[0]] == ["asked twice", "asked once"]


def test_a_question_is_one_line_whatever_was_typed(tmp_path):
    log = tmp_path / "kb-misses.txt"
    record(log, "two\nlines\tand a tab \x1b[31m", [], "2026-09-01")
    (e,) = load(log)[0]
    assert e.question == "two lines and a tab  [31m"  # each control run is one space
    assert "\x1b" not in log.read_text()


@pytest.mark.parametrize("inside", ["\u2028", "\u2029"])
def test_a_question_holding_a_unicode_line_separator_comes_back_as_asked(tmp_path, inside):
    # Text pasted from a web page carries U+2028: a character, not a line end. The log wrote it
    # as a space and str.splitlines() would have cut the line there; only \n and \r\n end one.
    log = tmp_path / "kb-misses.txt"
    asked = f"how do I{inside}roll back"
    for day in ("2026-09-01", "2026-09-02"):
        record(log, asked, ["roll, back"], day)
    entries, problems = load(log)
    assert problems == []
    assert [(e.question, e.count, e.looked_like) for e in entries] == [(asked, 2, "roll, back")]


def test_a_hand_edited_line_holding_a_separator_is_one_line_at_its_own_number(tmp_path):
    log = tmp_path / "kb-misses.txt"
    log.write_text(HEADER + "3\t2026-09-01\t2026-09-02\tfirst\x85half\u2028second half\r\n"
                   "    looked like: a\u2029b\r\nnot a miss\n", encoding="utf-8")
    entries, problems = load(log)
    assert [(e.question, e.count, e.looked_like) for e in entries] == [("first\x85half\u2028second half", 3, "a\u2029b")]
    assert problems == [f"{log}:{HEADER.count(chr(10)) + 3}: damaged line (a miss is: count, first seen, last seen, question): not a miss"]


def test_a_line_the_reader_cannot_parse_is_kept_not_erased(tmp_path):
    log = tmp_path / "kb-misses.txt"
    log.write_text(HEADER + "2\t2026-09-01\t2026-09-02\tkept question\n    looked like: a, b\nhand-written note\n")
    entries, problems = load(log)
    assert [e.question for e in entries] == ["kept question"]
    assert problems == [f"{log}:6: damaged line (a miss is: count, first seen, last seen, question): hand-written note"]
    record(log, "new question", [], "2026-09-03")
    after = log.read_text()
    assert "hand-written note" in after and "2\t2026-09-01\t2026-09-02\tkept question" in after
    assert {e.question: e.looked_like for e in load(log)[0]} == {"kept question": "a, b", "new question": ""}
    record(log, "new question", [], "2026-09-03")
    assert log.read_text().count("hand-written note") == 1  # kept once, not once per write


def test_a_log_whose_tabs_an_editor_turned_into_spaces_still_counts(tmp_path):
    log = tmp_path / "kb-misses.txt"
    log.write_text("4    2026-09-01 2026-09-02 how do I roll back\n     looked like: rollback\n")
    record(log, "how do I roll back", [], "2026-09-03")
    (e,) = load(log)[0]
    assert (e.count, e.first_seen, e.last_seen) == (5, "2026-09-01", "2026-09-03")


def test_an_orphan_looked_like_line_is_not_given_to_an_entry(tmp_path):
    entries, stray = parse_lines("    looked like: nobody's\n1\t2026-09-01\t2026-09-01\tq\n")
    assert entries[0].looked_like == "" and stray == [(1, "    looked like: nobody's")]
    again, stray2 = parse_lines(render_log(entries, [s for _, s in stray]))
    assert again[0].looked_like == "" and [s for _, s in stray2] == ["    looked like: nobody's"]


def test_the_log_is_private_to_its_owner(tmp_path):
    log = tmp_path / "kb-misses.txt"
    record(log, "a health question", [], "2026-09-01")
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


# -- two processes at once -------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {repo!r})
    from engine import Memory
    demo, go, me, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    mem = Memory(demo)
    while not go.exists():
        time.sleep(0.001)
    for _ in range(rounds):
        assert mem.ask("shared miss zqxj").miss.recorded
        assert mem.ask("miss of " + me + " zqxj").miss.recorded
""")


@pytest.mark.parametrize("size", ["small", "large"])
def test_two_processes_recording_misses_at_once_lose_no_count(demo, tmp_path, size):
    Memory(demo).refresh()  # index once, so both writers start on the miss path itself
    if size == "large":  # appended to, never rewritten: the reader adds the entries up
        _large_log(demo / "kb-misses.txt")
    go = tmp_path / "go"
    rounds = 40
    script = WRITER.format(repo=str(REPO))
    env = {k: v for k, v in os.environ.items() if k != "KB_MISSES_PATH"}
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(demo), str(go), name, str(rounds)], env=env,
                         stderr=subprocess.PIPE, text=True)
        for name in ("a", "b")
    ]
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    e = _entries(demo / "kb-misses.txt")
    assert e["shared miss zqxj"].count == 2 * rounds
    assert e["miss of a zqxj"].count == rounds and e["miss of b zqxj"].count == rounds
    assert len(e) == (3 if size == "small" else 3 + FILLER)
    assert not list(demo.glob(".kb-misses.txt.*.tmp"))  # every temporary file was renamed


# -- a large log is added to, not read ------------------------------------------------------

FILLER = 3_000  # entries: well over REWRITE_BELOW_BYTES


def _large_log(log: Path, *, extra: tuple[MissEntry, ...] = ()) -> bytes:
    entries = [MissEntry(1 + i % 7, "2026-01-01", "2026-01-02", f"filler question number {i} qqzx") for i in range(FILLER)]
    raw = render_log([*entries, *extra]).encode("utf-8")
    assert len(raw) > 2 * REWRITE_BELOW_BYTES
    log.write_bytes(raw)
    return raw


def _bytes_read() -> int:
    """What this process has read through read(2) and its kin so far (Linux's own count)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="counts bytes read through /proc/self/io (Linux)")
def test_a_miss_on_a_large_log_is_appended_without_reading_the_log(demo):
    log = demo / "kb-misses.txt"
    before = _large_log(log, extra=(MissEntry(4, "2026-01-01", "2026-02-01", MISSED, "rollback"),))
    mem = Memory(demo)
    mem.ask("quem decide se um deploy pode ir pra producao")  # the index opened and read: only the miss is left
    read_at = _bytes_read()
    a = mem.ask(MISSED.upper())
    read = _bytes_read() - read_at
    assert a.miss is not None and a.miss.recorded
    assert read < len(before) // 4, f"recording one miss read {read:,} bytes of a {len(before):,}-byte log"
    after = log.read_bytes()
    assert after.startswith(before)  # nothing there was rewritten
    assert after[len(before):].decode().startswith(f"1\t{a.miss.date}\t{a.miss.date}\t{MISSED.upper()}\n")
    e = _entries(log)[MISSED]  # the reader adds the appended entry to the question's first
    assert (e.count, e.first_seen, e.last_seen) == (5, "2026-01-01", a.miss.date)
    assert e.looked_like == ", ".join(a.miss.looked_like)
    assert len(_entries(log)) == FILLER + 1


def test_an_appended_miss_starts_its_own_line_after_a_last_line_without_one(demo, tmp_path):
    log = tmp_path / "kb-misses.txt"
    raw = _large_log(log).rstrip(b"\n")  # an editor saved it without the final newline
    log.write_bytes(raw)
    record(log, MISSED, ["rollback"], "2026-03-03")
    entries, problems = load(log)
    assert problems == []
    assert len(entries) == FILLER + 1 and entries[-1].looked_like == ""  # the last filler, intact
    assert {e.question: e for e in entries}[MISSED].looked_like == "rollback"


def test_the_reader_adds_up_the_entries_of_one_question(tmp_path):
    text = (HEADER
            + "3\t2026-01-05\t2026-01-09\tHow do I roll back\n    looked like: rollback\n"
            + "1\t2026-01-02\t2026-01-02\tsomething else\n    looked like: (nothing)\n"
            + "1\t2026-01-03\t2026-02-01\thow do  i roll back\n    looked like: rollback, revert\n")
    entries, stray = parse_lines(text)
    assert stray == []
    assert [(e.question, e.count, e.first_seen, e.last_seen, e.looked_like) for e in entries] == [
        ("How do I roll back", 4, "2026-01-03", "2026-02-01", "rollback, revert"),  # first wording kept
        ("something else", 1, "2026-01-02", "2026-01-02", ""),
    ]
    log = tmp_path / "kb-misses.txt"
    log.write_text(text, encoding="utf-8")
    record(log, "something else", [], "2026-03-01")  # a small log: read, merged, rewritten
    assert log.read_text(encoding="utf-8").count("roll back") == 1


# -- where the log goes -------------------------------------------------------------------


def test_kb_misses_path_moves_the_log(demo, tmp_path):
    elsewhere = tmp_path / "writable" / "my-misses.txt"
    r = kb_here("route", MISSED, str(demo), "--json", env={"KB_MISSES_PATH": str(elsewhere)})
    miss = json.loads(r.stdout)["miss"]
    assert miss["path"] == str(elsewhere) and miss["recorded"] is True
    assert _entries(elsewhere)[MISSED].count == 1
    assert not (demo / "kb-misses.txt").exists()


def test_a_blank_kb_misses_path_chose_no_path(demo, monkeypatch):
    monkeypatch.setenv("KB_MISSES_PATH", "   ")
    assert misses_path(demo) == demo / "kb-misses.txt"


def test_a_base_inside_a_fleet_logs_beside_the_fleet_manifest(demo):
    a = Memory(demo / "zed").ask(MISSED)
    assert a.miss.path == str(demo / "kb-misses.txt") and a.miss.recorded


@pytest.mark.parametrize("blocker", ["log is a directory", "parent is a file"])
def test_a_log_that_cannot_be_written_still_answers_and_says_why(demo, tmp_path, blocker):
    if blocker == "log is a directory":
        log = tmp_path / "kb-misses.txt"
        log.mkdir()
    else:
        (tmp_path / "a-file").write_text("not a folder")
        log = tmp_path / "a-file" / "kb-misses.txt"
    r = kb_here("route", MISSED, str(demo), "--json", env={"KB_MISSES_PATH": str(log)})
    assert r.returncode == 0, r.stderr
    a = json.loads(r.stdout)
    assert a["verdict"] == "nothing" and a["suggestions"]  # the answer is still served
    assert a["miss"]["recorded"] is False
    assert a["miss"]["error"].startswith(str(log) + ": ")
    assert a["miss"]["looked_like"] == a["suggestions"] and a["miss"]["question"] == MISSED
    text = kb_here("route", MISSED, str(demo), env={"KB_MISSES_PATH": str(log)}).stdout
    assert f"the miss could not be logged: {log}: " in text


# -- git never sees it ----------------------------------------------------------------------


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)


def _repo_with_demo(tmp_path: Path, keep_gitignore: bool) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    assert _git(repo, "init", "-q").returncode == 0
    demo = copy_demo(repo / "fleet")
    if not keep_gitignore:
        (demo / ".gitignore").unlink()
    return repo, demo


def test_the_log_is_git_ignored_where_it_lands(tmp_path):
    repo, demo = _repo_with_demo(tmp_path, keep_gitignore=False)
    assert kb_here("route", MISSED, str(demo)).returncode == 0
    assert (demo / "kb-misses.txt").exists()
    assert _git(repo, "check-ignore", "-q", "fleet/kb-misses.txt").returncode == 0
    assert _git(repo, "check-ignore", "-q", "fleet/.kb-misses.txt.lock").returncode == 0
    status = _git(repo, "status", "--porcelain", "--untracked-files=all").stdout
    assert "kb-misses" not in status
    # Through git's own local exclude file: no .gitignore written, no tracked file changed.
    assert not (demo / ".gitignore").exists()
    exclude = repo / ".git" / "info" / "exclude"
    assert "/fleet/kb-misses.txt\n" in exclude.read_text()
    assert stat.S_IMODE(exclude.stat().st_mode) == 0o644  # an ordinary file, not mkstemp's 0600
    assert _git(repo, "check-ignore", "-q", "fleet/zed/.kb/index.db").returncode == 0
    assert ".kb" not in status


def test_each_ignore_rule_is_written_once_however_many_misses(tmp_path):
    # The rules kb writes are anchored (`/fleet/kb-misses.txt`); read back as "not in the
    # log's own folder" they never counted, so every miss appended the same two lines again.
    repo, demo = _repo_with_demo(tmp_path, keep_gitignore=False)
    for question in (MISSED, "how do I roll forward", MISSED):
        assert kb_here("route", question, str(demo)).returncode == 0
    lines = (repo / ".git" / "info" / "exclude").read_text().splitlines()
    written = [line for line in lines if line and not line.startswith("#")]
    assert sorted(written) == sorted(["/fleet/kb-misses.txt", "/fleet/.kb-misses.txt.lock", ".kb/"])


def test_an_index_built_in_a_git_work_tree_is_ignored_before_any_miss(tmp_path):
    # A notes folder kept in git: `kb index` alone made `.kb/` (megabytes of index) show in
    # `git status`, ready to be committed, until the first miss happened to list it.
    repo, demo = _repo_with_demo(tmp_path, keep_gitignore=False)
    assert kb_here("index", str(demo)).returncode == 0
    assert (demo / "zed" / ".kb" / "index.db").exists()
    assert _git(repo, "check-ignore", "-q", "fleet/zed/.kb/index.db").returncode == 0
    assert ".kb" not in _git(repo, "status", "--porcelain", "--untracked-files=all").stdout


def test_a_log_moved_by_kb_misses_path_is_ignored_where_it_lands_too(tmp_path):
    repo, demo = _repo_with_demo(tmp_path, keep_gitignore=True)
    log = repo / "logs" / "questions.txt"
    assert kb_here("route", MISSED, str(demo), env={"KB_MISSES_PATH": str(log)}).returncode == 0
    assert log.exists()
    assert _git(repo, "check-ignore", "-q", "logs/questions.txt").returncode == 0
    assert "questions.txt" not in _git(repo, "status", "--porcelain", "--untracked-files=all").stdout


def test_an_ignore_rule_already_in_force_is_not_written_again(tmp_path):
    repo, demo = _repo_with_demo(tmp_path, keep_gitignore=False)
    (repo / ".gitignore").write_text("kb-misses*.txt\n.kb-misses.txt.lock\n")
    assert kb_here("route", MISSED, str(demo)).returncode == 0
    assert (demo / "kb-misses.txt").exists()
    assert not (demo / ".gitignore").exists()
    assert _git(repo, "check-ignore", "-q", "fleet/kb-misses.txt").returncode == 0


def test_outside_a_git_work_tree_no_gitignore_is_written(demo):
    (demo / ".gitignore").unlink()
    Memory(demo).ask(MISSED)
    assert (demo / "kb-misses.txt").exists() and not (demo / ".gitignore").exists()
