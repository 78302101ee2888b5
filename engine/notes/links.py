"""Links between notes, as written: relative markdown links and [[wiki links]], line by line.

One reading, shared by the purpose graph (engine/stages/purpose/links.py resolves what this finds)
and by `kb check` (which reports the ones that point nowhere, by line). Links inside fenced
or inline code are examples, not links; URLs, in-page anchors and images are not links to
notes. Every pattern excludes the bracket it starts with, so a line of a megabyte of `[` is
read in one pass, never in a time that grows with its square.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

FENCE = re.compile(r"^\s*(```|~~~)")
# [text](target "title"), not ![image](...); the target may be wrapped in <...>.
_MD_LINK = re.compile(r"(?<!!)\[[^\[\]]*\]\(\s*<?([^)\s>\[\]]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# [label]: target, a reference-style link definition.
_REF_DEF = re.compile(r"^\s{0,3}\[[^\[\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
# [[target]], [[target#heading]], [[target|shown as]].
WIKI = re.compile(r"\[\[([^\[\]|#]+)(?:#[^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_INLINE_CODE = re.compile(r"`[^`\n]*`")


@dataclass(frozen=True)
class Link:
    kind: str  # "markdown" or "wiki"
    target: str  # as written, fragment and query removed, percent-decoding applied


def clean_target(target: str) -> str | None:
    """A relative target without its #fragment or ?query; None for URLs and in-page anchors."""
    if _SCHEME.match(target) or target.startswith(("#", "//")):
        return None
    target = target.split("#", 1)[0].split("?", 1)[0]
    return unquote(target) or None


def links_in_line(line: str) -> list[Link]:
    """The links on one line outside fenced code (the caller tracks fences), once each."""
    if "[" not in line:
        return []
    line = _INLINE_CODE.sub("", line)
    out: dict[Link, None] = {}
    targets = [m.group(1) for m in _MD_LINK.finditer(line)]
    ref = _REF_DEF.match(line)
    if ref:
        targets.append(ref.group(1))
    for t in targets:
        t = clean_target(t)
        if t:
            out[Link("markdown", t)] = None
    for m in WIKI.finditer(line):
        t = m.group(1).strip()
        if t:
            out[Link("wiki", t)] = None
    return list(out)


def extract_links(text: str) -> tuple[Link, ...]:
    """Every link in a note, in order, once each; fenced code skipped."""
    out: dict[Link, None] = {}
    in_fence = False
    for line in text.splitlines():
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            for link in links_in_line(line):
                out[link] = None
    return tuple(out)
