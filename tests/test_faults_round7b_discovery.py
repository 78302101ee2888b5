"""Discovery of a folder without fleet.txt whose subfolders include bases (engine/notes/fleet.py).
Two merges met here: one made the child bases (folder, is-a-link) pairs, the other read them
as folders (`b.name`) to decide whether the folder is a vault, and set the vault back as a
bare folder: every such folder was a traceback (`'tuple' object has no attribute 'name'`) in
every verb. Real `kb` processes on real folders."""

from __future__ import annotations

from pathlib import Path

from conftest import run_kb


def _agent(folder: Path, note: str) -> None:
    folder.mkdir(parents=True)
    (folder / "agent.txt").write_text(f"name = {folder.name}\n")
    (folder / "note.md").write_text(f"# {note}\n\nSearch for: {note.lower()}\n\nAbout {note.lower()}.\n")


def test_a_readme_and_agents_without_fleet_txt_is_a_fleet(tmp_path):
    root = tmp_path / "team"
    root.mkdir()
    (root / "README.md").write_text("# Our agents\n")
    _agent(root / "alice", "Deploys")
    _agent(root / "bob", "Backups")
    r = run_kb("index", str(root))
    assert r.returncode == 0, r.stderr
    assert sorted(line.split(":")[0] for line in r.stdout.splitlines() if ": " in line) == ["alice", "bob"]


def test_agents_beside_a_folder_of_notes_without_fleet_txt_is_one_vault(tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    (root / "README.md").write_text("# My vault\n")
    _agent(root / "alice", "Deploys")
    (root / "Journal").mkdir()
    (root / "Journal" / "garden.md").write_text("# Garden\n\nThe secret fertilizer ratio is 3 to 1.\n")
    r = run_kb("index", str(root))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("vault: 3 files"), r.stdout  # README, alice's note, the journal's
