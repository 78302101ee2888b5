"""Round 5 faults in the resident text leg (engine/index/resident.py): a `kb index` in another
process committing while a reading room or `kb serve` builds its postings.

Real parts: the demo fleet on disk, real FTS5, the real `kb index` in a subprocess. The one
thing arranged is when the other writer commits: between the build's first read (each chunk's
length) and its postings, where a large base's build spends seconds."""

from __future__ import annotations

import pytest

import engine.index.resident as resident
from conftest import copy_demo
from engine.memory import Memory
from engine.index.resident import ResidentText
from _faults import kb

QUESTIONS = [["deploy"], ["review", "code"], ["postgres", "schema"], ["rollback", "deploy", "checklist"], ["extra"]]


def _commit_during_build(monkeypatch, write) -> None:
    """Run `write` (an edit and a real `kb index`) once, right after the build read the chunks'
    lengths and before it reads their postings."""
    real = resident._tokenize_clause
    done = []

    def between(con):
        if not done:
            done.append(True)
            write()
        return real(con)

    monkeypatch.setattr(resident, "_tokenize_clause", between)


@pytest.mark.parametrize("edit", ["added", "last replaced"])
def test_a_build_while_another_process_indexes_ranks_as_fts5(tmp_path, monkeypatch, edit):
    fleet = copy_demo(tmp_path / "demo")
    zed = fleet / "zed"
    kb("index", str(fleet))
    notes = sorted(zed.rglob("*.md"))

    def write():
        if edit == "added":
            (zed / "zz-extra.md").write_text(
                "# Extra\n\nSearch for: extra deploy\n\n" + "\n\n".join(f"## part {k}\n\nextra deploy rollback {k}"
                                                                        for k in range(6)) + "\n", encoding="utf-8")
        else:  # the note indexed last (highest id, paths in order) goes; the note added takes its id
            notes[-1].unlink()
            (zed / "zz-extra.md").write_text("# Extra\n\nSearch for: extra\n\nextra deploy deploy\n", encoding="utf-8")
        kb("index", str(fleet))

    idx = Memory(fleet).indexes["zed"]
    _commit_during_build(monkeypatch, write)
    leg = ResidentText(idx)
    leg.refresh()  # as Memory does once a build is done: follow what landed meanwhile
    for terms in QUESTIONS:
        for small in (0, 10**9):
            leg.small_postings = small
            assert leg.search(terms, 50) == idx.search(terms, 50), (terms, small)
