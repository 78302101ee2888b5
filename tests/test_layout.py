"""The shape rules that keep the engine one pipeline, checked on the source itself.

- Nothing outside Memory reaches into a base's index (`memory.indexes`): the reader, `kb
  serve`, `kb remember`, `kb misses` ask Memory, so a second text leg can sit behind it.
- An import inside a function is for a heavy library only (the rule, stated in
  docs/architecture.md); everything else is imported at the top, where a reader looks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUNTIME = sorted(p for pkg in ("engine", "kbtui") for p in (REPO / pkg).rglob("*.py"))
INDEX_OWNERS = {"engine/memory.py"}
HEAVY = {"Stemmer", "onnxruntime", "tokenizers", "numpy", "onnx", "mcp", "textual", "textual_serve", "watchfiles",
         "matplotlib", "kbtools", "fcntl"}  # fcntl: POSIX only, imported where the lock is taken


def _rel(p: Path) -> str:
    return p.relative_to(REPO).as_posix()


@pytest.mark.parametrize("path", [p for p in RUNTIME if _rel(p) not in INDEX_OWNERS], ids=_rel)
def test_nothing_outside_memory_reaches_into_the_indexes(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reach = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "indexes"]
    assert not reach, f"{_rel(path)}:{reach[0]} reaches into .indexes; ask Memory instead"


@pytest.mark.parametrize("path", [p for p in RUNTIME if _rel(p).startswith("engine/")], ids=_rel)
def test_engine_imports_inside_functions_only_heavy_libraries(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    late = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for n in ast.walk(fn):
            if isinstance(n, ast.Import):
                names = [a.name for a in n.names]
            elif isinstance(n, ast.ImportFrom):
                names = ["." * n.level + (n.module or "")]
            else:
                continue
            late += [f"{_rel(path)}:{n.lineno} {m}" for m in names if m.split(".")[0] not in HEAVY]
    assert not late, f"imported inside a function but not heavy: {late}"
