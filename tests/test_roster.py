"""The roster: `kb fleet` reads fleet.txt and every agent.txt; what is wrong is one line naming the file."""

from __future__ import annotations

import json

from _who import configure, example_command
from conftest import kb_here, run_kb

from engine import Memory
from engine.notes.roster import CLASSIFIER_TIMEOUT_MS_DEFAULT, roster_of


def test_kb_fleet_prints_who_does_what_and_where_each_stops(demo):
    p = run_kb("fleet", str(demo))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[:4] == [
        "fleet:      Atrium",
        "            A small demo fleet: a software architect, a marketing analyst and a nutrition assistant",
        "classifier: none configured; the fold chooses the agent",
        "agents:     3",
    ]
    assert "  yaron  Yaron  (4 entries)" in lines
    assert "         does:  Nutrition assistant: protein, meals, recovery from training, and where to look up what " \
           "food contains" in lines
    zed_ends = (demo / "zed" / "agent.txt").read_text().split("ends = ")[1].strip()
    assert f"         stops: {zed_ends}" in lines
    assert "problem:" not in p.stdout


def test_kb_fleet_json_and_the_configured_classifier(demo):
    configure(demo, example_command(), timeout_ms=1500)
    f = json.loads(kb_here("fleet", str(demo), "--json").stdout)
    assert (f["classifier"], f["classifier_timeout_ms"]) == (example_command(), 1500)
    assert [(a["agent"], a["name"], a["entries"]) for a in f["agents"]] == [
        ("steve", "Steve", 3), ("yaron", "Yaron", 4), ("zed", "Zed", 4)]
    text = kb_here("fleet", str(demo)).stdout
    assert f"classifier: {example_command()} (timeout 1500 ms; the fold chooses when it fails)" in text


def test_what_is_wrong_is_one_line_naming_the_file(demo):
    (demo / "steve" / "agent.txt").write_text("name = Steve\nrole = marketing\n")
    (demo / "zed" / "agent.txt").unlink()
    with open(demo / "fleet.txt", "a") as f:
        f.write("classifier_timeout_ms = soon\n")
    roster = roster_of(Memory(demo).fleet)
    assert roster.classifier_timeout_ms == CLASSIFIER_TIMEOUT_MS_DEFAULT
    assert roster.problems == (
        "steve/agent.txt: no `ends =` line; nobody can tell where steve stops",
        "zed/agent.txt: missing; the roster has no role or edge for zed",
        "demo/fleet.txt: classifier_timeout_ms = 'soon' is not a positive whole number of milliseconds; using 30000",
    )
    p = kb_here("fleet", str(demo))
    assert p.returncode == 0
    assert "problem:    zed/agent.txt: missing; the roster has no role or edge for zed" in p.stdout.splitlines()
    assert "         stops: (no ends = line)" in p.stdout.splitlines()


def test_a_name_resolves_by_key_or_agent_name_and_nothing_else(demo):
    roster = Memory(demo).roster
    assert roster.resolve("zed").key == "zed"
    assert roster.resolve("**Yaron**").key == "yaron"
    assert roster.resolve("STEVE").key == "steve"
    assert roster.resolve("bob") is None and roster.resolve("") is None and roster.resolve(None) is None


def test_a_lone_base_inside_a_fleet_still_reads_the_fleets_manifest(demo):
    configure(demo, example_command())
    roster = Memory(demo / "zed").roster
    assert roster.keys == ("zed",)
    assert (roster.name, roster.classifier) == ("Atrium", example_command())


def _vault(root):
    """A plain vault: no agent.txt, no index.md, notes in folders."""
    (root / "Health").mkdir(parents=True)
    (root / "Health" / "Sleep.md").write_text("# Sleep\n\nNo screens before bed.\n")
    (root / "Cooking.md").write_text("# Cooking\n\nFeed the starter.\n")
    return root


def test_kb_fleet_counts_unlabelled_notes_as_unlabelled_not_unreachable(tmp_path):
    # The text search reaches every one of them; "12 unreachable" told a stranger otherwise.
    vault = _vault(tmp_path / "vault")
    lines = kb_here("fleet", str(vault)).stdout.splitlines()
    assert "  vault  vault  (0 entries, 2 without a Search for: line, reached by text only)" in lines


def test_a_folder_of_an_indexed_plain_vault_is_listed_as_part_of_the_vault(tmp_path):
    # `kb index vault` makes one base; `kb list vault/Health` took Health for a base of its
    # own, named its notes Health/..., and built a second index inside the vault.
    vault = _vault(tmp_path / "vault")
    assert kb_here("index", str(vault)).returncode == 0  # arranged here; the verbs under test run for real
    p = run_kb("list", str(vault / "Health"))
    assert p.returncode == 0, p.stderr
    assert [ln.split()[0] for ln in p.stdout.splitlines() if not ln.startswith(" ")] == ["vault/Health/Sleep.md"]
    assert not (vault / "Health" / ".kb").exists()
    # A folder holding an index.md (a map of content) is a folder of the vault too.
    (vault / "Health" / "index.md").write_text("# Health\n\n- [[Sleep]]\n")
    p = kb_here("list", str(vault / "Health"))
    assert [ln.split()[0] for ln in p.stdout.splitlines() if not ln.startswith(" ")] == [
        "vault/Health/Sleep.md", "vault/Health/index.md"]
    assert not (vault / "Health" / ".kb").exists()


def test_remember_writes_a_new_note_into_an_indexed_plain_vault(tmp_path):
    vault = _vault(tmp_path / "vault")
    assert kb_here("index", str(vault)).returncode == 0  # arranged here; the verbs under test run for real
    note = vault / "Garden" / "basil.md"
    p = kb_here("remember", "Basil needs full sun and warm nights", str(note), "--write", "--key", "basil")
    assert p.returncode == 0, p.stderr
    assert note.exists() and "**Search for:** `basil`" in note.read_text()
    listed = json.loads(kb_here("list", str(vault), "--json").stdout)["notes"]
    assert "vault/Garden/basil.md" in {n["id"] for n in listed}


def test_kb_list_lists_a_folder_inside_a_base(demo):
    p = kb_here("list", str(demo / "zed" / "knowledge"))
    assert p.returncode == 0, p.stderr
    assert [ln.split()[0] for ln in p.stdout.splitlines() if not ln.startswith(" ")] == [
        "zed/knowledge/database-choices.md", "zed/knowledge/deploy-checklist.md"]
    whole = kb_here("list", str(demo), "--json")
    assert len(json.loads(whole.stdout)["notes"]) == 11
