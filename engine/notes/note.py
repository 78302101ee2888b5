"""Reading one markdown note: its title, its label, its purpose, its sections.

A note is an *entry* when a `Search for:` line (also `**Search for:**`, `Buscar por:`)
stands directly under its title: only blank lines may come between. Everything else in the
note is prose for the text index; the label line never is, because the label is the
keyword scorer's corpus and indexing it twice would make one source look like two scorers
agreeing.

Markdown as notes are written (docs/labels.md, "What kb reads as markdown"):
- YAML front matter (a first line `---`, closed by `---` or `...`, every line between shaped
  like YAML) is data, not prose: it is not indexed, and a `# ` line in it is a YAML comment,
  not a heading. Its `title:` names a note that has no heading. Label, purpose and date lines
  are read in it as anywhere (a `date:` there is the note's date).
- A paragraph line underlined with `=` (level one) or `-` (level two, two or more) is a
  heading (setext), as every renderer shows it; the underline is not prose. Only the one line
  above is the heading's text (a renderer joins a longer paragraph: rare in notes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..rank.normalize import terms
from .proposal import marked_keys, unread_of
from .links import FENCE, WIKI  # one reading of a fence and a wiki link, shared with kb check
from .yamlscalar import one_line_scalar

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


def is_field_line(line: str) -> bool:
    """A line the parser reads as one of a note's fields (Search for, Exists to, a date):
    written one a line, and shown so (the reader keeps it on its own line)."""
    return ":" in line and bool(_LABEL.match(line) or _PURPOSE.match(line) or _DATE.match(line))


# The closing `#`s are stripped in code (`heading_text`): a lazy `(.*?)\s*#*\s*$` retries the
# whole tail at every character and takes hours on a long line of spaces.
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
# Markdown links to other notes: [text](relative/path.md#anchor) and [[wiki link]].
_MD_LINK = re.compile(r"\[[^\[\]]*\]\(\s*<?([^)\s>\[\]]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# A setext underline, and the lines that cannot be the text above one: indented code, a quote,
# a table row, html, a list item, a thematic break (CommonMark reads each of these as its own
# block, never as a heading's text).
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-{2,})[ \t]*$")
_NOT_SETEXT_TEXT = re.compile(r"^(?: {4}|\t)|^ {0,3}(?:[>|<]|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$)|(?:[-*_][ \t]*){3,}$)")
# Front matter: what a line between the fences may look like (a key, a list item, an indented
# value, a comment), so a note that opens with a rule and prose is not swallowed whole.
_YAML_LINE = re.compile(r"^(?:[ \t#]|-(?:\s|$)|[^\s:#][^:]*:(?:\s|$))")
_YAML_TITLE = re.compile(r"^title[ \t]*:[ \t]*(.*)$")
FRONT_MATTER_MAX_LINES = 200  # past this, a `---` block at the top is not front matter



def _is_fence(line: str) -> bool:
    # A substring test first: most lines hold no fence mark, and the pattern would be tried
    # on each of them (parsing is most of what an index build spends outside SQLite).
    return ("```" in line or "~~~" in line) and FENCE.match(line) is not None


SKILL_DIRS = frozenset({"skills", "protocols", "templates"})
TOOL_DIRS = frozenset({"tools"})


def front_matter_state(lines) -> int | None:
    """Over a note's first lines: how many the front matter takes (the closing line
    included), 0 when they hold none, None when they cannot tell yet (all YAML so far)."""
    if not lines:
        return None
    if lines[0].rstrip() != "---":
        return 0
    for i, line in enumerate(lines[1:], start=1):
        if line.rstrip() in ("---", "..."):
            return i + 1
        if i >= FRONT_MATTER_MAX_LINES or (line.strip() and not _YAML_LINE.match(line)):
            return 0
    return None


def front_matter_end(lines: list[str]) -> int:
    """How many lines the YAML front matter at the top takes (0 when there is none)."""
    return front_matter_state(lines) or 0


# A title is one line: a line break or tab a quoted YAML value spells (`\n`, `\t`) is a space.
# Written with chr() for the two separators: tests/test_clean.py keeps every control-character
# pattern in engine/clean.py, and this is a table of line breaks, not a safety pattern.
_ONE_LINE = str.maketrans({ch: " " for ch in "\n\r\t\v\f\x85" + chr(0x2028) + chr(0x2029)})


def front_matter_title(lines) -> str:
    """The `title:` of the front matter's lines, read as YAML reads a one-line value
    (engine/notes/yamlscalar.py: quotes and their escapes), or ""."""
    for line in lines:
        m = _YAML_TITLE.match(line)
        if m:
            return one_line_scalar(m.group(1)).translate(_ONE_LINE).strip()
    return ""


def setext_level(line: str) -> int:
    """1 or 2 when the line underlines the one above it (`===` / `---`), else 0."""
    if line[:4].lstrip()[:1] not in ("=", "-"):  # most lines: no pattern tried
        return 0
    m = _SETEXT_UNDERLINE.match(line)
    return 0 if m is None else 1 if m.group(1)[0] == "=" else 2


def setext_text(line: str) -> str | None:
    """The heading a line makes when underlined, or None when it cannot be one: blank, a
    label line, or a block of its own kind (the caller has ruled out fences and `#` headings)."""
    if not line.strip() or _NOT_SETEXT_TEXT.match(line) or setext_level(line) or (":" in line and _LABEL.match(line)):
        return None
    return line.strip()


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
    unread: tuple[str, ...] = ()  # keys kb label wrote that no person has read (engine/notes/proposal.py)

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
    problems: list[str] = []

    front = front_matter_end(lines)
    heads, underlines = _headings(lines, front)
    title, title_line = _title(lines, heads, front)
    label_line, label_under_title, keys = _label_under_title(lines, title_line, underlines)
    mark = _mark_under(lines, label_line) if label_under_title else None
    label_lines, label_line, purpose, date = _colon_lines(lines, label_line)
    if label_under_title and not keys:
        problems.append("the Search for: line has no keys")

    left_out = label_lines | underlines | ({label_line + 1} if mark is not None else set())
    sections = _sections(lines, title, left_out, heads, front)
    links = tuple(dict.fromkeys(_links(text)))
    return Note(
        relpath=relpath,
        title=title or front_matter_title(lines[1:front]) or PurePosixPath(relpath).stem,
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
        unread=unread_of(keys, mark),
    )


def _mark_under(lines: list[str], label_line: int | None) -> tuple[str, ...] | None:
    """The keys kb label's mark names, on the line directly under the label (engine/notes/proposal.py)."""
    if label_line is None or label_line + 1 >= len(lines):
        return None
    return marked_keys(lines[label_line + 1])


def _title(lines: list[str], heads: dict[int, tuple[int, str]], front: int) -> tuple[str, int | None]:
    """The title and its 0-based line, or ("", None)."""
    # The title is the first level-one heading, else a heading of any level that opens the note.
    # A heading after prose is a section (Obsidian titles such a note by its file name; an
    # event page's "## See also" under its directive named 22 of Textual's pages alike).
    first = next((i for i, (level, _) in heads.items() if level == 1), None)
    if first is None and heads:
        opener = next(iter(heads))
        first = opener if not any(lines[j].strip() for j in range(front, opener)) else None
    if first is not None:
        return heads[first][1], first
    return "", None


def _label_under_title(lines: list[str], title_line: int | None,
                       underlines: set[int]) -> tuple[int | None, bool, tuple[str, ...]]:
    """The label directly under the title: its 0-based line, whether there is one, its keys."""
    # The label counts only directly under the title; elsewhere it is reported, not used.
    if title_line is not None:
        j = title_line + 1 + (title_line + 1 in underlines)  # past an underline
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines):
            m = _LABEL.match(lines[j])
            if m:
                return j, True, split_keys(m.group(2))
    return None, False, ()


def _colon_lines(lines: list[str], label_line: int | None) -> tuple[set[int], int | None, str, str | None]:
    """Every label line, the first of them when none stands under the title, the first purpose
    and the first date."""
    purpose = ""
    date = None
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
    return label_lines, label_line, purpose, date


def _links(text: str) -> list[str]:
    out = []
    for m in _MD_LINK.finditer(text):
        target = m.group(1)
        if "://" in target or target.startswith(("mailto:", "#")):
            continue
        out.append(target.split("#", 1)[0])
    out.extend(m.group(1).strip() for m in WIKI.finditer(text))
    return [t for t in out if t]


def layout(lines: list[str]) -> tuple[int, dict[int, tuple[int, str]], set[int]]:
    """How a note's lines are laid out, as parse_note reads them: the front matter's length,
    the headings (line -> (level, text), in order) and the setext underlines. For readers
    that must agree with it (kb label's statistics and where it writes)."""
    front = front_matter_end(lines)
    return (front, *_headings(lines, front))


def _headings(lines: list[str], front: int) -> tuple[dict[int, tuple[int, str]], set[int]]:
    """Every heading below the front matter, outside fences, as line -> (level, text), in
    order; and the setext underlines (not prose)."""
    heads: dict[int, tuple[int, str]] = {}
    underlines: set[int] = set()
    in_fence = False
    # The last line that was neither a fence, inside one, a heading nor an underline. -2, not
    # -1: line 0's i - 1 is -1, and lines[-1] (the note's last line) became a heading's text.
    plain = -2
    for i in range(front, len(lines)):
        line = lines[i]
        first = line[:1]
        if first and first not in "#=-`~" and not first.isspace():
            plain = i  # most lines: prose, which no fence, heading or underline starts with
            continue
        if _is_fence(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _HEADING.match(line) if line[:1] == "#" else None
        if m:
            heads[i] = (len(m.group(1)), heading_text(m))
            continue
        level = setext_level(line) if plain == i - 1 else 0
        above = setext_text(lines[i - 1]) if level else None
        if above is not None:
            heads[i - 1] = (level, above)
            underlines.add(i)
            continue
        plain = i
    return heads, underlines


def _sections(lines: list[str], title: str, left_out: set[int], heads: dict[int, tuple[int, str]],
              front: int) -> tuple[Section, ...]:
    """Split at headings; each section's heading path names where it sits in the note. The
    front matter and the `left_out` lines (labels, underlines) are not prose."""
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    buf: list[str] = []
    start = front

    def path() -> str:
        return " > ".join(h for _, h in stack) or title

    def flush() -> None:
        body = "\n".join(buf).strip()
        if body or not sections:
            sections.append(Section(heading_path=path(), text=body, line=start + 1))

    for i in range(front, len(lines)):
        head = heads.get(i)
        if head:
            flush()
            buf = []
            start = i
            level = head[0]
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append(head)
            continue
        if i in left_out:
            continue
        buf.append(lines[i])
    flush()
    return tuple(s for s in sections if s.text)
