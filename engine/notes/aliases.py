"""kb-aliases.txt: `alias = canonical`, one per line, written after a real question missed.

Expansion is additive: the original words always survive, so a wrong alias can add noise
and never remove signal. One code path expands for both scorers, so an alias can never
reach one of them and not the other.
"""

from __future__ import annotations

from pathlib import Path

from ..rank.normalize import terms
from ..shared.record import record
from .textfile import TooLarge, read_regular_text, text_lines

# Bounds on a file a repository may carry (docs/hardening.md, round 8): 100,000 aliases are
# about 4 MB; an alias names a phrase; a question's expansion stays near a question's size.
MAX_ALIASES_BYTES = 16 << 20
MAX_CANONICAL_TERMS = 32
MAX_ADDED_TERMS = 512


@record
class Alias:
    """One line of kb-aliases.txt: these words also mean those."""

    alias: tuple[str, ...]
    canonical: tuple[str, ...]
    line: int


def read_aliases(path: Path) -> tuple[list[Alias], list[tuple[int, str]]]:
    """The aliases in force, and (line, what is wrong) per line that could not be used;
    line 0 when the file itself cannot be read. `kb check` reports these at their line."""
    try:
        # a folder, or a FIFO whose read would block forever: refused; a padded file read no further
        text = read_regular_text(path, max_bytes=MAX_ALIASES_BYTES)
    except FileNotFoundError:
        return [], []
    except TooLarge as e:
        return [], [(0, f"{e}; not read (100,000 aliases are about 4 MB)")]
    except (OSError, UnicodeDecodeError) as e:
        return [], [(0, f"cannot read ({getattr(e, 'strerror', None) or e})")]
    out, problems = [], []
    for n, raw in enumerate(text_lines(text), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            problems.append((n, "not `alias = canonical`"))
            continue
        a, c = (part.strip() for part in line.split("=", 1))
        at, ct = tuple(terms(a)), tuple(terms(c))
        if not at or not ct:
            problems.append((n, "an alias or canonical made only of stopwords"))
            continue
        if len(ct) > MAX_CANONICAL_TERMS:
            problems.append((n, f"a canonical of {len(ct):,} words; an alias calls in at most {MAX_CANONICAL_TERMS}"))
            continue
        out.append(Alias(at, ct, n))
    return out, problems


def load_aliases(path: Path) -> tuple[list[Alias], list[str]]:
    """The aliases in force, and one problem line ("path:line: what") per line not used."""
    aliases, problems = read_aliases(path)
    return aliases, [f"{path}:{n}: {what}" if n else f"{path}: {what}" for n, what in problems]


def expand(question_terms: list[str], aliases: list[Alias]) -> list[list[str]]:
    """The question as segments: its own terms, then each canonical its aliases call in."""
    segments = [list(question_terms)]
    joined = " " + " ".join(question_terms) + " "
    added = 0
    for a in aliases:
        if " " + " ".join(a.alias) + " " in joined:
            added += len(a.canonical)
            if added > MAX_ADDED_TERMS:  # the first aliases in the file's order; the rest add nothing
                break
            segments.append(list(a.canonical))
    return segments
