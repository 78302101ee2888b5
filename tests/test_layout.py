"""The shape rules that keep the engine one pipeline, checked on the source itself.

- Nothing outside Memory and its FleetIndex reaches into a base's index (`memory.indexes`): the reader, `kb
  serve`, `kb remember`, `kb misses` ask Memory, so a second text leg can sit behind it.
- An import inside a function is for a heavy library or an optional stage only (the rule,
  stated in docs/architecture.md); everything else is imported at the top, where a reader looks.
- One place for the cycle collector's policy (engine/index/collector.py imports gc, nothing
  else does) and one way to start a second process (engine/index/helperprocess.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUNTIME = sorted(p for pkg in ("engine", "kbtui") for p in (REPO / pkg).rglob("*.py"))
INDEX_OWNERS = {"engine/memory.py", "engine/index/fleetindex.py"}  # the contract, and the fleet's index it holds
# Optional stages and the paths a plain question never takes: imported where they run, so a
# one-shot `kb route` / `kb boot` does not pay for them (tests/test_engine_cli.py checks the
# process). A module here is imported at the top of no module a plain route imports.
OPTIONAL = {"engine.stages.purpose", "engine.stages.rerank", "engine.stages.classifier", "engine.stages.dossier", "engine.notes.roster",
            "engine.index.resident", "engine.rank.suggest", "engine.index.spelling_cache", "engine.review.misses", "engine.notes.gitignore", "engine.review.remember",
            "engine.index.prepworker",
            # the writer: parsing and chunking a note, imported when a base is written
            "engine.notes.bignote", "engine.index.prepared", "engine.notes.chunking", "engine.notes.note"}
# Standard-library modules a route that writes nothing never uses, imported where they are:
# tempfile (with random) where a file is written, shutil where notes are copied (argparse,
# which parses every verb, is imported where the parser is built: engine/cli/__init__.py), and
# importlib.metadata (~19 ms: email, zipfile) where --version reads the package's version, and
# dataclasses (with inspect, ast, dis) where the dataclasses module is asked about a record
# (engine/shared/record.py).
LATE_STDLIB = {"tempfile", "shutil", "argparse", "importlib", "dataclasses"}
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
                names = [_absolute(path, n.level, n.module or "")]
            else:
                continue
            late += [f"{_rel(path)}:{n.lineno} {m}" for m in names if not _may_be_late(m)]
    assert not late, f"imported inside a function but neither heavy nor an optional stage: {late}"


def _absolute(path: Path, level: int, module: str) -> str:
    """A relative import's module as an absolute name (`..rerank.reading` in engine/cli/x.py
    is engine.stages.rerank.reading)."""
    if not level:
        return module
    package = _rel(path).removesuffix(".py").split("/")[:-1]
    parts = package[: len(package) - (level - 1)]
    return ".".join([*parts, module] if module else parts)


def _may_be_late(module: str) -> bool:
    return module.split(".")[0] in HEAVY | LATE_STDLIB or any(module == o or module.startswith(o + ".") for o in OPTIONAL)


GC_POLICY = "engine/index/collector.py"
# The one module that starts a process of kb's own; the classifier runs an outside program
# (the model's), which is not a second core for kb's work.
PROCESS_STARTERS = {"engine/index/helperprocess.py", "engine/stages/classifier.py"}
PROCESS_MODULES = {"subprocess", "multiprocessing", "concurrent.futures"}
PROCESS_CALLS = {"fork", "forkpty", "posix_spawn", "posix_spawnp", "spawnv", "spawnl", "execv", "execl"}


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out += [(n.lineno, a.name) for a in n.names]
        elif isinstance(n, ast.ImportFrom) and not n.level:
            out.append((n.lineno, n.module or ""))
    return out


def test_only_the_collector_module_imports_gc():
    found = [f"{_rel(p)}:{line}" for p in RUNTIME if _rel(p) != GC_POLICY
             for line, m in _imported(ast.parse(p.read_text(encoding="utf-8"))) if m == "gc" or m.startswith("gc.")]
    assert not found, f"gc imported outside {GC_POLICY} (the one GC policy): {found}"
    assert any(m == "gc" for _, m in _imported(ast.parse((REPO / GC_POLICY).read_text(encoding="utf-8"))))


def test_only_helperprocess_starts_a_process():
    found = []
    for p in RUNTIME:
        if _rel(p) in PROCESS_STARTERS:
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        found += [f"{_rel(p)}:{line} imports {m}" for line, m in _imported(tree) if m in PROCESS_MODULES]
        found += [f"{_rel(p)}:{n.lineno} calls os.{n.attr}" for n in ast.walk(tree)
                  if isinstance(n, ast.Attribute) and n.attr in PROCESS_CALLS
                  and isinstance(n.value, ast.Name) and n.value.id == "os"]
    assert not found, f"a process started outside engine/index/helperprocess.py: {found}"
