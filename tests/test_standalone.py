"""The repository stands alone: nothing a person who clones it reads points outside it."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Paths to material that lives beside the repository on the machines it was written on, and
# is never shipped: a reader who clones the repository cannot follow them.
OUTSIDE = re.compile(r"\.\./shared|DESIGN\.md|TEXTUAL-NOTES|/work/|seeds/")


def _read_by_people() -> list[Path]:
    files = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for folder in ("engine", "kbtui", "kbtools", "tests", "examples", ".ci"):
        root = REPO / folder
        if root.is_dir():
            files += [p for p in sorted(root.rglob("*")) if p.suffix in {".py", ".tcss", ".md", ".txt", ""} and p.is_file()]
    return [p for p in files if p.name != Path(__file__).name and "__pycache__" not in p.parts]


def test_no_path_outside_the_repository_is_named():
    offenders = []
    for path in _read_by_people():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{n}: {line.strip()[:100]}")
    assert offenders == []


def test_the_readme_links_the_docs_that_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)]+)\)", readme)
    assert "docs/ranking.md" in links and "docs/decisions.md" in links
    assert [link for link in links if not (REPO / link).is_file()] == []
