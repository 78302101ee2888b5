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
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from ..rank.catalogue import Catalogue, make_entry
from ..rank.gate import floor_for
from ..rank.normalize import terms, words
from ..notes.notefiles import content_problem
from ..notes.note import layout, parse_note
from ..notes.proposal import mark_line, marked_keys
from ..notes.thin import is_thin  # W06's rule: the notes kb check calls thin are the ones widened
from .labelstats import FleetStats, asked_form, fleet_stats, is_word_name, name_of, note_words, singular, topicality
from .labeltext import (CLAUSE_BREAK, CODE_SPAN, cleaned, description, example_leads, first_sentence, headings,
                        phrase_keys, phrases, pointer_headings, prose_lines, searchable, term_stream)

CHOSEN = "chosen by a person"  # a logged question's key on the note a person picked: never marked unread
MAX_KEYS = 16  # a proposal a reader can check at a glance; they add the rest
MAX_HEADINGS = 6
NOTHING_TO_PROPOSE = "nothing to propose"  # a refusal reason, and the line kb label prints for it
# A proposed key is a phrase a person types: the longest title in the four label corpora is 11
# words, the longest hand-written key in the demo 12. Past either cap a "key" (a paragraph set
# as a heading, a 20,000-word title) matches no question and buries the label line.
MAX_KEY_WORDS = 12
MAX_KEY_CHARS = 120


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
    def machine_keys(self) -> list[str]:
        """The keys kb label chose (not a person's pick for a logged question): its mark names them."""
        return [k.key for k in self.keys if k.source != CHOSEN]

    @property
    def mark(self) -> str | None:
        """The line `kb label --write` puts under the label: the machine's keys, unread."""
        return mark_line(self.machine_keys) if self.machine_keys else None

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
            "mark_line": self.mark,
            "purpose_line": self.purpose_line,
            "can_write": self.can_write,
            "why_not": self.why_not,
        }


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()




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
    keys = _candidate_keys(relpath, text, note, stats, chosen, existing)
    purpose = None if note.purpose else first_sentence(text)
    if purpose and set(terms(purpose)) <= set(terms(note.title)):
        # A sentence that only says the title again (an abstract opens with it) tells a reader
        # nothing, and written as `Exists to:` it doubles the title's words in the text index:
        # on Cranfield it took the text leg's first row from 37 to 34 of 104 (docs/labels.md).
        purpose = None
    can_write, why_not = _writable(note, keys)
    return Proposal(relpath, note.title, reason, tuple(existing), tuple(keys), purpose, digest(data),
                    can_write, why_not)


@dataclass
class _Candidates:
    """The keys one note offers, in the order offered, each checked as it is offered."""

    stats: FleetStats
    taken: set[tuple[str, ...]]  # the terms of every key already held or offered
    keys: list[ProposedKey] = field(default_factory=list)

    def offer(self, key: str, source: str) -> None:
        stats, keys, taken = self.stats, self.keys, self.taken
        common = max(2, stats.n // 10)  # a word in a tenth of the fleet says little about this note
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


def _candidate_keys(relpath: str, text: str, note, stats: FleetStats, chosen: list[str],
                    existing) -> list[ProposedKey]:
    """Every key the note offers, in order: a person's picks, its title and file name, its
    description, its title's parts, its headings, its examples' leads."""
    cands = _Candidates(stats, {tuple(terms(k)) for k in existing})
    offer = cands.offer
    for q in chosen:
        offer(" ".join(terms(q)), "chosen by a person")
    body_words = note_words(text)
    title_words = " ".join(words(cleaned(note.title))) if note.title else ""
    if title_words:
        offer(title_words, "title")
        offer(singular(title_words.split(), body_words), "title")
        offer(asked_form(title_words.split(), body_words), "title")
    if is_word_name(name_of(relpath)):
        offer(" ".join(words(name_of(relpath))), "file name")
    said = CODE_SPAN.sub(" ; ", note.purpose) if note.purpose else description(text, for_keys=True)
    if said:
        for clause in CLAUSE_BREAK.split(said):
            for k in phrase_keys(clause, whole=True):
                offer(k, "description")
    if title_words and len(terms(title_words)) >= 3:
        # A long title matches only whole; a person asks with a part of it.
        for run in phrases(term_stream([title_words])):
            if len(run.split()) == 2:
                offer(run, "title part")
    for h in _named_headings(text, note, stats):
        offer(" ".join(words(h)), "heading")
        offer(singular(words(h), body_words), "heading")
    for lead in example_leads(text):
        for k in phrase_keys(lead, whole=True):
            offer(k, "example")
    return cands.keys


def _named_headings(text: str, note, stats: FleetStats) -> list[str]:
    """The note's headings that could name it, the most topical first, MAX_HEADINGS of them."""
    common = max(2, stats.n // 10)  # a word in a tenth of the fleet says little about this note
    pointers = pointer_headings(text)
    hs = [cleaned(h) for lvl, h in headings(text) if lvl in (2, 3) and h != note.title and h not in pointers]
    # A heading every note has ("Example", "Syntax") names no note: one rare word is needed.
    hs = [h for h in hs if stats.n <= 1 or any(stats.word_df[t] <= common for t in terms(h))]
    # Nor does one that a tenth of the notes carry whole ("Basic usage").
    hs = [h for h in hs if stats.n <= 1 or stats.heading_df[" ".join(terms(h))] <= common]
    if stats.n > 1 and hs:
        tf = Counter(w for line in prose_lines(text) for w in words(line))
        order = {h: i for i, h in reversed(list(enumerate(hs)))}
        hs = sorted(order, key=lambda h: (-topicality(stats, tf, h), order[h]))
    return hs[:MAX_HEADINGS]


def _writable(note, keys: list[ProposedKey]) -> tuple[bool, str]:
    """Whether the proposal can be written into the note, and if not why (a line kb label prints)."""
    can_write, why_not = True, ""
    if note.title_line is None:
        can_write, why_not = False, "no heading to put a label under: give the note a title first"
    elif note.label_line is not None and not note.label_under_title:
        can_write, why_not = False, f"a Search for: line stands at line {note.label_line}, not under the title: move it first"
    if not keys:
        can_write, why_not = False, why_not or NO_SOURCE
    return can_write, why_not


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
    kept = _kept_by_rank(candidates)
    fixed = list(entries)
    for nid, p in candidates.items():  # a thin label that cannot be widened still routes
        if not p.can_write and p.existing:
            base, _, rel = nid.partition("/")
            fixed.append(make_entry(base, rel, p.title, "", "memory", tuple(p.existing)))
    _keep_what_reaches(candidates, kept, fixed, rounds)
    return _settled(candidates, kept)


def _kept_by_rank(candidates: dict[str, Proposal]) -> dict[str, list[ProposedKey]]:
    """Each writable note's keys that no other note's source names higher (SOURCE_RANK), a tie
    to none; a key a person chose is always kept."""
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
    return kept


def _keep_what_reaches(candidates: dict[str, Proposal], kept: dict[str, list[ProposedKey]], fixed: list,
                       rounds: int) -> None:
    """`kept` cut, in place, to the keys that reach their own note alone, round after round
    until nothing changes. A note whose name holds a common word is labelled like any other:
    a HIT on its unread keys needs the question to name it and the text leg to agree
    (engine/rank/vouch.py); refusing such notes outright cost two docs sites most of their
    labels for no precision (docs/labels.md, "Named")."""
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
            if len(alone) != len(ks):
                dropped = [k for k in ks if k not in alone]
                moved.update(t for k in dropped for t in terms(k.key))
                if not alone:
                    moved.update(entry.vocabulary)  # the whole entry leaves the catalogue
                kept[nid], changed = alone, True
        if not changed:
            break
        touched = moved


def _settled(candidates: dict[str, Proposal], kept: dict[str, list[ProposedKey]]) -> dict[str, Proposal]:
    """Each proposal with its surviving keys (the strongest MAX_KEYS), or the reason it has none."""
    out = {}
    for nid, p in candidates.items():
        if not p.can_write:
            out[nid] = p
            continue
        ks = _ranked(kept[nid])[:MAX_KEYS]
        if ks:
            out[nid] = replace(p, keys=tuple(ks))
        else:
            out[nid] = replace(p, keys=(), can_write=False, why_not=NOTHING_DISTINCTIVE)
    return out


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


def apply(data: bytes, proposal: Proposal, *, merge: bool, reviewed: bool = False) -> bytes:
    """The note's bytes with the proposal written in, and no other byte changed.

    A note without a label gets `Search for:` (and `Exists to:` when proposed) on new lines
    directly under its title, in the note's own line ending. A note with a label gets the new
    keys appended to that line, and only with `merge`. Raises ValueError when it cannot be done.
    Unless `reviewed` (a person kept them: the labels screen), the keys the machine proposed
    are named by kb label's mark on the line under the label (engine/notes/proposal.py); a
    key a person chose for a logged question is theirs and never named.
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
        unread = _unread_keys(proposal, reviewed)
        if unread:
            _mark_merged(lines, i, ending or b"\n", list(note.unread) + unread)
        return bom + b"".join(lines)
    i = note.title_line - 1
    # An underlined title: the label goes under its underline. The parser's own underlines,
    # not "the title line starts with #": `#1 rule` underlined is a setext title.
    if i + 1 in layout(text.splitlines())[2]:
        i += 1
    _, ending = _split_ending(lines[i])
    eol = ending if ending in (b"\r\n", b"\n", b"\r") else (b"\r\n" if b"\r\n" in data else b"\n")
    insert = eol + b"Search for: " + new_keys + eol
    unread = _unread_keys(proposal, reviewed)
    if unread:
        insert += mark_line(unread).encode("utf-8") + eol
    if proposal.purpose and not note.purpose:
        insert += b"Exists to: " + proposal.purpose.encode("utf-8") + eol
    head = bom + b"".join(lines[: i + 1])
    if not ending:  # the title is the last line and has no ending: give it one
        return head + eol + insert
    return head + insert + b"".join(lines[i + 1:])


def _unread_keys(proposal: Proposal, reviewed: bool) -> list[str]:
    """The keys kb label's mark names: the machine's, unless a person reviewed them."""
    return [] if reviewed else proposal.machine_keys


def _mark_merged(lines: list[bytes], i: int, ending: bytes, unread: list[str]) -> None:
    """The mark under the label at line i, naming `unread`: replaced where it stood, else added."""
    mark = mark_line(unread).encode("utf-8")
    nxt = i + 1
    if nxt < len(lines) and marked_keys(_split_ending(lines[nxt])[0].decode("utf-8", errors="surrogateescape")) is not None:
        lines[nxt] = mark + _split_ending(lines[nxt])[1]
    else:
        lines.insert(nxt, mark + ending)


def _split_ending(line: bytes) -> tuple[bytes, bytes]:
    """A line's bytes and its ending (one of the breaks str.splitlines knows, or none)."""
    text = line.decode("utf-8", errors="surrogateescape")
    body = text.splitlines()[0] if text else ""
    return body.encode("utf-8", errors="surrogateescape"), text[len(body):].encode("utf-8", errors="surrogateescape")
