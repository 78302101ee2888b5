"""Proposing labels for notes that have none, or a thin one, from the notes themselves.

Pure functions: text in, proposals out; nothing here reads or writes a file (engine/labelcli.py
does). A key is drawn from the note's title, its headings, its file name, the words and two-
or three-word phrases that set it apart from the rest of the fleet (tf x idf over every note's
prose, so a word every note has is never proposed), and the questions of the miss log whose
text search lands on it. Every key says where it came from. The words are the note's own, so
they are in the note's language.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath

from .stopwords import STOPWORDS
from .links import FENCE  # one reading of a code fence, shared with kb check and the graph
from .normalize import terms, words
from .notefiles import content_problem
from .notes import layout, parse_note
from .thin import is_thin  # W06's rule: the notes kb check calls thin are the ones widened

MAX_KEYS = 16  # a proposal a reader can check at a glance; they add the rest
MAX_VARIANTS = 8  # beside them, a name's singular or asked form ("add dependency"): no new subject
MAX_HEADINGS = 6
MAX_PHRASES = 4
MAX_WORDS = 6
NOTHING_TO_PROPOSE = "nothing to propose"  # a refusal reason, and the line kb label prints for it
MAX_PURPOSE_CHARS = 160
# A proposed key is a phrase a person types: the longest title in the four label corpora is 11
# words, the longest hand-written key in the demo 12. Past either cap a "key" (a paragraph set
# as a heading, a 20,000-word title) matches no question and buries the label line.
MAX_KEY_WORDS = 12
MAX_KEY_CHARS = 120
SINGULAR_MAX_TERMS = 3  # a name longer than this gets no singular variant
SHARE_OF_TOP_DENSITY = 0.5  # a word goes to the notes using it at least this share as densely as the densest

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
    front matter (the parser's reading of where those are, engine/notes.layout)."""
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


def _phrases(ws: list[str]) -> list[str]:
    """Two- and three-word runs of terms standing next to each other in the prose."""
    out = []
    for n in (2, 3):
        for i in range(len(ws) - n + 1):
            run = ws[i:i + n]
            if all(w for w in run) and len(set(run)) == n:  # None marks a stopword or a line break between terms
                out.append(" ".join(run))
    return out


def _term_stream(lines: list[str]) -> list[str | None]:
    """Folded words with stopwords and line breaks as None, so a phrase never spans either."""
    out: list[str | None] = []
    for line in lines:
        for w in words(line):
            out.append(w if len(w) > 1 and w not in STOPWORDS and not w.isdigit() else None)
        out.append(None)
    return out


@dataclass
class FleetStats:
    """What the whole fleet says about a word or phrase, so a note is offered only what sets
    it apart: how many notes use it (df), the highest density any one note uses it at (top:
    uses per thousand words of prose, so a long changelog does not outbid the note about
    it), and which words are a note's whole title or file name (that note is about them)."""

    n: int
    word_df: Counter
    phrase_df: Counter
    word_top: dict = field(default_factory=dict)
    phrase_top: dict = field(default_factory=dict)
    named: Counter = field(default_factory=Counter)  # notes whose whole title or file name is a key
    heading_df: Counter = field(default_factory=Counter)  # notes holding a heading, by its terms
    name_words: Counter = field(default_factory=Counter)  # notes whose title or file name holds a word
    name_runs: Counter = field(default_factory=Counter)  # notes whose title or file name holds a 2-3 word run
    fold: dict = field(default_factory=dict)  # plural -> singular, for phrases (plural_fold)

    def idf(self, df: int) -> float:
        return math.log((self.n + 1) / (df + 0.5))

    def named_elsewhere(self, key: str, own_names: set[str]) -> bool:
        """True when another note's whole title or file name is this key (its terms joined)."""
        return self.named[key] > (1 if key in own_names else 0)

    def in_other_names(self, word: str, own_words: set[str]) -> bool:
        """True when another note's title or file name holds this word."""
        return self.name_words[word] > (1 if word in own_words else 0)

    def in_other_titles(self, run: str, own_runs: set[str]) -> bool:
        """True when another note's title or file name holds this two- or three-word run."""
        return self.name_runs[run] > (1 if run in own_runs else 0)


def density(count: int, size: int) -> float:
    """Uses per thousand words of prose."""
    return 1000.0 * count / max(size, 1)


def _name_of(relpath: str) -> str:
    """The file name as words; an index.md or README.md is named by its folder."""
    path = PurePosixPath(relpath)
    if path.stem.lower() in ("index", "readme"):
        return path.parent.name
    return path.stem


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


def plural_fold(vocabulary: set[str]) -> dict[str, str]:
    """Each plural word whose singular the fleet's prose also uses, mapped to that singular, so
    "key presses" and "key press" count as one phrase: a note that says it in the plural is
    not outbid by a blog post that says it twice in the singular."""
    out = {}
    for w in vocabulary:
        form = next((f for f in _singulars(w) if f in vocabulary), None)
        if form:
            out[w] = form
    return out


def folded(stream: list[str | None], fold: dict[str, str]) -> list[str | None]:
    return [fold.get(w, w) if w else w for w in stream]


def fleet_stats(texts: dict[tuple[str, str], str]) -> FleetStats:
    """Over every note of the fleet, keyed by (base, path relative to the base)."""
    word_df: Counter = Counter()
    phrase_df: Counter = Counter()
    word_top: dict[str, float] = {}
    phrase_top: dict[str, float] = {}
    named: Counter = Counter()
    heading_df: Counter = Counter()
    name_words: Counter = Counter()
    name_runs: Counter = Counter()
    streams = {key: _term_stream(prose_lines(text)) for key, text in texts.items()}
    fold = plural_fold({w for stream in streams.values() for w in stream if w})
    for key, text in texts.items():
        relpath, stream = key[1], streams[key]
        # Heading words count too: "Syntax" heading every style note is common, prose or not.
        word_df.update({w for w in stream if w} | {t for _, h in headings(text) for t in terms(h)})
        phrases = Counter(_phrases(folded(stream, fold)))
        phrase_df.update(phrases.keys())
        size = len(stream)
        for w, c in Counter(w for w in stream if w).items():
            word_top[w] = max(word_top.get(w, 0.0), density(c, size))
        for p, c in phrases.items():
            phrase_top[p] = max(phrase_top.get(p, 0.0), density(c, size))
        heading_df.update({" ".join(terms(h)) for _, h in headings(text)})
        own = names(relpath, parse_note(relpath, text).title)
        named.update(own)
        name_words.update({w for n in own for w in n.split()})
        name_runs.update(name_runs_of(own))
    return FleetStats(len(texts), word_df, phrase_df, word_top, phrase_top, named, heading_df, name_words, name_runs, fold)


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
    return sum(math.log1p(tf[t]) * stats.idf(stats.word_df[t]) for t in ts) / len(ts) if ts else 0.0


def first_sentence(text: str) -> str | None:
    """The note's first sentence of prose, as a proposed purpose; None when it has no prose."""
    para: list[str] = []
    for line in prose_lines(text):
        s = line.strip()
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
    if len(sentence) > MAX_PURPOSE_CHARS:
        sentence = sentence[:MAX_PURPOSE_CHARS].rsplit(" ", 1)[0] + " ..."
    return sentence if terms(sentence) else None


def propose(
    relpath: str,
    data: bytes,
    stats: FleetStats,
    miss_questions: list[str] = (),  # type: ignore[assignment]
) -> Proposal | None:
    """The proposal for one note, or None when its label is not thin (engine/thin.py: W06's rule)."""
    problem = content_problem(data)
    if problem:  # the index never reads it, so a label there would answer nothing
        return Proposal(relpath, PurePosixPath(relpath).stem, "no label", (), (), None, digest(data), False,
                        f"{problem}: kb does not index it")
    # A byte-order mark is not part of the first line, for kb's reader nor here (engine/textfile.py).
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    note = parse_note(relpath, text)
    existing = note.keys if note.label_under_title else ()
    if note.is_entry and not is_thin(existing):
        return None
    reason = "thin label" if existing else "no label"
    taken = {tuple(terms(k)) for k in existing}
    keys: list[ProposedKey] = []
    common = max(2, stats.n // 10)  # a word in a tenth of the fleet says little about this note
    own_names = names(relpath, note.title)
    own_runs = name_runs_of(own_names)
    own_words = {w for n in own_names for w in n.split()}

    variants = 0

    def offer(key: str, source: str, variant: bool = False) -> None:
        nonlocal variants
        key = " ".join(key.replace(",", " ").replace("`", " ").split())
        full = variants >= MAX_VARIANTS if variant else len(keys) - variants >= MAX_KEYS
        too_long = len(key) > MAX_KEY_CHARS or key.count(" ") >= MAX_KEY_WORDS
        if full or not key or too_long or not searchable(key):
            return
        sig = tuple(terms(key))
        if sig in taken:
            return
        if len(sig) == 1 and stats.n > 1:
            # One word that a tenth of the fleet uses ("widgets", "app") would catch every
            # question holding it, whatever it asks: it is proposed only inside a phrase.
            if stats.word_df[sig[0]] > common:
                return
            # A word of another note's title or file name ("yield" beside "Dependências com
            # yield") scores there from both; as this note's key it ties or beats that note.
            if source not in ("title", "file name", "miss log") and stats.in_other_names(sig[0], own_words):
                return
        # A word or phrase that is another note's whole title or file name ("width" beside
        # width.md, "arquivos estaticos" beside the note titled "Arquivos Estáticos") is that
        # note's: here it would only make the wrong note win.
        if source not in ("title", "file name") and stats.n > 1 and stats.named_elsewhere(" ".join(sig), own_names):
            return
        # A phrase inside another note's title ("dados sql" in "Bancos de Dados SQL") is
        # that note's subject: a stub that mentions it twice must not take it.
        if len(sig) > 1 and source not in ("title", "file name", "miss log") and stats.in_other_titles(" ".join(sig), own_runs):
            return
        taken.add(sig)
        keys.append(ProposedKey(key, source))
        variants += variant

    stream = _term_stream(prose_lines(text))
    tf = Counter(w for w in stream if w)  # the note's own usage: singular() and the heading order ask it
    prose_words = set(tf)
    title_words = " ".join(words(_unmarked(note.title))) if note.title else ""
    if title_words:
        offer(title_words, "title")
        offer(singular(title_words.split(), prose_words), "title", variant=True)
        # Only a title's asked form: a heading's ("override template" under a blog's
        # "Overriding templates") won questions its note does not answer.
        offer(asked_form(title_words.split(), prose_words), "title", variant=True)
    offer(" ".join(words(_name_of(relpath))), "file name")
    if title_words and len(terms(title_words)) >= 3:
        # A long title matches only whole; a person asks with a part of it ("banco de dados
        # sql" for "Bancos de Dados SQL (Relacionais)"): its two-word runs, never across a
        # stopword, unless another note is named by them.
        for run in _phrases(_term_stream([title_words])):
            if len(run.split()) == 2:
                offer(run, "title part")
    for q in miss_questions:
        offer(" ".join(terms(q)), "miss log")
    pointers = pointer_headings(text)
    hs = [h for lvl, h in headings(text) if lvl in (2, 3) and h != note.title and h not in pointers]
    # A heading every note has ("Example", "Syntax") names no note: one rare word is needed.
    hs = [h for h in hs if stats.n <= 1 or any(stats.word_df[t] <= common for t in terms(h))]
    # Nor does one that a tenth of the notes carry whole ("Basic usage").
    hs = [h for h in hs if stats.n <= 1 or stats.heading_df[" ".join(terms(h))] <= common]
    if stats.n > 1:
        # The headings the note's own prose is most about come first, not the first six in
        # the file: "Custom widgets" before "Customizing the tooltip" in a guide to widgets.
        order = {h: i for i, h in reversed(list(enumerate(hs)))}
        hs = sorted(order, key=lambda h: (-_topicality(stats, tf, h), order[h]))
    for h in hs[:MAX_HEADINGS]:
        offer(" ".join(words(h)), "heading")
        offer(singular(words(h), prose_words), "heading", variant=True)

    if stats.n > 1:
        half = common
        # A word or phrase is offered only to the notes that use it densest (at least half
        # the fleet's highest density): a note mentioning "key press" twice in passing must
        # not take it from the one about key presses.
        size = len(stream)

        def dense(c: int, top: float) -> bool:
            return density(c, size) >= SHARE_OF_TOP_DENSITY * top

        counts = Counter(_phrases(folded(stream, stats.fold)))
        scored = sorted(
            ((c * stats.idf(stats.phrase_df[p]), p) for p, c in counts.items()
             if c >= 2 and stats.phrase_df[p] <= half and dense(c, stats.phrase_top[p])),
            key=lambda t: (-t[0], t[1]),
        )
        for _, p in scored[:MAX_PHRASES]:
            offer(p, "phrase")
        # Single words only from the note's headings (any level), ranked by use x idf: from
        # prose at large they were "around", "whether", "ll", words that name nothing and
        # made the wrong note win. Not a word of a title or file name of several words: it
        # scores there already, and as a key too it let "Search: better, faster, smaller"
        # claim every question with "smaller" (a one-word title is a key as the title).
        in_names = set(terms(note.title)) | set(terms(_name_of(relpath)))
        from_headings = {t for _, h in headings(text) if h != note.title and h not in pointers for t in terms(h)} - in_names
        wcounts = Counter({w: c for w, c in tf.items() if w in from_headings})
        scored_w = sorted(
            ((c * stats.idf(stats.word_df[w]), w) for w, c in wcounts.items()
             if c >= 2 and stats.word_df[w] <= half and not w.isdigit() and dense(c, stats.word_top[w])),
            key=lambda t: (-t[0], t[1]),
        )
        # Nor a word of a heading already proposed: the heading scores when a question holds it
        # whole, and the word alone caught every question holding it ("warning" of "Version
        # warning" took a question about call-out boxes with a warning), as a title's word would.
        in_heading_keys = {t for k in keys if k.source == "heading" for t in terms(k.key)}
        for _, w in [x for x in scored_w if x[1] not in in_heading_keys][:MAX_WORDS]:
            offer(w, "word")

    purpose = None if note.purpose else first_sentence(text)
    can_write, why_not = True, ""
    if note.title_line is None:
        can_write, why_not = False, "no heading to put a label under: give the note a title first"
    elif note.label_line is not None and not note.label_under_title:
        can_write, why_not = False, f"a Search for: line stands at line {note.label_line}, not under the title: move it first"
    if not keys:
        can_write, why_not = False, why_not or NOTHING_TO_PROPOSE
    return Proposal(relpath, note.title, reason, tuple(existing), tuple(keys), purpose, digest(data),
                    can_write, why_not)


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
