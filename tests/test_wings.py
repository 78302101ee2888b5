"""The engine's wings import one way (issue 27): each module-level import from one wing to
another goes down the order below, never up.

Read over ast: the imports at a module's top level (inside a top-level `try:` or `if:` too,
but not under `if TYPE_CHECKING:`, which is never run). An import inside a function is not
held to the order: it is how the contract (Memory) reaches the optional stages and a verb's
own modules only when asked (tests/test_engine_cli.py holds what a plain route imports).
The root's shared modules (errors, clean, sentences, query, answer) may be imported by every
wing; the root's working part (memory, render, the package's face) sits above the stages.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "engine"

# Lowest first: a wing may import the wings before it in this list, never one after it.
ORDER = ("shared", "rank", "notes", "index", "stages", "contract", "review", "serve", "cli")
SHARED = {"engine.errors", "engine.clean", "engine.sentences", "engine.query", "engine.answer"}
CONTRACT = {"engine", "engine.memory", "engine.render"}
# Imports that run up today, each with why; a new one fails the test until it is moved or named here.
UP_ALLOWED = {
    ("engine.answer", "engine.index.textsearch"): "a TextHit carries the text leg's chunk (ChunkFields)",
    ("engine.answer", "engine.stages.coverage"): "the coverage line is worded once, for every surface",
    ("engine.rank.textpool", "engine.index.textsearch"): "the pool orders the text leg's Matches",
    ("engine.notes.roster", "engine.render"): "the roster is printed with render.one_line",
}


def wing_of(module: str) -> str:
    if module in SHARED:
        return "shared"
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in ORDER:
        return parts[1]  # a wing, its face included
    return "contract"  # the root's working part (memory, render, the face); a module not yet in a wing too


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ENGINE.rglob("*.py")):
        out[".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")] = path
    return out


def _top_level_imports(name: str, path: Path, known: dict[str, Path]):
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    pending = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            pending += node.body + node.orelse
        elif isinstance(node, ast.Try):
            pending += node.body + [n for h in node.handlers for n in h.body] + node.orelse + node.finalbody
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in known:
                    yield a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                full = f"{base}.{a.name}"
                target = full if full in known else base
                if target in known and target != name:
                    yield target


def upward_imports() -> list[tuple[str, str]]:
    known = _modules()
    found = []
    for name, path in known.items():
        for target in _top_level_imports(name, path, known):
            a, b = wing_of(name), wing_of(target)
            if a in ORDER and b in ORDER and ORDER.index(b) > ORDER.index(a):
                found.append((name, target))
    return sorted(set(found))


def test_every_wing_has_a_face_saying_what_lives_there():
    for wing in ORDER:
        if wing in ("shared", "contract"):
            continue
        face = ENGINE / wing / "__init__.py"
        assert face.exists(), f"engine/{wing}/ has no __init__.py"
        assert ast.get_docstring(ast.parse(face.read_text(encoding="utf-8"))), f"engine/{wing}/__init__.py says nothing"


def test_the_root_holds_only_the_contract():
    root = sorted(p.name for p in ENGINE.glob("*.py"))
    assert len(root) <= 8, f"engine/ root holds {len(root)} modules: {root}"


def test_imports_run_one_way_between_wings():
    up = [pair for pair in upward_imports() if pair not in UP_ALLOWED]
    assert not up, "imports that run up the wings (move the name down, or say why in UP_ALLOWED): " + ", ".join(
        f"{a} -> {b}" for a, b in up)


def test_every_allowed_upward_import_is_still_there():
    stale = sorted(set(UP_ALLOWED) - set(upward_imports()))
    assert not stale, f"UP_ALLOWED names imports that no longer run up: {stale}"
