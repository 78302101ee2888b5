"""The first run on a plain folder of markdown with no labels: every message tells the truth
and points at `kb label`; the text reading list is the answer, not hidden behind a flag."""

from __future__ import annotations

import json

import pytest
from pathlib import Path

from conftest import kb_here


def plain(root: Path, n: int = 14) -> Path:
    root.mkdir()
    for i in range(n):
        (root / f"topic-{i}.md").write_text(f"# Topic {i}\n\nNotes on gardening tool number {i}: spades and rakes.\n")
    (root / "links.md").write_text("# Links\n\nSee [the missing page](nowhere.md) for spades.\n")
    return root


def test_route_shows_the_text_list_by_default_under_a_line_naming_kb_label(tmp_path):
    root = plain(tmp_path / "notes")
    r = kb_here("route", "spades and rakes", str(root))
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert "kb label" in first and "never a HIT until labelled" in first
    assert "topic-" in r.stdout  # the reading list itself
    assert "do not carry the words" not in r.stdout  # no labels, so no claim about them
    assert "indexed:  0 entries across 1 agent, 0 aliases" in r.stdout.splitlines()  # not "1 agents"
    assert json.loads(kb_here("route", "spades", str(root), "--json").stdout)["verdict"] == "nothing"


def test_index_says_the_text_search_reaches_unlabelled_notes_and_folds_the_list(tmp_path):
    root = plain(tmp_path / "notes")
    r = kb_here("index", str(root))
    assert "no question can reach" not in r.stdout
    assert "15 file(s) with no Search for: line: reached by full text only, never a HIT until labelled" in r.stdout
    assert "... and 5 more (kb check --all lists every one)" in r.stdout


def test_check_folds_missing_labels_into_one_line_so_a_broken_link_stands_out(tmp_path):
    root = plain(tmp_path / "notes")
    r = kb_here("check", str(root))
    lines = r.stdout.splitlines()
    assert r.returncode == 1  # the broken link; a plain folder's missing labels are warnings (W09)
    assert sum("W09" in line for line in lines) == 1
    assert any("W09 warning: 15 of 15 notes have no Search for: line" in line for line in lines)
    assert any("E01" in line and "nowhere.md" in line for line in lines)
    every = kb_here("check", "--all", str(root)).stdout.splitlines()
    assert sum("W09" in line for line in every) == 15


def test_check_lists_each_missing_label_when_few_notes_lack_one(tmp_path):
    root = plain(tmp_path / "notes", n=3)
    for p in sorted(root.glob("topic-*.md")):
        p.write_text(p.read_text().replace("\n\n", "\nSearch for: spades, rakes\n\n", 1))
    r = kb_here("check", str(root))
    assert sum(" W09 " in line for line in r.stdout.splitlines()) == 1  # links.md alone, named
    assert "links.md:1: W09" in r.stdout or "links.md: W09" in r.stdout


def _vault_with_a_folder_index(root: Path) -> Path:
    """An Obsidian-style vault: notes at the top and in folders, and one folder holding an
    index.md (a map of content), which is also what marks a base."""
    (root / "Cooking").mkdir(parents=True)
    (root / "Health").mkdir()
    (root / "README.md").write_text("# My vault\n\nPersonal notes.\n")
    (root / "Garden journal.md").write_text("# Garden journal\n\nThe secret fertilizer ratio is 3 to 1.\n")
    (root / "Health" / "Sleep.md").write_text("# Sleep\n\nMagnesium before bed.\n")
    (root / "Cooking" / "index.md").write_text("# Cooking\n\n- [[Sourdough]]\n")
    (root / "Cooking" / "Sourdough.md").write_text("# Sourdough\n\nFeed the starter twice a day.\n")
    return root


def test_a_folder_index_does_not_turn_a_vault_into_a_fleet_and_hide_the_other_notes(tmp_path):
    # Cooking/index.md made the vault a fleet root whose one agent was Cooking: the garden
    # journal and every other note were silently left out of the index.
    vault = _vault_with_a_folder_index(tmp_path / "vault")
    r = kb_here("index", str(vault))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("vault: 5 files")
    a = json.loads(kb_here("route", "secret fertilizer ratio", str(vault), "--json").stdout)
    assert [x["path"] for x in a["results"]][:1] == ["Garden journal.md"]


def test_a_fleet_txt_keeps_the_subfolders_agents(tmp_path):
    vault = _vault_with_a_folder_index(tmp_path / "vault")
    (vault / "fleet.txt").write_text("name = Kitchen\n")
    r = kb_here("index", str(vault))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Cooking: 2 files")


def test_misses_and_eval_count_one_agent_and_one_question_in_the_singular(tmp_path):
    # kb route said "1 agent" since 5c50fe5; kb misses and kb eval still printed "1 agents".
    root = plain(tmp_path / "notes")
    kb_here("route", "how do I sharpen a hoe", str(root))
    (tmp_path / "gold.tsv").write_text("spades and rakes\tnotes/topic-1.md\n")
    (root / ".kb" / "kb-misses.txt").exists() or pytest.fail("the miss was not logged")  # issue 28: inside .kb/
    misses = kb_here("misses", str(root)).stdout.splitlines()
    assert misses[0].endswith(", 1 question, asked 1 time")
    assert misses[1] == "indexed:  0 entries across 1 agent, 0 aliases"
    evaluated = kb_here("eval", str(tmp_path / "gold.tsv"), str(root))
    assert "indexed:  0 entries across 1 agent" in evaluated.stdout.splitlines(), evaluated.stdout + evaluated.stderr
