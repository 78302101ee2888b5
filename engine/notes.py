"""Reading one markdown note: its title, its label, its purpose, its sections.

A note is an *entry* when a `Search for:` line (also `**Search for:**`, `Buscar por:`)
stands directly under its title: only blank lines may come between. Everything else in the
note is prose for the text index; the label line never is, because the label is the
keyword scorer's corpus and indexing it twice would make one source look like two scorers
agreeing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .normalize import terms

# No two unbounded runs of one class sit side by side in these patterns (`\s*\s*`, `[^\]]*`
# starting at every `[`): a hostile line of a megabyte must cost linear time, not hours.
_LABEL = re.compile(
    r"^\s*(?:[-*]\s+)?(?:(?:\*\*|__)\s*)?(search\s+for|buscar\s+por)\s*(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:|:)\s*(.*)$",
    re.IGNORECASE,
)
_PURPOSE = re.compile(
    r"^\s*(?:[-*]\s+)?(?:(?:\*\*|__)\s*)?(exists\s+to|existe\s+para)\s*(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:|:)\s*(.*)$",
    re.IGNORECASE,
)
_DATE = re.compile(
    r"^\s*(?:(?:\*\*|__)\s*)?(date|updated|data|atualizado)\s*(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:|:)\s*(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?)",
    re.IGNORECASE,
)
# The closing `#`s are stripped in code (`heading_text`): a lazy `(.*?)\s*#*\s*$` retries the
# whole tail at every character and takes hours on a long line of spaces.
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# Markdown links to other notes: [text](relative/path.md#anchor) and [[wiki link]].
_MD_LINK = re.compile(r"\[[^\[\]]*\]\(\s*<?([^)\s>\[\]]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_WIKI_LINK = re.compile(r"\[\[([^\[\]|#]+)(?:#[^\[\]|]*)?(?:\|[^\[\]]*)?\]\]")



def _is_fence(line: str) -> bool:
    # A substring test first: most lines hold no fence mark, and the pattern would be tried
    # on each of them (parsing is most of what an index build spends outside SQLite).
    return ("```" in line or "~~~" in line) and _FENCE.match(line) is not None


SKILL_DIRS = frozenset({"skills", "protocols", "templates"})
TOOL_DIRS = frozenset({"tools"})
# A map is a reading list for people; the catalogue never consults it.
MAP_NAMES = frozenset({"map.md", "_map.md"})


def heading_text(m: re.Match) -> str:
    """A heading's text without its closing `#` sequence or surrounding space."""
    return m.group(2).rstrip().rstrip("#").strip()


def species_of(relpath: str) -> str:
    """memory / skills / tools from the path, carried nowhere as data."""
    parts = PurePosixPath(relpath).parts
    top = parts[0].lower() if len(parts) > 1 else ""
    if top in SKILL_DIRS:
        return "skills"
    if top in TOOL_DIRS:
        return "tools"
    return "memory"


def is_map_file(relpath: str) -> bool:
    return "/" not in relpath and relpath.lower() in MAP_NAMES


@dataclass(frozen=True)
class Section:
    """A heading's stretch of a note."""

    heading_path: str  # "Title > Section > Subsection"
    text: str  # prose with the label line removed
    line: int  # 1-based line of the section's first line


@dataclass(frozen=True)
class Note:
    """A parsed markdown note: its label, its sections, its links."""

    relpath: str
    title: str
    keys: tuple[str, ...]  # as written, backticks stripped
    purpose: str
    is_entry: bool
    label_line: int | None  # 1-based line of the `Search for:` line, wherever it stood
    label_under_title: bool
    title_line: int | None
    sections: tuple[Section, ...]
    links: tuple[str, ...] = ()  # link targets as written (relative paths or wiki names)
    date: str | None = None
    species: str = "memory"
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def stem_words(self) -> list[str]:
        return terms(PurePosixPath(self.relpath).stem)


def split_keys(raw: str) -> tuple[str, ...]:
    keys = []
    for part in raw.split(","):
        k = part.strip().strip("`").strip().strip("*").strip()
        if k:
            keys.append(k)
    return tuple(keys)


def parse_note(relpath: str, text: str) -> Note:
    """Parse a note's text. Never raises on odd markdown: odd markdown is still prose."""
    lines = text.splitlines()
    title = ""
    title_line = None
    label_line = None
    label_under_title = False
    keys: tuple[str, ...] = ()
    purpose = ""
    date = None
    problems: list[str] = []

    # The title is the first level-one heading, else the first heading of any level.
    in_fence = False
    first_heading = None
    for i, line in enumerate(lines):
        if _is_fence(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _HEADING.match(line) if line[:1] == "#" else None
        if m:
            if len(m.group(1)) == 1:
                title, title_line = heading_text(m), i
                break
            if first_heading is None:
                first_heading = (heading_text(m), i)
    if title_line is None and first_heading is not None:
        title, title_line = first_heading

    # The label counts only directly under the title; elsewhere it is reported, not used.
    if title_line is not None:
        j = title_line + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines):
            m = _LABEL.match(lines[j])
            if m:
                label_line, label_under_title = j, True
                keys = split_keys(m.group(2))
    label_lines = set()
    for i, line in enumerate(lines):
        if ":" not in line:
            continue  # the label, purpose and date lines all hold a colon
        if _LABEL.match(line):
            label_lines.add(i)
            if label_line is None:
                label_line = i
        elif not purpose:
            pm = _PURPOSE.match(line)
            if pm:
                purpose = pm.group(2).strip().strip("*").strip()
        if date is None:
            dm = _DATE.match(line)
            if dm:
                date = dm.group(2)
    if label_under_title and not keys:
        problems.append("the Search for: line has no keys")

    sections = _sections(lines, title, label_lines)
    links = tuple(dict.fromkeys(_links(text)))
    return Note(
        relpath=relpath,
        title=title or PurePosixPath(relpath).stem,
        keys=keys,
        purpose=purpose,
        is_entry=label_under_title and bool(keys),
        label_line=None if label_line is None else label_line + 1,
        label_under_title=label_under_title,
        title_line=None if title_line is None else title_line + 1,
        sections=sections,
        links=links,
        date=date,
        species=species_of(relpath),
        problems=tuple(problems),
    )


def _links(text: str) -> list[str]:
    out = []
    for m in _MD_LINK.finditer(text):
        target = m.group(1)
        if "://" in target or target.startswith(("mailto:", "#")):
            continue
        out.append(target.split("#", 1)[0])
    out.extend(m.group(1).strip() for m in _WIKI_LINK.finditer(text))
    return [t for t in out if t]


def _sections(lines: list[str], title: str, label_lines: set[int]) -> tuple[Section, ...]:
    """Split at headings; each section's heading path names where it sits in the note."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    in_fence = False

    def path() -> str:
        return " > ".join(h for _, h in stack) or title

    def flush(end_start: int) -> None:
        body = "\n".join(buf).strip()
        if body or not sections:
            sections.append(Section(heading_path=path(), text=body, line=start + 1))

    for i, line in enumerate(lines):
        if _is_fence(line):
            in_fence = not in_fence
        m = None if in_fence or line[:1] != "#" else _HEADING.match(line)
        if m:
            flush(i)
            buf = []
            start = i
            level = len(m.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading_text(m)))
            continue
        if i in label_lines:
            continue
        buf.append(line)
    flush(len(lines))
    return tuple(s for s in sections if s.text)
