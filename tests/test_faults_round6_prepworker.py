"""Round 6: the build's second process (engine/index/prepworker.py) attacked from outside.

Real parts: the child is a real interpreter started by PrepWorker, the notes are the demo's.
"""

from __future__ import annotations

from conftest import REPO
from test_prepworker import prepared_by_child  # noqa: F401 - the fixture: notes the child prepared

from engine.index import prepworker


def _demo_notes(limit: int = 6):
    base = next(p for p in sorted((REPO / "examples" / "demo").iterdir()) if p.is_dir())
    notes = [(p.relative_to(base).as_posix(), p.stat(), None) for p in sorted(base.rglob("*.md"))][:limit]
    return base, notes


def test_the_child_never_imports_an_engine_from_the_working_directory(tmp_path, monkeypatch, prepared_by_child):
    # `python -m engine.index.prepworker` puts the working directory first on sys.path, ahead of
    # PYTHONPATH: `kb index` run from a folder holding an `engine/` package (a game's source,
    # /tmp where anyone can make one) or a `Stemmer.py` ran that code in the child, and its
    # frames went into the index as the notes' rows.
    planted = tmp_path / "engine"
    planted.mkdir()
    marker = tmp_path / "RAN"
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    (tmp_path / "Stemmer.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    monkeypatch.chdir(tmp_path)
    base, notes = _demo_notes()
    worker = prepworker.PrepWorker(base, notes)
    try:
        for rel, _st, _old in notes:
            assert worker.next_result(rel).problem is None
    finally:
        worker.close()
    assert not marker.exists(), "the child ran the engine package found in the working directory"
    assert prepared_by_child[0] > 0, "the child prepared nothing: this engine's prepworker did not run"
