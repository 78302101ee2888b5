"""Applying a proposed alias line: which logged questions it turns into hits, then writing it.

The misses screen shows the first before it does the second. The line is appended to the
fleet's kb-aliases.txt atomically; a line already there is not written twice, and nothing
else in the file changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .aliases import Alias
from .atomic import write_atomic
from .gate import verdict_for
from .normalize import terms


@dataclass(frozen=True)
class AliasEffect:
    question: str
    verdict_before: str
    verdict_with: str
    top_with: str | None


def alias_effect(memory, line: str, questions: list[str]) -> list[AliasEffect]:
    """Each question's verdict without and with `alias = canonical` (keyword scorer only,
    which is what the verdict comes from)."""
    alias, _, canonical = line.partition("=")
    extra = Alias(tuple(terms(alias)), tuple(terms(canonical)), 0)
    n = memory.snapshot().catalogue.n
    out = []
    for q in questions:
        before = memory.keyword_only(q)
        after = memory.keyword_only(q, extra_aliases=(extra,))
        out.append(AliasEffect(
            q, verdict_for(before[0].score if before else 0.0, n),
            verdict_for(after[0].score if after else 0.0, n), after[0].id if after else None,
        ))
    return out


def append_alias(path: Path, line: str) -> bool:
    """Add `line` at the end of the aliases file; False when it is there already."""
    if path.is_symlink():
        raise OSError(f"{path}: a symbolic link; not written through")
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = ""
    wanted = " ".join(line.split())
    if any(" ".join(x.split()) == wanted for x in current.splitlines()):
        return False
    sep = "" if not current or current.endswith("\n") else "\n"
    write_atomic(path, current + sep + line + "\n")
    return True
