"""A damaged miss log: a crash in the middle of an append, and a log of many unreadable lines.

An appended miss is one write, not a rename (engine/notes/atomic.append_once), so a crash can
leave part of an entry at the end of the log without its newline. The next miss must start
a line of its own (never glued onto the torn one), and the torn line is one damaged line.
Real files, the real writer and reader, and `kb misses` in a fresh process.
"""

from __future__ import annotations

from pathlib import Path

from conftest import run_kb

from engine.review.misses import HEADER, REWRITE_BELOW_BYTES, MissEntry, entry_lines, load, record, render_log

FILLER = 3_000  # entries: a log well over REWRITE_BELOW_BYTES, so a miss is appended
TORN = MissEntry(1, "2026-03-02", "2026-03-02", "how long does a canary run", "canary, rollout")
NEXT = "how do I roll back"


def _large_log(log: Path) -> bytes:
    entries = [MissEntry(1 + i % 7, "2026-01-01", "2026-01-02", f"filler question number {i} qqzx") for i in range(FILLER)]
    raw = render_log(entries).encode("utf-8")
    assert len(raw) > 2 * REWRITE_BELOW_BYTES
    return raw


def test_a_miss_after_a_torn_append_starts_its_own_line_and_the_torn_line_is_one_damaged_line(tmp_path):
    whole = entry_lines(TORN).encode("utf-8")
    base = _large_log(tmp_path / "x")
    for cut in range(1, len(whole)):  # every place a crash can stop the append's one write
        log = tmp_path / f"kb-misses-{cut}.txt"
        torn = whole[:cut]
        log.write_bytes(base + torn)
        record(log, NEXT, ["rollback", "revert"], "2026-03-03")
        entries, problems = load(log)
        by_question = {e.question: e for e in entries}
        # The new miss is whole, whatever the torn bytes were: not glued onto them.
        assert (by_question[NEXT].count, by_question[NEXT].looked_like) == (1, "rollback, revert"), cut
        assert len(entries) >= FILLER + 1, cut
        # What the crash left is at most one unreadable line, reported once, by its number.
        lines = (base + torn).decode("utf-8").split("\n")
        torn_line = lines[-1]
        if problems:
            assert len(problems) == 1, (cut, problems)
            assert f":{len(lines)}:" in problems[0] and torn_line.strip()[:20] in problems[0], (cut, problems)
        assert log.read_bytes().startswith(base + torn)  # nothing that was there is rewritten


def test_kb_misses_prints_a_few_damaged_lines_and_counts_the_rest(demo):
    log = demo / "kb-misses.txt"
    damaged = 10_000
    body = HEADER + "".join(f"garbage line {i} with no count\n" for i in range(damaged))
    log.write_text(body + entry_lines(MissEntry(2, "2026-01-01", "2026-01-02", NEXT, "rollback")), encoding="utf-8")
    r = run_kb("misses", str(demo))
    assert r.returncode == 0, r.stderr
    err = r.stderr.splitlines()
    assert len(err) <= 11, err[:15]
    shown = [line for line in err if "garbage line" in line]
    assert shown and shown[0].startswith(f"kb: {log}:4: ")  # the first damaged line, by its number
    assert err[-1] == f"kb: and {damaged - len(shown):,} more damaged lines in {log}"
    assert NEXT in r.stdout  # the readable entry is still the worklist
