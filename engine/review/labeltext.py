"""A note's text read the way `kb label` draws keys from it: its prose lines, headings, links,
description, example leads and first sentence, each without code, markup or placeholders.

Pure functions over a note's text (engine/review/label.py proposes from what they return).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..rank.stopwords import STOPWORDS
from ..notes.links import FENCE  # one reading of a code fence, shared with kb check and the graph
from ..rank.normalize import terms, words
from ..notes.note import layout

MAX_PURPOSE_CHARS = 160

# Lines that are not prose: tables, html, admonitions, link references, images, front matter.
_NOT_PROSE = re.compile(r"^(    |\t)|^\s*(\||<|!!!|\?\?\?|:::|--8<--|\[[^\]]*\]:|!\[|---|\{|=== )")
# Inline html and entities (`&lt;`, `<a href=...>`) are markup, not words of the note.
_INLINE_MARKUP = re.compile(r"<[^<>\n]{0,200}>|&#?\w{1,10};")
# A footnote reference (`[^1]`) is no word of the note: it left "documentation.^1" in a purpose.
# Read as `\[\^[^\]\s]*\]`, but each run taken whole, closed or not: the pattern scanned to the
# end of the run from every `[^` in it, and 100,000 of them on a line took minutes.
_FOOTNOTE_RUN = re.compile(r"\[\^[^\]\s]*(\])?")
# "Step 3. " or "Passo 1: " before a heading numbers a sequence; the rest names the topic.
# As a key, "step" made a post of numbered steps win "build my first app step by step".
_SEQUENCE_MARK = re.compile(r"^[^\W\d_]+ \d+[.:)]\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
# Not words of a heading: an attribute list (`{ #id .class }`) and emoji shortcodes (`:rocket:`).
_HEADING_MARKUP = re.compile(r"\{[^{}\n]*\}|:[a-z0-9][a-z0-9_+-]*:")


def searchable(key: str) -> bool:
    """W07's rule, asked before proposing: a key must survive the stopwords as written. One that
    collapses to nothing, or to one word of several, is never proposed."""
    kept = terms(key)
    if not kept:
        return False
    return len(kept) > 1 or kept[0] == " ".join(words(key))


@lru_cache(maxsize=256)
def _lines_and_layout(text: str) -> tuple[list[str], tuple[int, dict[int, tuple[int, str]], set[int]]]:
    """A note's lines and the parser's layout of them: asked for several times per note (its
    prose, its headings, for the fleet's statistics and for its proposal), made once."""
    lines = text.splitlines()
    return lines, layout(lines)


def without_footnote_refs(text: str) -> str:
    """`text` without its footnote references (`[^1]`)."""
    if "[^" not in text:
        return text
    return _FOOTNOTE_RUN.sub(lambda m: "" if m.group(1) else m.group(), text)


def link_texts(text: str) -> str:
    r"""A link keeps its text, never its target or brackets: each `[text](url)`, `![alt](src)`,
    `[text][ref]` and `[text]` in `text` as its text alone. This is the pattern
    `!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])?` replaced by its group, read in one pass:
    the pattern scanned to the end of the text from every `[` with no `]` after it (and
    every `(` with no `)`), and a title of 200,000 brackets held `kb label` for hours."""
    if "[" not in text:
        return text
    found: dict[str, int] = {}  # the next `]` / `)` at or after the last place asked; -1: none left

    def next_at(ch: str, at: int) -> int:
        pos = found.get(ch, -2)
        if pos != -1 and pos < at:
            pos = found[ch] = text.find(ch, at)
        return pos

    out, i = [], 0
    while (j := text.find("[", i)) >= 0:
        k = next_at("]", j + 1)
        if k < 0:
            break  # no `]` after this `[`, nor after any later one: no more links
        start = j - 1 if j > i and text[j - 1] == "!" else j
        out += (text[i:start], text[j + 1:k])
        i = k + 1
        after = text[i:i + 1]
        if after in ("(", "["):  # the target, or the reference, when it is closed
            end = next_at(")" if after == "(" else "]", i + 1)
            if end >= 0:
                i = end + 1
    out.append(text[i:])
    return "".join(out)


def prose_lines(text: str) -> list[str]:
    """The note's prose: no code blocks, no headings (`#` or underlined), no tables, html or
    front matter (the parser's reading of where those are, engine/notes/note.layout)."""
    out, in_fence = [], False
    lines, (front, heads, underlines) = _lines_and_layout(text)
    for i in range(front, len(lines)):
        line = lines[i]
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or i in heads or i in underlines or _NOT_PROSE.match(line):
            continue
        out.append(_INLINE_MARKUP.sub(" ", link_texts(without_footnote_refs(line))))
    return out


def unmarked(raw: str) -> str:
    """A title or heading as words: a link's text and never its target (`[x](y.md)` is "x"),
    no footnote reference, inline html, attribute list or emoji shortcode."""
    return _HEADING_MARKUP.sub(" ", _INLINE_MARKUP.sub(" ", link_texts(without_footnote_refs(raw))))


def _heading_name(raw: str) -> str:
    """A heading's words as written, without markup, a closing `#` run or a step number."""
    name = _SEQUENCE_MARK.sub("", unmarked(raw).strip())
    return " ".join(name.rstrip().rstrip("#").split())


def headings(text: str) -> list[tuple[int, str]]:
    """The note's headings as the parser finds them (`#` and underlined), each (level, name)."""
    return [(level, _heading_name(raw)) for level, raw in _lines_and_layout(text)[1][1].values()]


# A link to a local note: `](path.md)` or `](path.md#part)`, no scheme (`https:`) before it.
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_TARGET_RUN = re.compile(r"[^)\s]*")
# ASCII letters lowered, every other character kept: the same length (str.lower turns U+0130
# into two characters), and `.md` is matched by nothing but its ASCII spellings anyway.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def links_a_local_note(line: str) -> bool:
    r"""Whether `line` holds a link to a local note: what a search for the pattern
    `\]\((?![a-z][a-z0-9+.-]*:)[^)\s]*\.md(?:#[^)\s]*)?\)` (ignoring case) finds, read in one
    pass. The pattern backtracked over every `.md` in the rest of the line from every `](`:
    `](x.md` repeated 80,000 times took minutes. A target runs to the first `)` or blank
    after its `](`; every `](` inside that run ends at the same place, so the run is read once."""
    low = line.translate(_ASCII_LOWER)
    i = low.find("](")
    while i >= 0:
        end = _TARGET_RUN.match(low, i + 2).end()
        if end < len(low) and low[end] == ")":  # closed: each `](` in the run starts a target
            anchor = low.rfind(".md#", i + 2, end)
            j = i
            while 0 <= j < end:
                start = j + 2
                if ((low.endswith(".md", start, end) or anchor >= start)
                        and _SCHEME.match(line, start, end) is None):
                    return True
                j = low.find("](", j + 1, end)
        i = low.find("](", end)
    return False
POINTER_MAX_WORDS = 60


def pointer_headings(text: str) -> set[str]:
    """Headings whose section only sends the reader to another note: a short paragraph (at
    most POINTER_MAX_WORDS words) holding a link to a .md file. Such a heading ("Tags de
    Documentação" in a page of recipes linking to the page about tags) names the other
    note's subject, not this one's."""
    out: set[str] = set()
    if ".md" not in text:
        return out  # no link to a note: nothing to point to (and most notes end here)
    lines, (front, heads, underlines) = _lines_and_layout(text)  # `#` and underlined, as the parser reads them
    current, size, linked, in_fence = None, 0, False, False

    def close() -> None:
        if current is not None and linked and size <= POINTER_MAX_WORDS:
            out.add(current)

    for i in range(front, len(lines)):
        line = lines[i]
        if FENCE.match(line):
            in_fence = not in_fence
            size += POINTER_MAX_WORDS + 1  # a section with code of its own is no pointer
            continue
        if in_fence or i in underlines:
            continue
        if i in heads:
            close()
            current, size, linked = _heading_name(heads[i][1]), 0, False
            continue
        if current is None:
            continue
        linked = linked or (".md" in line and links_a_local_note(line))
        size += len(line.split())  # a rough count does: the bound is loose
    close()
    return out


def term_stream(lines: list[str]) -> list[str | None]:
    """Folded words with stopwords and line breaks as None, so a phrase never spans either."""
    out: list[str | None] = []
    for line in lines:
        for w in words(line):
            out.append(w if len(w) > 1 and w not in STOPWORDS and not w.isdigit() else None)
        out.append(None)
    return out


def phrases(ws: list[str | None]) -> list[str]:
    """Two- and three-word runs of terms standing next to each other (None breaks a run)."""
    out = []
    for n in (2, 3):
        for i in range(len(ws) - n + 1):
            run = ws[i:i + n]
            if all(w for w in run) and len(set(run)) == n:
                out.append(" ".join(run))  # type: ignore[arg-type]
    return out



# Inline code and placeholders are never a key (`tar xf {{path}}` gave "source tar", "rx path").
CODE_SPAN = re.compile(r"`[^`\n]*`|\{\{[^{}\n]*\}\}")
_QUOTE_MARK = re.compile(r"^\s*(>\s?)+")
_LIST_MARK = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
_EMPHASIS = re.compile(r"[*_~]+")
# A description line that says where to read more is no description of the note.
_NOT_A_DESCRIPTION = re.compile(r"^(more information|see also|mais informa|note:|tip:)", re.IGNORECASE)
CLAUSE_BREAK = re.compile(r"[:;,.()!?]|\s[-\u2013\u2014]\s")
MAX_LEAD_WORDS = 12  # a longer "lead" is a sentence of prose that happens to end in a colon
MAX_WHOLE_TERMS = 5  # a lead sentence or a clause of a description is offered whole up to this


def cleaned(raw: str) -> str:
    """A title, heading or sentence as the words its author wrote: no inline code, placeholder,
    link target, footnote, html, emphasis or blockquote marker."""
    text = _QUOTE_MARK.sub("", CODE_SPAN.sub(" ", raw))
    return _EMPHASIS.sub(" ", unmarked(text))


def description(text: str, for_keys: bool = False) -> str | None:
    """The note's `> ...` description (tldr's first lines, many docs' summary): the quoted lines
    at the top of its prose, without the `>` marker and without a "More information" line.
    As an `Exists to:` text inline code keeps its words (`such as gzip or bzip2`; dropped, it
    read "such as or ."); `for_keys`, each code span breaks the clause instead, so no key holds
    or straddles code ("using `regex`es" gave the key "using es")."""
    lines, (front, heads, underlines) = _lines_and_layout(text)
    out: list[str] = []
    for i in range(front, len(lines)):
        line = lines[i]
        if i in heads or i in underlines or not line.strip() or _LABEL_OR_PURPOSE.match(line):
            if out and not line.strip():
                continue
            if i in heads and out:
                break
            continue
        if not _QUOTE_MARK.match(line):
            break
        if for_keys:
            line = CODE_SPAN.sub(" ; ", line)
        else:
            line = _PLACEHOLDER.sub(" ", line).replace("`", "")
        said = " ".join(cleaned(line).split())
        if said and not _NOT_A_DESCRIPTION.match(said):
            out.append(said)
    return " ".join(out) or None


_PLACEHOLDER = re.compile(r"\{\{[^{}\n]*\}\}")


_LABEL_OR_PURPOSE = re.compile(r"^\s*(search for|exists to|date|updated)\s*:", re.IGNORECASE)


def example_leads(text: str) -> list[str]:
    """The lead sentence of each example: a line of prose ending in a colon whose next line is
    code ("- Create a symbolic link to a file:" above `ln -s ...`), cleaned of its markup."""
    lines, (front, heads, underlines) = _lines_and_layout(text)
    out, in_fence, pending = [], False, None
    for i in range(front, len(lines)):
        line = lines[i]
        if FENCE.match(line):
            if not in_fence and pending:
                out.append(pending)
            in_fence, pending = not in_fence, None
            continue
        if in_fence or not line.strip():
            continue
        stripped = line.strip()
        is_code = stripped.startswith("`") and stripped.endswith("`") or line.startswith(("    ", "\t"))
        if is_code:
            if pending:
                out.append(pending)
            pending = None
            continue
        pending = None
        if i in heads or i in underlines or _NOT_PROSE.match(line):
            continue
        unquoted = _QUOTE_MARK.sub("", stripped)
        body = _LIST_MARK.sub("", unquoted)
        # A lead is a whole list item or paragraph of one line: the tail of a wrapped paragraph
        # ("row under the current then supply this key:") says nothing about the note.
        starts_block = body != unquoted or i == front or not lines[i - 1].strip() or (i - 1) in heads
        if not (starts_block and body.endswith(":")) or _LABEL_OR_PURPOSE.match(body):
            continue
        body = body[:-1].split("`", 1)[0]  # before any inline code: what follows leans on the code
        said = " ".join(cleaned(body).split())
        ws = words(said)
        if ws and ws[0] not in STOPWORDS and len(ws) <= MAX_LEAD_WORDS and not _SENTENCE_END.search(said):
            pending = said
    return out


def phrase_keys(said: str, whole: bool) -> list[str]:
    """Keys from one sentence or clause as a person types them: the whole when short (and
    `whole`), its opening three terms (the task: "create a symbolic link"), and every run of
    two or three terms standing next to each other with no stopword between ("symbolic link").
    Never a run holding a number."""
    ws = words(said)
    pos = [i for i, w in enumerate(ws) if len(w) > 1 and w not in STOPWORDS]
    if not pos:
        return []
    out = []
    if whole and len(pos) <= MAX_WHOLE_TERMS:
        out.append(" ".join(ws[pos[0]:pos[-1] + 1]))
    if len(pos) > 3:
        out.append(" ".join(ws[pos[0]:pos[2] + 1]))
    stream = [w if len(w) > 1 and w not in STOPWORDS else None for w in ws]
    out += phrases(stream)
    return [k for k in out if not any(w.isdigit() for w in k.split())]


def first_sentence(text: str) -> str | None:
    """The note's description, else its first sentence of prose, as a proposed purpose; None
    when it has neither."""
    said = description(text)
    if said:
        return _shortened(said)
    para: list[str] = []
    for line in prose_lines(text):
        s = _QUOTE_MARK.sub("", line).strip()
        if _LABEL_OR_PURPOSE.match(s):
            continue  # a thin label's own line is no sentence about the note
        if not s:
            if para:
                break
            continue
        if re.match(r"^([-*+]|\d+\.)\s", s) and not para:
            continue  # a list before any paragraph is navigation, not a statement of purpose
        para.append(s)
    if not para:
        return None
    joined = " ".join(para)
    sentence = _SENTENCE_END.split(joined, maxsplit=1)[0].strip()
    sentence = re.sub(r"[`*_]", "", sentence)
    return _shortened(sentence)


def _shortened(sentence: str) -> str | None:
    if len(sentence) > MAX_PURPOSE_CHARS:
        sentence = sentence[:MAX_PURPOSE_CHARS].rsplit(" ", 1)[0] + " ..."
    return sentence if terms(sentence) else None
