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
from typing import TYPE_CHECKING

from .lazylist import LazyList
from .normalize import terms
from ..shared.record import record

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .suggest import Speller

W_KEYWORD = 6.0  # a hand-written key: the strongest single-word signal
W_PHRASE = 10.0  # a multi-word key found whole: the strongest signal a key can give
W_TITLE = 3.0  # a label outranks a title...
W_STEM = 3.0  # ...and the file name counts as much as the title
W_PURPOSE = 1.0  # ...which outranks a sentence that happened to mention the word

# Joins question segments (the question, then each alias expansion) so that a phrase key
# can match inside one segment and never across two.
SEGMENT_BREAK = " \x00 "


@record
class Entry:
    """One labelled note as the keyword scorer reads it."""

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


@record
class Scored:
    """An entry with its score, what it matched and the arithmetic behind it."""

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
        ordered: tuple[Entry, ...] = tuple(sorted(entries, key=lambda e: e.id))
        vocabularies = [e.vocabulary for e in ordered]  # a union of four sets: made once
        df: dict[str, int] = defaultdict(int)
        for vocabulary in vocabularies:
            for w in vocabulary:
                df[w] += 1
        # word -> [(entry index, is a one-word key, title+stem+purpose weight, _WHY mask)]
        postings: dict[str, list[tuple[int, bool, float, int]]] = defaultdict(list)
        # first word of a phrase -> [(entry index, phrase as written, phrase terms, " terms ")]
        phrase_index: dict[str, list[tuple[int, str, tuple[str, ...], str]]] = defaultdict(list)
        for i, e in enumerate(ordered):
            for w in vocabularies[i]:
                in_title, in_stem, in_purpose = w in e.title_words, w in e.stem_words, w in e.purpose_words
                other = (W_TITLE if in_title else 0.0) + (W_STEM if in_stem else 0.0) + (W_PURPOSE if in_purpose else 0.0)
                postings[w].append((i, w in e.one_word_keys, other, in_title | in_stem << 1 | in_purpose << 2))
            for written, t in e.phrases:
                phrase_index[t[0]].append((i, written, t, " " + " ".join(t) + " "))
        self.hold_index(ordered, dict(df), dict(postings), dict(phrase_index))
        self.ids: tuple[str, ...] = tuple(e.id for e in self.entries)
        self.bases: tuple[str, ...] = tuple(e.base for e in self.entries)
        self.species: tuple[str, ...] = tuple(e.species for e in self.entries)
        self.groups: tuple[int, ...] = tuple(self.group_id(b, s) for b, s in zip(self.bases, self.species))

    def hold_index(self, entries: Sequence[Entry], df: Mapping[str, int], postings: Mapping, phrases: Mapping) -> None:
        """Score over these entries (ordered by id) and this inverted index: made above from the
        entries, or decoded word by word from the opening caches (engine/index/opening_reader.py's
        OpeningCatalogue, which passes mappings of its own). postings: word -> [(entry index, is
        a one-word key, title+stem+purpose weight, _WHY mask)]; phrases: first word of a phrase
        -> [(entry index, phrase as written, phrase terms, " terms ")]."""
        self.entries, self.n, self.df = entries, len(entries), df
        self._idf: dict[str, float] = {}
        self._postings, self._phrases = postings, phrases
        # The same postings as the scorer reads them, made per word on first use:
        # word -> (entry indexes, weights), a one-word key's 6 plus the word's title, stem and
        # purpose weights there.
        self._weights: dict[str, tuple[tuple[int, ...], tuple[float, ...]]] = {}
        self._contributions: dict[str, dict[int, float]] = {}
        self._phrase_pairs: dict[str, dict] = {}
        self._keys_written: tuple[str, ...] | None = None
        # Each entry's (base, species) as a small number, named in group_names: the fold reads
        # one per ranked entry, and numbers hash and count faster than pairs of strings.
        self.group_names: list[tuple[str, str]] = []
        self._group_of: dict[tuple[str, str], int] = {}

    def index_by_word(self) -> dict[str, tuple[list, list]]:
        """word -> (its postings, the phrases it begins), every word's: what hold_index takes
        back, kept per base in the opening cache (engine/index/opening_data.py)."""
        return {w: (self._postings.get(w, []), self._phrases.get(w, [])) for w in self._postings.keys() | self._phrases.keys()}

    def group_id(self, base: str, species: str) -> int:
        """The number standing for (base, species) in `groups`, made on first use."""
        g = self._group_of.get((base, species))
        if g is None:
            g = self._group_of[(base, species)] = len(self.group_names)
            self.group_names.append((base, species))
        return g

    def idf(self, w: str) -> float:
        v = self._idf.get(w)
        if v is None:
            v = idf_for(self.n, self.df.get(w, 0))
            self._idf[w] = v
        return v

    def _weights_of(self, w: str) -> tuple[tuple[int, ...], tuple[float, ...]]:
        got = self._weights.get(w)
        if got is None:
            kept = [(i, W_KEYWORD + other if is_key else other) for i, is_key, other, _mask in self._postings.get(w, ())
                    if is_key or other]
            got = self._weights[w] = (tuple(i for i, _ in kept), tuple(x for _, x in kept))
        return got

    def column(self, name: str, order: list[int]) -> list[str]:
        """The entries' `name` (ids, bases, species or groups: group_id of (base, species))
        at these indexes, without a Scored each."""
        values = getattr(self, name)
        return [values[i] for i in order]

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

    def speller(self) -> "Speller":
        """The suggester over every key (a refusal's "did you mean"), prepared once."""
        from .suggest import speller_for

        return speller_for(self.keys_as_written())

    def score(self, segments: list[list[str]]) -> "Ranking":
        """Rank entries for a question given as segments of terms (question, then expansions).

        Ties order by path; only entries that scored appear. The scores are summed here, for
        every entry; what each matched and the arithmetic behind it are worked out only for
        the entries something reads (a common word scores a quarter of a large fleet, and
        building those lines for each was most of such a question's time).
        """
        seq = [t for seg in segments for t in seg]
        unique = list(dict.fromkeys(seq))
        # Per entry index, its score, added in the order the seed adds them (phrases first,
        # then words, each in question order), so every sum is the same float, bit for bit.
        scores: dict[int, float] = {}
        phrases: dict[int, list[tuple[str, float]]] = {}  # entry -> (phrase as written, mean idf)
        self._score_phrases(segments, unique, scores, phrases)
        self._score_words(unique, scores)
        # Entries are held in id order, so the index breaks a tie exactly as the path does:
        # ascending ids, then a stable sort by score, best first (Python's reverse sort keeps
        # equal items in their order), is the order of the key (-score, id) without a tuple
        # per entry. Every part is above 0, so every entry that scored is kept.
        order = sorted(scores)
        if order and min(scores.values()) <= 0:
            order = [i for i in order if scores[i] > 0]
        order.sort(key=scores.__getitem__, reverse=True)
        return Ranking(self, order, list(map(scores.__getitem__, order)), tuple(unique), phrases)

    def _score_phrases(self, segments: list[list[str]], unique: list[str], scores: dict[int, float],
                       phrases: dict[int, list[tuple[str, float]]]) -> None:
        """Add each phrase's part to `scores` (score's first pass), noting it in `phrases`."""
        joined = None  # the segments as one padded text, made when a phrase is first tried
        idf_of = self.idf
        # A phrase is found only where its first two words stand side by side in a segment:
        # only the phrases whose second word follows w somewhere are tried (a common first
        # word starts hundreds of phrase keys), in the order the postings hold them.
        followers: dict[str, set[str]] = {}
        for seg in segments:
            for a, b in zip(seg, seg[1:]):
                followers.setdefault(a, set()).add(b)
        # The per-word tables are read directly (their builders run on a word's first use): a
        # question's words are mostly in no entry of a small fleet, each a call for nothing.
        pairs = self._phrase_pairs
        for w in unique:
            after = followers.get(w)
            if not after:
                continue
            by_second = pairs.get(w)
            if by_second is None:
                by_second = self._phrases_by_second(w)
            if not by_second:
                continue
            tried = [p for b in after for p in by_second.get(b, ())]
            if len(tried) > 1:
                tried.sort()
            for _, (i, written, t, padded) in tried:
                if joined is None:
                    joined = " " + SEGMENT_BREAK.join(" ".join(seg) for seg in segments) + " "
                if padded not in joined:
                    continue
                m = phrases.get(i)
                if m is None:
                    m = phrases[i] = []
                    scores[i] = 0.0
                elif any(written == x for x, _ in m):
                    continue
                mean_idf = sum(idf_of(x) for x in t) / len(t)
                scores[i] += W_PHRASE * mean_idf
                m.append((written, mean_idf))

    def _score_words(self, unique: list[str], scores: dict[int, float]) -> None:
        """Add each word's part to `scores` (score's second pass), in question order."""
        contributions = self._contributions  # read directly, as the phrase pairs are
        get = scores.get
        for w in unique:
            adds = contributions.get(w)
            if adds is None:
                adds = self._contributions_of(w)
            if not adds:
                continue
            # An entry the word is new to gets its part as it is (0.0 + x is x); one that has a
            # score gets score + part, the same addition in the same order. A word of many
            # entries (a common word scores thousands) is merged with dict operations, not a
            # Python step per entry; a word of few, step by step (the dict operations' fixed cost).
            if len(adds) <= 32:
                for i, add in adds.items():
                    scores[i] = get(i, 0.0) + add
                continue
            summed = {i: scores[i] + adds[i] for i in scores.keys() & adds.keys()}
            scores.update(adds)
            scores.update(summed)

    def _phrases_by_second(self, w: str) -> dict[str, tuple[tuple[int, tuple], ...]]:
        """The phrase postings of first word w by their second word, each with its place in
        w's postings (so the ones tried are taken in the postings' order)."""
        got = self._phrase_pairs.get(w)
        if got is None:
            acc: dict[str, list] = {}
            for place, posting in enumerate(self._phrases.get(w, ())):
                acc.setdefault(posting[2][1], []).append((place, posting))
            got = self._phrase_pairs[w] = {b: tuple(ps) for b, ps in acc.items()}
        return got

    def _contributions_of(self, w: str) -> dict[int, float]:
        """Entry index -> weight x idf(w): a word's part of each entry's score, the same
        product score() added per question, made once per catalogue (idf is fixed here)."""
        got = self._contributions.get(w)
        if got is None:
            entries, weights = self._weights_of(w)
            idf = self.idf(w) if entries else 0.0
            got = self._contributions[w] = dict(zip(entries, [weight * idf for weight in weights]))
        return got

    def explain(self, i: int, score: float, unique: tuple[str, ...], phrases: list[tuple[str, float]]) -> Scored:
        """Entry i's Scored: what it matched and the arithmetic, in the order score() added them."""
        e = self.entries[i]
        matched = [written for written, _ in phrases]
        parts = [(written, _PHRASE_WHY, W_PHRASE, mean_idf) for written, mean_idf in phrases]
        vocabulary = e.one_word_keys, e.title_words, e.stem_words, e.purpose_words
        for w in unique:
            is_key, in_title, in_stem, in_purpose = (w in v for v in vocabulary)
            other = (W_TITLE if in_title else 0.0) + (W_STEM if in_stem else 0.0) + (W_PURPOSE if in_purpose else 0.0)
            mask = in_title | in_stem << 1 | in_purpose << 2
            if is_key:
                parts.append((w, _WHY[mask | _KEY_BIT], W_KEYWORD + other, self.idf(w)))
            elif other:
                parts.append((w, _WHY[mask], other, self.idf(w)))
            else:
                continue
            matched.append(w)
        return Scored(e, score, tuple(matched), tuple(parts))


class Ranking(LazyList):
    """The entries that scored, best first: a sequence of Scored, each built when first read.

    The order and the scores are computed whole; `entry_at`, `score_at` and `id_at` read them
    without building a Scored, for whoever walks every entry (the fold, the fusion).
    """

    def __init__(self, catalogue: Catalogue, order: list[int], scores: list[float], unique: tuple[str, ...],
                 phrases: dict[int, list[tuple[str, float]]]):
        super().__init__(len(order))
        self._catalogue = catalogue
        self._order = order
        self._scores = scores
        self._unique = unique
        self._phrases = phrases

    def _build(self, k: int) -> Scored:
        i = self._order[k]
        return self._catalogue.explain(i, self._scores[k], self._unique, self._phrases.get(i, []))

    def entry_at(self, k: int) -> Entry:
        return self._catalogue.entries[self._order[k]]

    def score_at(self, k: int) -> float:
        return self._scores[k]

    def ids(self) -> list[str]:
        return self._catalogue.column("ids", self._order)

    def bases(self) -> list[str]:
        return self._catalogue.column("bases", self._order)

    def species(self) -> list[str]:
        return self._catalogue.column("species", self._order)

    def groups(self) -> list[int]:
        """Each ranked entry's (base, species) as its number (group_names), best first:
        what the fold reads."""
        return self._catalogue.column("groups", self._order)

    def group_names(self) -> list[tuple[str, str]]:
        return self._catalogue.group_names

    def scores(self) -> list[float]:
        return list(self._scores)

    def matched_anywhere(self) -> set[str]:
        """What any ranked entry matched (the union of every Scored's `matched`), without a
        Scored each: every phrase found whole, and every question word some entry's
        vocabulary weighs (such an entry scored above 0, so it is ranked)."""
        found = {written for matched in self._phrases.values() for written, _ in matched}
        catalogue = self._catalogue
        known = catalogue._contributions  # score() filled it for each of these words: no call each
        for w in self._unique:
            adds = known.get(w)
            if adds is None:
                adds = catalogue._contributions_of(w)
            if adds:
                found.add(w)
        return found

    def __repr__(self) -> str:
        return f"Ranking({len(self)} entries)"


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
