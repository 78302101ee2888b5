"""A note inside a vault's folder that holds an index.md (or an agent.txt): `kb index` made
the vault one base (it has notes outside that folder), but `kb list vault/Cooking/index.md`
and `kb remember ... vault/Cooking/tea.md --write` took Cooking for a base of its own: each
built a second index inside the vault (`Cooking/.kb`) and named the note `Cooking/...`.
Only a folder, not a note in it, was looked up in the vault above. Real `kb` processes."""

from __future__ import annotations

from pathlib import Path

from conftest import run_kb


def _vault(root: Path) -> Path:
    (root / "Cooking").mkdir(parents=True)
    (root / "Health").mkdir()
    (root / "Garden journal.md").write_text("# Garden journal\n\nThe fertilizer ratio is 3 to 1.\n")
    (root / "Health" / "Sleep.md").write_text("# Sleep\n\nSearch for: `sleep hours`\n\nEight hours.\n")
    (root / "Cooking" / "index.md").write_text("# Cooking\n\n- [[Sourdough]]\n")
    (root / "Cooking" / "Sourdough.md").write_text("# Sourdough\n\nSearch for: `sourdough starter`\n\nFeed it.\n")
    r = run_kb("index", str(root))
    assert r.returncode == 0 and r.stdout.startswith("vault: 4 files"), r.stdout + r.stderr
    return root


def test_kb_list_of_a_note_in_a_vault_folder_with_an_index_md_lists_the_vaults_note(tmp_path):
    vault = _vault(tmp_path / "vault")
    r = run_kb("list", str(vault / "Cooking" / "Sourdough.md"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("vault/Cooking/Sourdough.md"), r.stdout
    assert not (vault / "Cooking" / ".kb").exists()  # no second index inside the vault


def test_kb_remember_writes_a_note_in_a_vault_folder_with_an_index_md_into_the_vault(tmp_path):
    vault = _vault(tmp_path / "vault")
    r = run_kb("remember", "Green tea is steeped at 80 degrees.", str(vault / "Cooking" / "tea.md"),
               "--write", "--key", "green tea")
    assert r.returncode == 0, r.stderr
    assert "vault/Cooking/tea.md (indexed, an entry)" in r.stdout, r.stdout
    assert not (vault / "Cooking" / ".kb").exists()
    routed = run_kb("route", "green tea", str(vault))
    assert "vault/Cooking/tea.md" in routed.stdout and "re-indexed" not in routed.stdout, routed.stdout
