"""The first run on a plain folder of markdown with no labels: every message tells the truth
and points at `kb label`; the text reading list is the answer, not hidden behind a flag."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_kb


def plain(root: Path, n: int = 14) -> Path:
    root.mkdir()
    for i in range(n):
        (root / f"topic-{i}.md").write_text(f"# Topic {i}\n\nNotes on gardening tool number {i}: spades and rakes.\n")
    (root / "links.md").write_text("# Links\n\nSee [the missing page](nowhere.md) for spades.\n")
    return root


def test_route_shows_the_text_list_by_default_under_a_line_naming_kb_label(tmp_path):
    root = plain(tmp_path / "notes")
    r = run_kb("route", "spades and rakes", str(root))
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert "kb label" in first and "never a HIT until labelled" in first
    assert "topic-" in r.stdout  # the reading list itself
    assert "do not carry the words" not in r.stdout  # no labels, so no claim about them
    assert "indexed:  0 entries across 1 agent, 0 aliases" in r.stdout.splitlines()  # not "1 agents"
    assert json.loads(run_kb("route", "spades", str(root), "--json").stdout)["verdict"] == "nothing"


def test_index_says_the_text_search_reaches_unlabelled_notes_and_folds_the_list(tmp_path):
    root = plain(tmp_path / "notes")
    r = run_kb("index", str(root))
    assert "no question can reach" not in r.stdout
    assert "15 file(s) with no Search for: line: reached by full text only, never a HIT until labelled" in r.stdout
    assert "... and 5 more (kb check --all lists every one)" in r.stdout


def test_check_folds_missing_labels_into_one_line_so_a_broken_link_stands_out(tmp_path):
    root = plain(tmp_path / "notes")
    r = run_kb("check", str(root))
    lines = r.stdout.splitlines()
    assert r.returncode == 1
    assert sum("E02" in line for line in lines) == 1
    assert any("E02 error: 15 of 15 notes have no Search for: line" in line for line in lines)
    assert any("E01" in line and "nowhere.md" in line for line in lines)
    every = run_kb("check", "--all", str(root)).stdout.splitlines()
    assert sum("E02" in line for line in every) == 15


def test_check_lists_each_missing_label_when_few_notes_lack_one(tmp_path):
    root = plain(tmp_path / "notes", n=3)
    for p in sorted(root.glob("topic-*.md")):
        p.write_text(p.read_text().replace("\n\n", "\nSearch for: spades, rakes\n\n", 1))
    r = run_kb("check", str(root))
    assert sum(" E02 " in line for line in r.stdout.splitlines()) == 1  # links.md alone, named
    assert "links.md:1: E02" in r.stdout or "links.md: E02" in r.stdout
