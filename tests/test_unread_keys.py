"""Keys kb label wrote and nobody has read (issue 26): the mark, and the HIT that needs agreement.

A real index on disk, real `kb` processes: a note whose label a machine wrote carries the mark
under its `Search for:` line (engine/notes/proposal.py); a HIT resting on those keys alone
stands only where the text leg puts the same note first (engine/rank/vouch.py).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conftest import DEMO, run_kb
from engine.notes.note import parse_note
from engine.notes.proposal import mark_line, marked_keys, unread_of
from test_route_first_row import NOTES

Q_ELSEWHERE = "how do I extract a tar.gz archive"  # keyword top tar.md, text leg's first atool.md
Q_AGREED = "create a tar archive from files"  # both put tar.md first
TAR_KEYS = ["tar", "tar archive", "extract a tar file"]


def _fleet(tmp_path: Path, *, marked: list[str] | None) -> Path:
    base = tmp_path / "pages"
    base.mkdir(parents=True)
    for name, text in NOTES.items():
        if name == "tar.md" and marked is not None:
            text = text.replace("Search for: tar, tar archive, extract a tar file\n",
                                "Search for: tar, tar archive, extract a tar file\n" + mark_line(marked) + "\n")
        (base / name).write_text(text, encoding="utf-8")
    return base


def _route(q: str, base: Path) -> dict:
    out = run_kb("route", q, str(base), "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_mark_names_keys_and_anything_else_is_no_mark():
    line = mark_line(["tar", "tar archive"])
    assert marked_keys(line) == ("tar", "tar archive")
    assert marked_keys("  " + line.upper() + "  ") == ("TAR", "TAR ARCHIVE")  # case and spacing aside
    assert marked_keys("<!-- a comment of the author's -->") is None
    assert marked_keys("kb label proposed, not yet reviewed: tar") is None  # prose, not the comment
    # A key the mark names that the label no longer holds is nothing: a person deleted it.
    assert unread_of(("tar", "Tar  Archive"), ("tar archive", "gone")) == ("Tar  Archive",)


def test_a_hostile_mark_of_spaces_costs_linear_time():
    # A cloned repository's note: `\s*(.*?)\s*-->` backtracked cubically on a run of spaces
    # (2,000 cost an index build 9 s); every note's line under its label is read at build.
    start = time.perf_counter()
    for tail in (" " * 20_000, " " * 20_000 + "x", ", " * 20_000, "\t" * 20_000 + "-->"):
        line = "<!-- kb label proposed, not yet reviewed: " + tail
        assert marked_keys(line) in (None, ())
        parse_note("t.md", "# t\n\nSearch for: t\n" + line + "\n")
    assert time.perf_counter() - start < 1.0
    assert marked_keys("<!--kb label proposed, not yet reviewed:a, b-->") == ("a", "b")
    assert marked_keys("<!-->") is None and marked_keys("<!-- kb label proposed, not yet reviewed: -->") == ()


def test_the_mark_is_read_under_the_label_and_never_indexed_as_text(tmp_path):
    text = NOTES["tar.md"].replace("extract a tar file\n", "extract a tar file\n" + mark_line(["tar archive"]) + "\n")
    note = parse_note("tar.md", text)
    assert note.keys == ("tar", "tar archive", "extract a tar file") and note.unread == ("tar archive",)
    assert "kb label proposed" not in "".join(sec.text for sec in note.sections)
    # Elsewhere than directly under the label it is an html comment of the author's, nothing more.
    loose = NOTES["tar.md"] + "\n" + mark_line(["tar"]) + "\n"
    assert parse_note("tar.md", loose).unread == ()
    # The text index never finds the mark's words: "reviewed" is in no note's prose.
    base = _fleet(tmp_path, marked=TAR_KEYS)
    out = _route("not yet reviewed proposed", base)
    assert all(r["path"] != "tar.md" for r in out["results"]), out["results"]


def test_a_hit_on_unread_keys_alone_is_a_guess_when_the_text_leg_disagrees(tmp_path):
    plain = _route(Q_ELSEWHERE, _fleet(tmp_path / "a", marked=None))
    assert plain["verdict"] == "hit" and "unread_keys" not in plain["gate"]  # the seed's verdict
    out = _route(Q_ELSEWHERE, _fleet(tmp_path / "b", marked=TAR_KEYS))
    assert out["verdict"] == "guess" and out["keyword_top"] == "pages/tar.md"
    assert out["gate"]["unread_keys"] == "demoted" and "nobody has read" in out["gate"]["why"]
    assert out["results"][0]["path"] == "atool.md"  # the text leg's first, which disagreed
    # The unread pick gets no second vote in the reading list: the text leg's order, alone.
    assert [(r["path"], r["why"]) for r in out["results"]] == [
        ("atool.md", "text #1"), ("unpack.md", "text #2"), ("tar.md", "text #3")]
    assert [r["why"] for r in plain["results"]][:2] == ["keywords #2 + text #1", "keywords #1 + text #3"]
    # The same scores: the rule changes the verdict and nothing of the arithmetic.
    assert out["gate"]["floor"] == plain["gate"]["floor"]
    text = run_kb("route", Q_ELSEWHERE, str(tmp_path / "b" / "pages")).stdout
    assert "verdict:  guess" in text and "the text search put another note first" in text


def test_a_hit_on_unread_keys_stands_where_the_text_leg_agrees(tmp_path):
    out = _route(Q_AGREED, _fleet(tmp_path, marked=TAR_KEYS))
    assert out["verdict"] == "hit" and out["gate"]["unread_keys"] == "agreed"
    assert out["results"][0]["path"] == "tar.md"


def test_one_read_key_in_the_score_leaves_the_seed_verdict(tmp_path):
    # The person kept `tar` (deleted it from the mark): the score holds a key someone read.
    out = _route(Q_ELSEWHERE, _fleet(tmp_path, marked=["tar archive", "extract a tar file"]))
    assert out["verdict"] == "hit" and "unread_keys" not in out["gate"]


def test_kb_label_write_marks_the_machine_keys_and_the_rule_reads_them(tmp_path):
    base = tmp_path / "pages"
    base.mkdir()
    for name, text in NOTES.items():  # the same pages with no labels at all
        lines = [ln for ln in text.splitlines(keepends=True) if not ln.startswith("Search for:")]
        (base / name).write_text("".join(lines), encoding="utf-8")
    # Before writing, kb label tells the reader what the mark is and how a reviewed key loses it.
    plain = run_kb("label", str(base))
    assert plain.returncode == 0 and "naming them unread" in plain.stdout and "delete the line" in plain.stdout
    out = run_kb("label", str(base), "--write", "--json")
    assert out.returncode == 0, out.stderr
    written = json.loads(out.stdout)["written"]
    assert written, out.stdout
    for rel in written:
        note = parse_note(rel, (tmp_path / rel).read_text(encoding="utf-8"))
        assert note.keys and note.unread == note.keys, rel  # every machine key is named unread


def test_the_seed_demo_carries_no_mark_so_the_rule_cannot_move_it():
    marks = [p for p in DEMO.rglob("*.md") if "kb label proposed" in p.read_text(encoding="utf-8")]
    assert marks == []


@pytest.mark.parametrize("reviewed, expect_mark", [(True, False), (False, True)])
def test_a_person_reviewed_write_has_no_mark(reviewed, expect_mark):
    from collections import Counter

    from engine.review.label import apply, propose
    from engine.review.labelstats import FleetStats

    data = b"# Wafers\n\nThin wafers crack when baked too long.\n\n## Baking thin wafers\n\nBake them briefly.\n"
    p = propose("wafers.md", data, FleetStats(1, Counter(), Counter()))
    assert p.keys, p
    new = apply(data, p, merge=False, reviewed=reviewed)
    assert (b"<!-- kb label proposed" in new) is expect_mark
    note = parse_note("wafers.md", new.decode())
    assert note.unread == (note.keys if expect_mark else ())


def test_the_gate_pane_says_why_the_hit_became_a_guess(tmp_path):
    from engine.memory import Memory
    from kbtui.gate_pane import gate_plain

    a = Memory(_fleet(tmp_path, marked=TAR_KEYS)).ask(Q_ELSEWHERE, record_miss=False)
    plain = gate_plain(a)
    assert a.verdict == "guess" and "demoted: a guess, not a hit" in plain, plain
    assert "delete the kb label line" in plain
    b = Memory(_fleet(tmp_path / "plain", marked=None)).ask(Q_ELSEWHERE, record_miss=False)
    assert b.verdict == "hit" and "unread" not in gate_plain(b)


def _fleet_ls_marked(tmp_path: Path) -> Path:
    base = _fleet(tmp_path, marked=None)
    ls = base / "ls.md"
    text = ls.read_text(encoding="utf-8")
    ls.write_text(text.replace("Search for: list files, ls\n",
                               "Search for: list files, ls\n" + mark_line(["list files", "ls"]) + "\n"), encoding="utf-8")
    return base


def test_a_hit_on_unread_keys_needs_the_question_to_name_the_note(tmp_path):
    # Both legs put ls.md first, on words a machine drew from the note itself: nothing in the
    # question names it (its file name's one word, `ls`), so it is a guess, saying so.
    base = _fleet_ls_marked(tmp_path)
    out = _route("list files in a directory", base)
    assert out["keyword_top"] == "pages/ls.md" and out["results"][0]["path"] == "ls.md"
    assert out["verdict"] == "guess" and out["gate"]["unread_keys"] == "unnamed"
    assert "does not name it" in out["gate"]["why"]
    named = _route("ls list files in a directory", base)
    assert named["verdict"] == "hit" and named["gate"]["unread_keys"] == "agreed"


def test_a_hit_on_unread_keys_needs_the_note_to_hold_half_the_question(tmp_path):
    # Named and agreed, but a question about something else that names the tool: tar.md holds
    # 1 of its 5 words (the coverage rule's test, asked of a machine's keys always).
    base = _fleet(tmp_path, marked=TAR_KEYS)
    out = _route("tar the moon rocket spaceship quickly", base)
    assert out["keyword_top"] == "pages/tar.md" and out["results"][0]["path"] == "tar.md"
    assert out["verdict"] == "guess" and out["gate"]["unread_keys"] == "uncovered"
    assert "under half" in out["gate"]["why"]
    # Without the mark (keys a person wrote) the seed's gate alone decides: a hit.
    plain = _route("tar the moon rocket spaceship quickly", _fleet(tmp_path / "plain", marked=None))
    assert plain["verdict"] == "hit" and "unread_keys" not in plain["gate"]


@pytest.mark.parametrize("path, words", [
    ("ch04-01-what-is-ownership.md", ["ownership"]), ("iperf3.md", ["iperf3"]), ("0001.md", ["0001"]),
    ("common/git-cherry-pick.md", ["git", "cherry", "pick"]), ("widgets/data_table.md", ["data", "table"])])
def test_a_note_is_named_by_its_file_name_numbering_aside(path, words):
    from engine.rank.vouch import name_words, names_note
    assert name_words(path) == words
    assert names_note(tuple(words), path)
    assert not names_note(("cherry", "blossoms", "kyoto"), "common/git-cherry-pick.md")
    assert names_note(("trust", "tls", "certificate"), "authentication/certificates.md")  # stems compared


def test_the_room_says_why_an_unread_hit_is_a_guess_in_the_verdict_bar_and_the_gate_pane(tmp_path):
    """Pilot against the real app at 80 columns: the bar's short reason fits beside the
    arithmetic, and the Gate pane says it whole."""
    import asyncio

    from tui_support import ask, make_app, ready, screen_text

    base = _fleet_ls_marked(tmp_path)

    async def go():
        app = make_app(base)
        async with app.run_test(size=(80, 24)) as pilot:
            await ready(pilot)
            await ask(pilot, "list files in a directory")
            assert app.main.answer.gate.unread == "unnamed"
            bar = app.main.query_one("#verdict").render()
            assert "GUESS" in str(bar) and "unread · not named" in str(bar)
            lines = screen_text(app).splitlines()
            assert any("unread · not named" in line and len(line) <= 80 for line in lines)
            from engine.answer import UNREAD_WHY
            from kbtui.gate_pane import gate_plain
            assert f"unread     unnamed: {UNREAD_WHY['unnamed']}" in gate_plain(app.main.answer)
            await ask(pilot, "ls list files in a directory")
            assert app.main.answer.verdict == "hit" and app.main.answer.gate.unread == "agreed"
            assert "unread · agreed" in str(app.main.query_one("#verdict").render())

    asyncio.run(go())
