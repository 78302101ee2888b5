"""Proposing labels for notes that have none, or a thin one, from the notes themselves.

Pure functions: text in, proposals out; nothing here reads or writes a file (engine/review/labelcli.py
does). A key is drawn only from where the note's author said what the note is: its title, its
headings, its `> ...` description (or `Exists to:` line), the lead sentence of each example
("Create a symbolic link to a file:"), and its file name when that is a word; and from a
logged question a person chose this note for. Never from code, inline code, placeholders,
numbers or markup, and never from prose at large: keys drawn from a note's body make the
keyword scorer a second reading of the text the text leg already reads (seed 000: "one scorer
reading one source twice"). Every candidate is then asked alone of the keyword scorer over the
whole fleet, with everyone else's proposals in place (`settle`), and kept only when it reaches
its own note. Every key says where it came from.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import PurePosixPath

from ..rank.stopwords import STOPWORDS
from ..rank.catalogue import Catalogue, make_entry
from ..rank.gate import floor_for
from ..notes.links import FENCE  # one reading of a code fence, shared with kb check and the graph
from ..rank.normalize import terms, words
from ..notes.notefiles import content_problem
from ..notes.note import layout, parse_note
from ..notes.thin import is_thin  # W06's rule: the notes kb check calls thin are the ones widened

MAX_KEYS = 16  # a proposal a reader can check at a glance; they add the rest
MAX_HEADINGS = 6
NOTHING_TO_PROPOSE = "nothing to propose"  # a refusal reason, and the line kb label prints for it
MAX_PURPOSE_CHARS = 160
# A proposed key is a phrase a person types: the longest title in the four label corpora is 11
# words, the longest hand-written key in the demo 12. Past either cap a "key" (a paragraph set
# as a heading, a 20,000-word title) matches no question and buries the label line.
MAX_KEY_WORDS = 12
MAX_KEY_CHARS = 120
SINGULAR_MAX_TERMS = 3  # a name longer than this gets no singular variant

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


@dataclass(frozen=True)
class ProposedKey:
    key: str
    source: str  # title | heading | file name | phrase | word | miss log

    def to_json(self) -> dict:
        return {"key": self.key, "source": self.source}


@dataclass(frozen=True)
class Proposal:
    relpath: str
    title: str
    reason: str  # "no label" | "thin label"
    existing: tuple[str, ...]  # the keys already written, kept as they are
    keys: tuple[ProposedKey, ...]
    purpose: str | None  # a proposed `Exists to:` text, when the note has none
    digest: str  # sha256 of the bytes the proposal was made from: a changed note is refused
    can_write: bool = True
    why_not: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def label_line(self) -> str:
        return "Search for: " + ", ".join(k.key for k in self.keys)

    @property
    def purpose_line(self) -> str | None:
        return f"Exists to: {self.purpose}" if self.purpose else None

    def to_json(self) -> dict:
        return {
            "note": self.relpath,
            "title": self.title,
            "reason": self.reason,
            "existing": list(self.existing),
            "keys": [k.to_json() for k in self.keys],
            "purpose": self.purpose,
            "label_line": self.label_line,
            "purpose_line": self.purpose_line,
            "can_write": self.can_write,
            "why_not": self.why_not,
        }


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


def _unmarked(raw: str) -> str:
    """A title or heading as words: a link's text and never its target (`[x](y.md)` is "x"),
    no footnote reference, inline html, attribute list or emoji shortcode."""
    return _HEADING_MARKUP.sub(" ", _INLINE_MARKUP.sub(" ", link_texts(without_footnote_refs(raw))))


def _heading_name(raw: str) -> str:
    """A heading's words as written, without markup, a closing `#` run or a step number."""
    name = _SEQUENCE_MARK.sub("", _unmarked(raw).strip())
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


def _term_stream(lines: list[str]) -> list[str | None]:
    """Folded words with stopwords and line breaks as None, so a phrase never spans either."""
    out: list[str | None] = []
    for line in lines:
        for w in words(line):
            out.append(w if len(w) > 1 and w not in STOPWORDS and not w.isdigit() else None)
        out.append(None)
    return out


def _phrases(ws: list[str | None]) -> list[str]:
    """Two- and three-word runs of terms standing next to each other (None breaks a run)."""
    out = []
    for n in (2, 3):
        for i in range(len(ws) - n + 1):
            run = ws[i:i + n]
            if all(w for w in run) and len(set(run)) == n:
                out.append(" ".join(run))  # type: ignore[arg-type]
    return out


@dataclass
class FleetStats:
    """What the whole fleet says about a word: how many notes use it (df, prose and headings),
    how many notes carry a heading whole (heading_df), and which words and runs are a note's
    whole title or file name (that note is about them). Only sets per note are kept, never a
    note's words in order: a 16 MB note once cost 1.5 GB here as phrase counts."""

    n: int
    word_df: Counter
    heading_df: Counter = field(default_factory=Counter)
    named: Counter = field(default_factory=Counter)  # notes whose whole title or file name is a key
    name_words: Counter = field(default_factory=Counter)  # notes whose title or file name holds a word
    name_runs: Counter = field(default_factory=Counter)  # notes whose title or file name holds a 2-3 word run

    def named_elsewhere(self, key: str, own_names: set[str]) -> bool:
        """True when another note's whole title or file name is this key (its terms joined)."""
        return self.named[key] > (1 if key in own_names else 0)

    def in_other_names(self, word: str, own_words: set[str]) -> bool:
        """True when another note's title or file name holds this word."""
        return self.name_words[word] > (1 if word in own_words else 0)

    def in_other_titles(self, run: str, own_runs: set[str]) -> bool:
        """True when another note's title or file name holds this two- or three-word run."""
        return self.name_runs[run] > (1 if run in own_runs else 0)


def _name_of(relpath: str) -> str:
    """The file name as words; an index.md or README.md is named by its folder."""
    path = PurePosixPath(relpath)
    if path.stem.lower() in ("index", "readme"):
        return path.parent.name
    return path.stem


def _is_word_name(name: str) -> bool:
    """A file name is a key only when it is a word: `tar`, `symbolic-links`; not `0001`."""
    ts = terms(name)
    return bool(ts) and not any(t.isdigit() for t in ts)


def names(relpath: str, title: str) -> set[str]:
    """The note's whole title and whole file name, each as its terms joined by spaces."""
    out = set()
    for name in (title, _name_of(relpath)):
        t = terms(_unmarked(name))
        if t:
            out.add(" ".join(t))
    return out


def name_runs_of(own_names: set[str]) -> set[str]:
    """The two- and three-word runs inside a note's title and file name."""
    out = set()
    for name in own_names:
        ws = name.split()
        for n in (2, 3):
            out.update(" ".join(ws[i:i + n]) for i in range(len(ws) - n + 1))
    return out


def note_words(text: str) -> set[str]:
    """Every term of the note's prose and headings, as a set: what word_df counts."""
    out: set[str] = set()
    for line in prose_lines(text):
        out.update(w for w in words(line) if len(w) > 1 and w not in STOPWORDS)
    for _, h in headings(text):
        out.update(terms(h))
    return out


def fleet_stats(texts: dict[tuple[str, str], str]) -> FleetStats:
    """Over every note of the fleet, keyed by (base, path relative to the base)."""
    stats = FleetStats(len(texts), Counter())
    for (_, relpath), text in texts.items():
        add_to_stats(stats, relpath, text)
    return stats


def add_to_stats(stats: FleetStats, relpath: str, text: str) -> None:
    """One note's share of the fleet's statistics, stats.n aside (the caller counts notes)."""
    stats.word_df.update(note_words(text))
    stats.heading_df.update({" ".join(terms(h)) for _, h in headings(text)})
    own = names(relpath, parse_note(relpath, text).title)
    stats.named.update(own)
    stats.name_words.update({w for n in own for w in n.split()})
    stats.name_runs.update(name_runs_of(own))


def _singulars(word: str) -> list[str]:
    """Candidate singular forms of a plural word, English and Portuguese (accents folded):
    "widgets" -> "widget", "dependencies" -> "dependency", "validacoes" -> "validacao",
    "arquivos" -> "arquivo", "globais" -> "global". The caller keeps one the note uses."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith("ss"):
        return []
    out = []
    if word.endswith("oes") or word.endswith("aes"):
        out.append(word[:-3] + "ao")
    if word.endswith("ais") or word.endswith("eis") or word.endswith("ois"):
        out.append(word[:-2] + "l")
    if word.endswith("ies"):
        out.append(word[:-3] + "y")
    if word.endswith("es"):
        out.append(word[:-2])
    out.append(word[:-1])
    return out


def _base_verbs(word: str) -> list[str]:
    """Candidate base forms of a gerund opening a name, English and Portuguese: "adding" ->
    "add", "creating" -> "create", "running" -> "run", "testando" -> "testar", "incluindo" ->
    "incluir". The caller keeps one the note's prose uses."""
    if len(word) > 4 and word.endswith("ing"):
        stem = word[:-3]
        out = [stem[:-1]] if len(stem) > 2 and stem[-1] == stem[-2] else []
        return out + [stem + "e", stem]
    for ending, base in (("ando", "ar"), ("endo", "er"), ("indo", "ir")):
        if len(word) > 6 and word.endswith(ending):
            return [word[: -len(ending)] + base]
    return []


def asked_form(ws: list[str], prose_words: set[str]) -> str:
    """A name as a person asks for it: its plural words in the singular and an opening gerund
    as the bare verb, when the note's own prose uses those forms ("Adding dependencies" ->
    "add dependency", "Testando Dependências" -> "testar dependencia"). Empty when the name
    opens with no gerund whose bare verb the prose uses, or is longer than SINGULAR_MAX_TERMS."""
    if not ws or len([w for w in ws if w not in STOPWORDS]) > SINGULAR_MAX_TERMS:
        return ""
    verb = next((f for f in _base_verbs(ws[0]) if f in prose_words), None)
    if verb is None:
        return ""
    rest = singular(ws, prose_words).split()[1:] or ws[1:]
    return " ".join([verb, *rest])


def singular(ws: list[str], prose_words: set[str]) -> str:
    """A name with its plural words in the singular, when the note's own prose uses that form
    too ("Custom widgets" -> "custom widget", "Parâmetros de Consulta" -> "parametro de
    consulta"): a person asks for "a custom widget", and keys match whole words. Empty when
    no word changes (the caller offers nothing)."""
    if len([w for w in ws if w not in STOPWORDS]) > SINGULAR_MAX_TERMS:
        return ""  # a long heading is rarely asked whole: its variant would only take a slot
    out, changed = [], False
    for w in ws:
        form = next((f for f in _singulars(w) if f in prose_words), w)
        changed = changed or form != w
        out.append(form)
    return " ".join(out) if changed else ""


def _topicality(stats: FleetStats, tf: Counter, heading: str) -> float:
    """How much the note's own prose is about a heading's words: mean log(1 + uses) x idf."""
    ts = terms(heading)
    idf = lambda df: math.log((stats.n + 1) / (df + 0.5))  # noqa: E731
    return sum(math.log1p(tf[t]) * idf(stats.word_df[t]) for t in ts) / len(ts) if ts else 0.0


# Inline code and placeholders are never a key (`tar xf {{path}}` gave "source tar", "rx path").
_CODE_SPAN = re.compile(r"`[^`\n]*`|\{\{[^{}\n]*\}\}")
_QUOTE_MARK = re.compile(r"^\s*(>\s?)+")
_LIST_MARK = re.compile(r"^\s*([-*+]|\d+[.)])\s+")
_EMPHASIS = re.compile(r"[*_~]+")
# A description line that says where to read more is no description of the note.
_NOT_A_DESCRIPTION = re.compile(r"^(more information|see also|mais informa|note:|tip:)", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[:;,.()!?]|\s[-\u2013\u2014]\s")
MAX_LEAD_WORDS = 12  # a longer "lead" is a sentence of prose that happens to end in a colon
MAX_WHOLE_TERMS = 5  # a lead sentence or a clause of a description is offered whole up to this


def _clean(raw: str) -> str:
    """A title, heading or sentence as the words its author wrote: no inline code, placeholder,
    link target, footnote, html, emphasis or blockquote marker."""
    text = _QUOTE_MARK.sub("", _CODE_SPAN.sub(" ", raw))
    return _EMPHASIS.sub(" ", _unmarked(text))


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
            line = _CODE_SPAN.sub(" ; ", line)
        else:
            line = _PLACEHOLDER.sub(" ", line).replace("`", "")
        said = " ".join(_clean(line).split())
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
        said = " ".join(_clean(body).split())
        ws = words(said)
        if ws and ws[0] not in STOPWORDS and len(ws) <= MAX_LEAD_WORDS and not _SENTENCE_END.search(said):
            pending = said
    return out


def _phrase_keys(said: str, whole: bool) -> list[str]:
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
    out += _phrases(stream)
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


# How much a source says the note is about a phrase: a phrase several notes would take goes to
# the one that names it highest (its title over another's passing example), a tie to none.
SOURCE_RANK = {"chosen by a person": 6, "title": 5, "file name": 5, "title part": 4, "description": 4,
               "heading": 3, "example": 2}
CANDIDATE_CAP = 48  # what one note offers the fleet check; MAX_KEYS of them survive at most
NOTHING_DISTINCTIVE = ("nothing distinctive: each key its title, headings and examples offer "
                       "routes to another note when asked alone")
NO_SOURCE = "no phrase a person would type in its title, headings, description, examples or file name"


def propose(
    relpath: str,
    data: bytes,
    stats: FleetStats,
    chosen: list[str] = (),  # type: ignore[assignment]
) -> Proposal | None:
    """The candidate keys for one note, or None when its label is not thin (engine/notes/thin.py:
    W06's rule). Candidates only: `settle` keeps those that reach this note alone, with every
    other note's in place. `chosen` are logged questions a person picked this note for."""
    problem = content_problem(data)
    if problem:  # the index never reads it, so a label there would answer nothing
        return Proposal(relpath, PurePosixPath(relpath).stem, "no label", (), (), None, digest(data), False,
                        f"{problem}: kb does not index it")
    # A byte-order mark is not part of the first line, for kb's reader nor here (engine/notes/textfile.py).
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    note = parse_note(relpath, text)
    existing = note.keys if note.label_under_title else ()
    if note.is_entry and not is_thin(existing) and not chosen:
        return None  # a person's pick is added to any label, thin or not
    reason = "thin label" if existing else "no label"
    taken = {tuple(terms(k)) for k in existing}
    keys: list[ProposedKey] = []
    common = max(2, stats.n // 10)  # a word in a tenth of the fleet says little about this note

    def offer(key: str, source: str) -> None:
        key = " ".join(key.replace(",", " ").replace("`", " ").split())
        too_long = len(key) > MAX_KEY_CHARS or key.count(" ") >= MAX_KEY_WORDS
        if len(keys) >= CANDIDATE_CAP or not key or too_long or not searchable(key):
            return
        sig = tuple(terms(key))
        if sig in taken or all(t.isdigit() for t in sig):
            return
        # One word is a key only as the note's own name (or a person's choice): a heading's
        # "Keys" took "how do I handle a key press" for the data table. And not a word a tenth
        # of the fleet uses ("widgets", "app"): it would catch every question holding it.
        if len(sig) == 1 and stats.n > 1 and source != "chosen by a person":
            if source not in ("title", "file name") or stats.word_df[sig[0]] > common:
                return
        taken.add(sig)
        keys.append(ProposedKey(key, source))

    for q in chosen:
        offer(" ".join(terms(q)), "chosen by a person")
    body_words = note_words(text)
    title_words = " ".join(words(_clean(note.title))) if note.title else ""
    if title_words:
        offer(title_words, "title")
        offer(singular(title_words.split(), body_words), "title")
        offer(asked_form(title_words.split(), body_words), "title")
    if _is_word_name(_name_of(relpath)):
        offer(" ".join(words(_name_of(relpath))), "file name")
    said = _CODE_SPAN.sub(" ; ", note.purpose) if note.purpose else description(text, for_keys=True)
    if said:
        for clause in _CLAUSE_BREAK.split(said):
            for k in _phrase_keys(clause, whole=True):
                offer(k, "description")
    if title_words and len(terms(title_words)) >= 3:
        # A long title matches only whole; a person asks with a part of it.
        for run in _phrases(_term_stream([title_words])):
            if len(run.split()) == 2:
                offer(run, "title part")
    pointers = pointer_headings(text)
    hs = [_clean(h) for lvl, h in headings(text) if lvl in (2, 3) and h != note.title and h not in pointers]
    # A heading every note has ("Example", "Syntax") names no note: one rare word is needed.
    hs = [h for h in hs if stats.n <= 1 or any(stats.word_df[t] <= common for t in terms(h))]
    # Nor does one that a tenth of the notes carry whole ("Basic usage").
    hs = [h for h in hs if stats.n <= 1 or stats.heading_df[" ".join(terms(h))] <= common]
    if stats.n > 1 and hs:
        tf = Counter(w for line in prose_lines(text) for w in words(line))
        order = {h: i for i, h in reversed(list(enumerate(hs)))}
        hs = sorted(order, key=lambda h: (-_topicality(stats, tf, h), order[h]))
    for h in hs[:MAX_HEADINGS]:
        offer(" ".join(words(h)), "heading")
        offer(singular(words(h), body_words), "heading")
    for lead in example_leads(text):
        for k in _phrase_keys(lead, whole=True):
            offer(k, "example")

    purpose = None if note.purpose else first_sentence(text)
    can_write, why_not = True, ""
    if note.title_line is None:
        can_write, why_not = False, "no heading to put a label under: give the note a title first"
    elif note.label_line is not None and not note.label_under_title:
        can_write, why_not = False, f"a Search for: line stands at line {note.label_line}, not under the title: move it first"
    if not keys:
        can_write, why_not = False, why_not or NO_SOURCE
    return Proposal(relpath, note.title, reason, tuple(existing), tuple(keys), purpose, digest(data),
                    can_write, why_not)


def settle(candidates: dict[str, Proposal], entries: list = (), rounds: int = 12,  # type: ignore[assignment]
           stats: FleetStats | None = None) -> dict[str, Proposal]:
    """The proposals with only the keys that reach their own note alone.

    `candidates` maps a note's id (base/path) to its candidate proposal, `entries` are the
    catalogue entries of the notes already labelled and not proposed for. A phrase several notes
    offer goes to the one whose source names it highest (SOURCE_RANK: the subject, not a
    passing mention), a tie to none. Then every key is asked alone of the keyword scorer
    (engine/rank/catalogue.py, the seed's arithmetic) over the whole fleet with every other proposal
    in place, and kept only when its own note comes first, ahead of the next; dropping keys moves
    the idf, so this runs again until nothing changes. A key a person chose is always kept."""
    best: dict[tuple[str, ...], tuple[int, str | None]] = {}
    for nid, p in candidates.items():
        if not p.can_write:
            continue
        for k in p.keys:
            sig, rank = tuple(terms(k.key)), SOURCE_RANK.get(k.source, 0)
            held = best.get(sig)
            if held is None or rank > held[0]:
                best[sig] = (rank, nid)
            elif rank == held[0] and held[1] != nid:
                best[sig] = (rank, None)
    kept: dict[str, list[ProposedKey]] = {}
    for nid, p in candidates.items():
        if p.can_write:
            kept[nid] = [k for k in p.keys if k.source == "chosen by a person"
                         or best.get(tuple(terms(k.key)), (0, None))[1] == nid]
    claims: dict[str, str] = {}  # note id -> the common word its name would claim
    fixed = list(entries)
    for nid, p in candidates.items():  # a thin label that cannot be widened still routes
        if not p.can_write and p.existing:
            base, _, rel = nid.partition("/")
            fixed.append(make_entry(base, rel, p.title, "", "memory", tuple(p.existing)))
    touched: set[str] | None = None  # the words whose scores moved last round; None: all
    for _ in range(rounds):
        made, made_by_id = [], {}
        for nid, ks in kept.items():
            p = candidates[nid]
            base, _, rel = nid.partition("/")
            made.append(make_entry(base, rel, p.title, p.purpose or "", "memory",
                                   tuple(p.existing) + tuple(k.key for k in ks)))
            made_by_id[nid] = made[-1]
        cat = Catalogue(fixed + [e for e in made if e.keys])
        changed, moved = False, set()
        for nid, ks in kept.items():
            entry = made_by_id.get(nid)
            # After the first round only what a dropped key or note could move is asked again:
            # a key sharing no word with them keeps its ranking (but for N's share of every
            # idf). Asking all of them every round took 387 s over 7,258 pages.
            if touched is not None and not (entry.vocabulary & touched) and not any(
                    touched.intersection(terms(k.key)) for k in ks):
                continue
            alone = [k for k in ks if k.source == "chosen by a person" or _reaches(cat, k.key, nid)]
            if alone and stats is not None:
                word = _claims_a_common_word(cat, stats, nid, entry)
                if word:
                    claims[nid], alone = word, []
            if len(alone) != len(ks):
                dropped = [k for k in ks if k not in alone]
                moved.update(t for k in dropped for t in terms(k.key))
                if not alone:
                    moved.update(entry.vocabulary)  # the whole entry leaves the catalogue
                kept[nid], changed = alone, True
        if not changed:
            break
        touched = moved
    out = {}
    for nid, p in candidates.items():
        if not p.can_write:
            out[nid] = p
            continue
        ks = _ranked(kept[nid])[:MAX_KEYS]
        if ks:
            out[nid] = replace(p, keys=tuple(ks))
        elif nid in claims:
            out[nid] = replace(p, keys=(), can_write=False, why_not=(
                f"its name holds {claims[nid]!r}, a word in a tenth of the notes: labelled, it would be a "
                f"confident answer to every question holding that word (write its keys by hand if that is right)"))
        else:
            out[nid] = replace(p, keys=(), can_write=False, why_not=NOTHING_DISTINCTIVE)
    return out


def _claims_a_common_word(cat, stats: FleetStats, nid: str, entry) -> str | None:
    """A word of the note's title or file name that a tenth of the fleet's notes use, and that
    alone, asked of the scorer, makes this note a hit: once labelled, the seed's title and file
    name weights (3 + 3) would answer every question holding the word with this note
    ("how do I query widgets by id" -> the note titled "Widgets")."""
    if entry is None or stats.n <= 1:
        return None
    common = max(2, stats.n // 10)
    for w in sorted(entry.title_words | entry.stem_words):
        if stats.word_df[w] <= common:
            continue
        ranking = cat.score([[w]])
        if ranking and ranking.entry_at(0).id == nid and ranking.score_at(0) >= floor_for(cat.n):
            return w
    return None


def _reaches(cat, key: str, nid: str) -> bool:
    """Whether `key`, asked alone, ranks note `nid` first and ahead of the next."""
    ranking = cat.score([terms(key)])
    if not ranking or ranking.entry_at(0).id != nid:
        return False
    return len(ranking) < 2 or ranking.score_at(1) < ranking.score_at(0)


def _ranked(keys: list[ProposedKey]) -> list[ProposedKey]:
    """The strongest sources first, each in the order the note gave them (the cap cuts examples)."""
    return sorted(keys, key=lambda k: -SOURCE_RANK.get(k.source, 0))


def propose_fleet(texts: dict[tuple[str, str], bytes], chosen: dict[str, list[str]] | None = None,
                  entries: list = ()) -> dict[str, Proposal]:  # type: ignore[assignment]
    """Every note's settled proposal, keyed base/path; `texts` maps (base, path) to bytes."""
    decoded = {key: data.decode("utf-8", errors="replace").lstrip("\ufeff") for key, data in texts.items()}
    stats = fleet_stats(decoded)
    chosen = chosen or {}
    cands, labelled = {}, list(entries)
    for (base, rel), data in texts.items():
        p = propose(rel, data, stats, chosen.get(f"{base}/{rel}", []))
        if p is not None:
            cands[f"{base}/{rel}"] = p
            continue
        note = parse_note(rel, decoded[(base, rel)])
        if note.is_entry:  # a full label routes too: the proposals must reach past it
            labelled.append(make_entry(base, rel, note.title, note.purpose, note.species, note.keys))
    return settle(cands, labelled, stats=stats)


def apply(data: bytes, proposal: Proposal, *, merge: bool) -> bytes:
    """The note's bytes with the proposal written in, and no other byte changed.

    A note without a label gets `Search for:` (and `Exists to:` when proposed) on new lines
    directly under its title, in the note's own line ending. A note with a label gets the new
    keys appended to that line, and only with `merge`. Raises ValueError when it cannot be done.
    """
    if not proposal.can_write:
        raise ValueError(proposal.why_not)
    for key in proposal.keys:  # an edited key too (the labels screen): what is written reads back
        if "," in key.key or "\x00" in key.key or len(f"x{key.key}x".splitlines()) != 1:
            raise ValueError(f"the key {key.key!r} holds a comma, a NUL or a line break; nothing written")
    # The byte-order marks are dropped for reading only: they stay in the bytes written back.
    # Every leading one, as the indexer drops them (a second made the title unreadable here).
    bom = b""
    while data.startswith(b"\xef\xbb\xbf", len(bom)):
        bom += b"\xef\xbb\xbf"
    text = data[len(bom):].decode("utf-8", errors="surrogateescape")
    note = parse_note(proposal.relpath, text)
    # parse_note's lines, each with its own ending: str.splitlines breaks at "\r" alone, form
    # feeds and U+2028 too, so counting lines by b"\n" put the label under the wrong line
    # (after the prose of an old Mac note, or on a line of prose when merging).
    lines = [line.encode("utf-8", errors="surrogateescape") for line in text.splitlines(keepends=True)]
    new_keys = ", ".join(k.key for k in proposal.keys).encode("utf-8")
    if note.label_under_title:
        if not merge:
            raise ValueError("it has a label already: --merge adds keys to it, nothing replaces it")
        i = note.label_line - 1
        body, ending = _split_ending(lines[i])
        keys_end = len(body.rstrip())  # trailing space (a markdown hard break) stays after the keys
        sep = b", " if note.keys else b" "
        lines[i] = body[:keys_end] + sep + new_keys + body[keys_end:] + ending
        return bom + b"".join(lines)
    i = note.title_line - 1
    # An underlined title: the label goes under its underline. The parser's own underlines,
    # not "the title line starts with #": `#1 rule` underlined is a setext title.
    if i + 1 in layout(text.splitlines())[2]:
        i += 1
    _, ending = _split_ending(lines[i])
    eol = ending if ending in (b"\r\n", b"\n", b"\r") else (b"\r\n" if b"\r\n" in data else b"\n")
    insert = eol + b"Search for: " + new_keys + eol
    if proposal.purpose and not note.purpose:
        insert += b"Exists to: " + proposal.purpose.encode("utf-8") + eol
    head = bom + b"".join(lines[: i + 1])
    if not ending:  # the title is the last line and has no ending: give it one
        return head + eol + insert
    return head + insert + b"".join(lines[i + 1:])


def _split_ending(line: bytes) -> tuple[bytes, bytes]:
    """A line's bytes and its ending (one of the breaks str.splitlines knows, or none)."""
    text = line.decode("utf-8", errors="surrogateescape")
    body = text.splitlines()[0] if text else ""
    return body.encode("utf-8", errors="surrogateescape"), text[len(body):].encode("utf-8", errors="surrogateescape")
