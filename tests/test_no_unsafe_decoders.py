"""No decoder in engine/ that can crash, hang or allocate without bound on hostile bytes:
marshal and pickle are not imported anywhere in the engine (docs/decisions.md, "What kb
trusts"), and every connection to an index file runs with SQLite's schema distrusted."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO, copy_demo
from engine.memory import Memory

UNSAFE = {"marshal", "pickle", "cPickle", "shelve", "dill"}


def test_the_engine_imports_no_unsafe_decoder():
    found = []
    for path in sorted((REPO / "engine").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module.split(".")[0]]
            found += [f"{path.relative_to(REPO)}:{node.lineno}: {n}" for n in names if n in UNSAFE]
    assert found == []


def test_a_connection_to_the_index_distrusts_its_schema(tmp_path: Path):
    m = Memory(copy_demo(tmp_path / "demo"))
    index = next(iter(m.indexes.values()))
    assert index.conn().execute("PRAGMA trusted_schema").fetchone()[0] == 0
