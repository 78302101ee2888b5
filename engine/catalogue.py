"""The keyword scorer: the labels, the title, the file name and the purpose line.

Per entry, the exact rules of "How the Catalogue Ranks":
- a one-word key scores W_KEYWORD x idf(word) when the question has the word;
- a multi-word key scores W_PHRASE x mean idf(its words) when its normalised form appears
  whole in the normalised question; a phrase does not lend its words to the one-word keys,
  but a one-word key the entry also carries still scores beside the phrase (the seed's 66.88
  for "how much protein per meal" is two phrases plus `protein` as key, title, stem, purpose);
- each question word among the title's words adds W_TITLE x idf, among the file name's
  words W_STEM x idf, among the purpose's words W_PURPOSE x idf; these add to the key score.
idf(w) = ln(1 + N / (1 + df(w))), N the fleet's entries, df(w) the entries whose vocabulary
(one-word keys, title, stem and purpose words) holds w.

The catalogue is immutable once built: the engine swaps a whole new one in when the notes
change, so a thread scoring a question never sees half of an update.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from .normalize import terms

W_KEYWORD = 6.0  # a hand-written key: the strongest single-word signal
W_PHRASE = 10.0  # a multi-word key found whole: the strongest signal a key can give
W_TITLE = 3.0  # a label outranks a title...
W_STEM = 3.0  # ...and the file name counts as much as the title
W_PURPOSE = 1.0  # ...which outranks a sentence that happened to mention the word

# Joins question segments (the question, then each alias expansion) so that a phrase key
# can match inside one segment and never across two.
SEGMENT_BREAK = " \x00 "


@dataclass(frozen=True)
class Entry:
    base: str
    path: str
    title: str
    purpose: str
    species: str
    keys: tuple[str, ...]
    one_word_keys: frozenset[str]
    phrases: tuple[tuple[str, tuple[str, ...]], ...]  # (key as written, its terms)
    title_words: frozenset[str]
    stem_words: frozenset[str]
    purpose_words: frozenset[str]

    @property
    def id(self) -> str:
        return f"{self.base}/{self.path}"

    @property
    def vocabulary(self) -> frozenset[str]:
        return self.one_word_keys | self.title_words | self.stem_words | self.purpose_words


def make_entry(base: str, path: str, title: str, purpose: str, species: str, keys: tuple[str, ...]) -> Entry:
    one: set[str] = set()
    phrases: list[tuple[str, tuple[str, ...]]] = []
    for k in keys:
        t = tuple(terms(k))
        if len(t) == 1:
            one.add(t[0])
        elif len(t) > 1:
            phrases.append((k.strip(), t))
    return Entry(
        base=base,
        path=path,
        title=title,
        purpose=purpose,
        species=species,
        keys=keys,
        one_word_keys=frozenset(one),
        phrases=tuple(phrases),
        title_words=frozenset(terms(title)),
        stem_words=frozenset(terms(_stem(path))),
        purpose_words=frozenset(terms(purpose)),
    )


def _stem(path: str) -> str:
    """PurePosixPath(path).stem for an index's clean relative path, without building a Path
    (a fifth of the catalogue's build at 5,000 entries)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


@dataclass(frozen=True)
class Scored:
    entry: Entry
    score: float
    matched: tuple[str, ...]
    terms: tuple[tuple[str, str, float, float], ...]  # (word or phrase, why, weight, idf)


def idf_for(n: int, df: int) -> float:
    return math.log(1.0 + n / (1.0 + df))


def idf_unique(n: int) -> float:
    """idf of a key exactly one note carries: the heaviest a single key can be at size n."""
    return idf_for(n, 1)


class Catalogue:
    """Every entry of the fleet, with an inverted index from word to the entries it scores in."""

    def __init__(self, entries: list[Entry]):
        self.entries: tuple[Entry, ...] = tuple(sorted(entries, key=lambda e: e.id))
        self.n = len(self.entries)
        vocabularies = [e.vocabulary for e in self.entries]  # a union of four sets: made once
        df: dict[str, int] = defaultdict(int)
        for vocabulary in vocabularies:
            for w in vocabulary:
                df[w] += 1
        self.df = dict(df)
        self._idf: dict[str, float] = {}
        # word -> [(entry index, is a one-word key, title+stem+purpose weight, _WHY mask)]
        postings: dict[str, list[tuple[int, bool, float, int]]] = defaultdict(list)
        # first word of a phrase -> [(entry index, phrase as written, phrase terms, " terms ")]
        phrase_index: dict[str, list[tuple[int, str, tuple[str, ...], str]]] = defaultdict(list)
        for i, e in enumerate(self.entries):
            for w in vocabularies[i]:
                in_title, in_stem, in_purpose = w in e.title_words, w in e.stem_words, w in e.purpose_words
                other = (W_TITLE if in_title else 0.0) + (W_STEM if in_stem else 0.0) + (W_PURPOSE if in_purpose else 0.0)
                postings[w].append((i, w in e.one_word_keys, other, in_title | in_stem << 1 | in_purpose << 2))
            for written, t in e.phrases:
                phrase_index[t[0]].append((i, written, t, " " + " ".join(t) + " "))
        self._postings = dict(postings)
        self._phrases = dict(phrase_index)
        self._keys_written: tuple[str, ...] | None = None

    def idf(self, w: str) -> float:
        v = self._idf.get(w)
        if v is None:
            v = idf_for(self.n, self.df.get(w, 0))
            self._idf[w] = v
        return v

    def vocabulary_keys(self) -> list[tuple[str, Entry]]:
        """Every key as written, with its entry (for the suggester and kb check)."""
        return [(k, e) for e in self.entries for k in e.keys]

    def keys_as_written(self) -> tuple[str, ...]:
        """Every key as written, in entry order: built once per catalogue, the same tuple after.

        The miss path hands it to the suggester on every refusal; rebuilding ~40,000 pairs
        each time (6,000 entries) was most of a miss's cost and most of the garbage the
        cycle collector then had to walk.
        """
        keys = self._keys_written
        if keys is None:
            keys = self._keys_written = tuple(k for e in self.entries for k in e.keys)
        return keys

    def score(self, segments: list[list[str]]) -> list[Scored]:
        """Rank entries for a question given as segments of terms (question, then expansions).

        Ties order by path; only entries that scored appear.
        """
        seq = [t for seg in segments for t in seg]
        joined = " " + SEGMENT_BREAK.join(" ".join(seg) for seg in segments) + " "
        unique = list(dict.fromkeys(seq))
        # Per entry index: its score, what it matched, and the arithmetic, in the order the
        # seed adds them (phrases first, then words, each in question order), so every sum
        # is the same float, bit for bit, however the loop below is arranged.
        scores: dict[int, float] = {}
        matched: dict[int, list[str]] = {}
        parts: dict[int, list[tuple[str, str, float, float]]] = {}
        idf_of = self.idf
        for w in unique:
            for i, written, t, padded in self._phrases.get(w, ()):
                if padded not in joined:
                    continue
                m = matched.get(i)
                if m is None:
                    m = matched[i] = []
                    parts[i] = []
                    scores[i] = 0.0
                elif written in m:
                    continue
                mean_idf = sum(idf_of(x) for x in t) / len(t)
                scores[i] += W_PHRASE * mean_idf
                m.append(written)
                parts[i].append((written, _PHRASE_WHY, W_PHRASE, mean_idf))
        for w in unique:
            plist = self._postings.get(w)
            if not plist:
                continue
            idf = idf_of(w)
            for i, is_key, other, mask in plist:
                if is_key:
                    weight = W_KEYWORD + other
                    why = _WHY[mask | _KEY_BIT]
                elif other:
                    weight = other
                    why = _WHY[mask]
                else:
                    continue
                s = scores.get(i)
                if s is None:
                    scores[i] = weight * idf
                    matched[i] = [w]
                    parts[i] = [(w, why, weight, idf)]
                else:
                    scores[i] = s + weight * idf
                    matched[i].append(w)
                    parts[i].append((w, why, weight, idf))
        # Entries are held in id order, so the index breaks a tie exactly as the path does.
        order = sorted(scores, key=lambda i: (-scores[i], i))
        entries = self.entries
        return [Scored(entries[i], scores[i], tuple(matched[i]), tuple(parts[i])) for i in order if scores[i] > 0]


def _why_text(mask: int) -> str:
    bits = []
    if mask & _KEY_BIT:
        bits.append(f"key {W_KEYWORD:g}")
    if mask & 1:
        bits.append(f"title {W_TITLE:g}")
    if mask & 2:
        bits.append(f"stem {W_STEM:g}")
    if mask & 4:
        bits.append(f"purpose {W_PURPOSE:g}")
    return " + ".join(bits)


# The "why" of a word's weight has sixteen spellings (key, title, stem, purpose: in or out),
# so they are written once here rather than once per matching entry per question.
_KEY_BIT = 8
_WHY: tuple[str, ...] = tuple(_why_text(m) for m in range(16))
_PHRASE_WHY = f"phrase {W_PHRASE:g}"
