"""What the whole fleet says about a word (FleetStats), and a name as a person asks for it.

`kb label` judges a candidate key by these counts (a word in a tenth of the notes names none of
them) and offers a title's singular and bare-verb forms when the note's own prose uses them.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..rank.stopwords import STOPWORDS
from ..rank.normalize import terms, words
from ..notes.note import parse_note
from .labeltext import headings, prose_lines, unmarked

SINGULAR_MAX_TERMS = 3  # a name longer than this gets no singular variant


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


def name_of(relpath: str) -> str:
    """The file name as words; an index.md or README.md is named by its folder."""
    path = PurePosixPath(relpath)
    if path.stem.lower() in ("index", "readme"):
        return path.parent.name
    return path.stem


def is_word_name(name: str) -> bool:
    """A file name is a key only when it is a word: `tar`, `symbolic-links`; not `0001`."""
    ts = terms(name)
    return bool(ts) and not any(t.isdigit() for t in ts)


def names(relpath: str, title: str) -> set[str]:
    """The note's whole title and whole file name, each as its terms joined by spaces."""
    out = set()
    for name in (title, name_of(relpath)):
        t = terms(unmarked(name))
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


def topicality(stats: FleetStats, tf: Counter, heading: str) -> float:
    """How much the note's own prose is about a heading's words: mean log(1 + uses) x idf."""
    ts = terms(heading)
    idf = lambda df: math.log((stats.n + 1) / (df + 0.5))  # noqa: E731
    return sum(math.log1p(tf[t]) * idf(stats.word_df[t]) for t in ts) / len(ts) if ts else 0.0
