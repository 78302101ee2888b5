"""The code's shape in figures: `python3 -m kbtools.shape_report [ROOT ...] [--rev REV ...]`.

For each tree (a checkout folder, or a git revision of this repository read with `git archive`)
prints its runtime modules with their line counts, the longest functions and the median
function length, so a refactor's closing note can show before and after from one command.
Counts lines as written (comments and docstrings included): what a reader has to scroll.
"""

from __future__ import annotations

import argparse
import ast
import io
import statistics
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("engine", "kbtui")
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Function:
    where: str  # module path:qualified name
    lines: int


def _functions(rel: str, source: str) -> list[Function]:
    out: list[Function] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out.append(Function(f"{rel}:{name}", child.end_lineno - child.lineno + 1))
                walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")

    walk(ast.parse(source), "")
    return out


def _sources_in_folder(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for pkg in PACKAGES for p in sorted((root / pkg).rglob("*.py"))}


def _sources_at_revision(rev: str) -> dict[str, str]:
    raw = subprocess.run(["git", "-C", str(REPO), "archive", rev, *PACKAGES], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        return {m.name: tar.extractfile(m).read().decode("utf-8")
                for m in sorted(tar.getmembers(), key=lambda m: m.name) if m.isfile() and m.name.endswith(".py")}


def report(label: str, sources: dict[str, str], longest: int, modules_under: str | None) -> str:
    functions = [f for rel, text in sources.items() for f in _functions(rel, text)]
    functions.sort(key=lambda f: (-f.lines, f.where))
    lines = [f"== {label}: {len(sources)} modules, {sum(t.count(chr(10)) for t in sources.values()):,} lines, "
             f"{len(functions)} functions, median {statistics.median(f.lines for f in functions):g} lines"]
    shown = [rel for rel in sources if modules_under is None or rel.startswith(modules_under)]
    lines += [f"  {text.count(chr(10)):5}  {rel}" for rel, text in ((r, sources[r]) for r in shown)]
    lines.append(f"  longest {longest} functions:")
    lines += [f"  {f.lines:5}  {f.where}" for f in functions[:longest]]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="*", type=Path, help="checkout folders (default: this one)")
    ap.add_argument("--rev", action="append", default=[], help="a git revision of this repository")
    ap.add_argument("--longest", type=int, default=10)
    ap.add_argument("--modules-under", default=None, help="list only modules whose path starts so (e.g. engine/text)")
    args = ap.parse_args()
    for rev in args.rev:
        print(report(rev, _sources_at_revision(rev), args.longest, args.modules_under))
    for root in args.roots or ([] if args.rev else [REPO]):
        print(report(str(root), _sources_in_folder(root), args.longest, args.modules_under))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
