"""Unread keys: a HIT that rests only on keys kb label wrote needs the text leg to agree.

A key kb label proposes comes from the note's own title, headings and examples, which the
text leg reads too; until a person reads it, it is the text read a second time, not a
second scorer. Measured on three public corpora nobody here wrote (docs/labels.md), a HIT
resting on such keys alone was right 23% of the time on a command reference and 0 of 4 on a
book. So when every part of the top note's keyword score comes from keys its mark names as
unread (engine/notes/proposal.py), and from its title, file name and purpose words when a
machine made it an entry, the HIT stands only if the text leg's first file is that note and
the question names it (holds every word of its file name, as the text search stems them);
and the note holds at least half of the question's words (the coverage rule's test, which
is off by default for hand-written labels, always asked of a machine's); else the verdict is
a guess, and the gate says why. Agreement alone was not enough: both legs read the same title
words, and a question about something else that shares them ("best time to see cherry
blossoms" -> git-cherry-pick.md) took both; naming alone was not either, on a held-out set a
near miss names its tool ("add a friend to the whitelist on my minecraft server"). Tuned on six question sets
(docs/labels.md): agreed HITs right 63 of 100 (six sets), named ones 42 of 42. A key a person wrote, or read and kept (by
deleting the mark, or from its list), is theirs: any part of the score that comes from one
leaves the seed's verdict as it is. A fleet with no mark (the seed's demo, every hand-written
fleet) never meets this rule.
"""

from __future__ import annotations

from .normalize import terms
from .stemming import word_stems

from ..answer import AGREED, DEMOTED, UNCOVERED, UNNAMED


def _norm(key: str) -> str:
    return " ".join(key.lower().split())


def rests_on_unread(terms_: tuple, keys: tuple[str, ...], unread: tuple[str, ...]) -> bool:
    """Whether every part of a Scored's arithmetic (`terms_`: (word or phrase, why, weight,
    idf)) comes from the entry's unread keys, or from its name words when every key is unread."""
    if not unread:
        return False
    unread_set = {_norm(k) for k in unread}
    read = [k for k in keys if _norm(k) not in unread_set]
    if not read:
        machine_made = True
        read_words: set[str] = set()
    else:
        machine_made = False
        read_words = {t[0] for t in (terms(k) for k in read) if len(t) == 1}
    for word, why, _weight, _idf in terms_:
        if why.startswith("phrase"):
            if _norm(word) not in unread_set:
                return False  # a phrase a person wrote or kept
            continue
        if word in read_words:
            return False  # a one-word key a person wrote or kept
        if not machine_made and any(part in why for part in ("title", "stem", "purpose")):
            return False  # a person made this note an entry: its name words are theirs
    return True


def name_words(path: str) -> list[str]:
    """The words of a note's file name, its numbering left out (`ch04-01-what-is-ownership`
    is named `ownership`), unless the number is the whole name (`iperf3`, `0001`)."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    words = terms(name[:dot] if dot > 0 else name)
    if len(words) < 2:
        return words
    return [w for w in words if not any(c.isdigit() for c in w)]


def names_note(question_terms, path: str) -> bool:
    """Whether the question holds every word of the note's file name, each compared by its
    stems in both languages (`certificate` names `certificates.md`)."""
    wanted = name_words(path)
    if not wanted:
        return False
    held = {s for t in question_terms for s in word_stems(t)}
    return all(held.intersection(word_stems(w)) for w in wanted)


def vouched_verdict(verdict: str, top, record, text_first: str | None,
                    question_terms=(), covers=None) -> tuple[str, str | None]:
    """(the verdict, AGREED / DEMOTED / UNNAMED / UNCOVERED / None): `top` the keyword
    ranking's first Scored, `record` its FileRecord (or None), `text_first` the id of the text
    leg's first file, `question_terms` what both scorers saw, `covers(entry)` whether the note
    holds at least half of the question's words (the coverage rule's test, engine/rank/covered.py;
    None: not asked)."""
    if verdict != "hit" or top is None or record is None or not getattr(record, "unread", ()):
        return verdict, None
    if not rests_on_unread(top.terms, top.entry.keys, record.unread):
        return verdict, None
    if text_first != top.entry.id:
        return "guess", DEMOTED
    if not names_note(question_terms, top.entry.path):
        return "guess", UNNAMED
    if covers is not None and not covers(top.entry):
        return "guess", UNCOVERED
    return verdict, AGREED


def _top(routed):
    """The keyword ranking's first Scored and its FileRecord (None, None when there is none)."""
    ranking = getattr(routed.keyword, "ranking", None) if routed.keyword else None
    if not ranking:
        return None, None
    top = ranking[0]
    return top, routed.snap.records.get(top.entry.base, {}).get(top.entry.path)


def vouch(routed, text, covers=None) -> tuple[str, str | None]:
    """Memory's route step (`routed`, its Routed) judged with the read step's text hits: the
    verdict and what this rule said (None when it did not apply). `covers`: vouched_verdict's."""
    if routed.verdict != "hit":
        return routed.verdict, None
    top, record = _top(routed)
    if top is None:
        return routed.verdict, None
    ids = text.ids() if hasattr(text, "ids") else [h.id for h in text]
    return vouched_verdict(routed.verdict, top, record, ids[0] if ids else None, routed.terms, covers)


def voting_keyword(routed):
    """The keyword ranking as it votes in the reading list's fusion: not at all when its first
    pick rests on unread keys, whatever the verdict. Such a pick is the text read a second
    time, and fused with the text leg it outvoted the text leg's own first row: on four docs
    sites nobody here wrote, labelling as proposed took the first row from right on 35 of 52
    questions to 17 (uv), 33 of 55 to 16, 45 of 60 to 33 (docs/labels.md). The whole ranking
    is left out rather than entry by entry, so no question pays to score each entry's source;
    a reviewed key deeper in the list loses its vote on such a question (docs/decisions.md)."""
    top, record = _top(routed)
    if top is None or record is None or not getattr(record, "unread", ()):
        return routed.keyword
    return () if rests_on_unread(top.terms, top.entry.keys, record.unread) else routed.keyword
