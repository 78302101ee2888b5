"""The write side: a claim measured against what the bases already say.

It proposes ADD, UPDATE or NOOP and shows the passage it measured against; the caller
decides. It never proposes DELETE: that needs the claim to be false rather than absent,
and no count of shared words can tell those apart (a similarity score that deletes is how
a memory layer starts removing live facts in silence).

The measure is containment, the share of the claim's words found in one passage, not
Jaccard: a short claim inside a long section that already says it must not score low
because the section says much else besides.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Protocol

from ..notes.atomic import create_atomic
from ..clean import LINE_BREAKS
from ..notes.confine import confine
from ..errors import KbError
from ..rank.excerpt import excerpt
from ..rank.normalize import unique_terms
from ..rank.question import MAX_QUESTION_CHARS, cut_question
from ..notes.mapfiles import MAP_NAMES
from ..render import one_line, printable


class Memory(Protocol):
    """What a claim is weighed and written with: five of engine/memory.Memory's methods (which
    calls remember() from its own `remember`, so this module imports nothing of it)."""

    @property
    def bases(self) -> Any: ...

    def snapshot(self) -> Any: ...

    def refresh(self, *, force: bool = False) -> Any: ...

    def chunks_of(self, base: str, path: str) -> list[tuple[str, str, int]]: ...

    def text_matches(self, terms: list[str], limit: int) -> list[tuple[str, str]]: ...


NOOP_AT = 0.90  # the claim adds no word one passage does not already have
UPDATE_AT = 0.55  # most of it is there: the shape of the same fact with a new value
PROPOSALS = ("ADD", "UPDATE", "NOOP")  # and never DELETE, on purpose (see above)
EVIDENCE_WIDTH = 25  # files weighed; wide enough to show one fact written down twice
EVIDENCE_SHOWN = 3
DISCLAIMER = (
    "kb measured overlap, nothing more. Whether the older text is now wrong is a judgement, and DELETE is never "
    "proposed: it needs the claim to be false rather than absent, and no count of shared words can tell those apart."
)
# A key may not hold a comma or a backtick (the Search for: line's own syntax), a NUL (the
# note would be skipped as binary), nor any character str.splitlines() breaks a line at: the
# note reader would cut the label there and lose that key and every later one.
_BAD_KEY = re.compile(f"[,`\x00{LINE_BREAKS}]")


@dataclass(frozen=True)
class Evidence:
    base: str
    path: str
    heading_path: str
    excerpt: str
    containment: float
    shared: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.base}/{self.path}"


@dataclass(frozen=True)
class Remembered:
    claim: str
    terms: tuple[str, ...]
    proposal: str  # ADD | UPDATE | NOOP
    containment: float  # of the best passage; 0.0 when nothing matched
    reason: str
    evidence: tuple[Evidence, ...]
    written: str | None = None  # "base/path" of the note written, when --write
    indexed: bool = False  # the written note is in the index and is an entry
    claim_chars: int = 0  # the claim's length when it was cut to `claim` for measuring (engine/rank/question.py)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["evidence"] = [dict(asdict(e), id=e.id) for e in self.evidence]
        del out["claim_chars"]
        if self.claim_chars:
            out["claim_cut"] = {"chars": self.claim_chars, "read": len(self.claim)}
        return out


def assess(memory: Memory, claim: str) -> tuple[tuple[str, ...], list[Evidence]]:
    """The claim's terms and every weighed passage, best containment first."""
    terms = tuple(unique_terms(claim))
    if not terms:
        raise KbError(f"{claim!r}: the claim has no words that carry meaning, so there is nothing to measure")
    memory.snapshot()  # notes changed since the last index are read first
    claim_set = set(terms)
    found: list[Evidence] = []
    for name, path in memory.text_matches(list(terms), EVIDENCE_WIDTH):
        for hp, body, _line in memory.chunks_of(name, path):
            words = set(unique_terms(hp + " " + body))
            shared = tuple(t for t in terms if t in words)
            if not shared:
                continue
            found.append(Evidence(
                base=name, path=path, heading_path=hp, excerpt=excerpt(hp, body, list(terms)),
                containment=len(shared) / len(claim_set), shared=shared,
                missing=tuple(t for t in terms if t not in words),
            ))
    found.sort(key=lambda e: (-e.containment, e.id, e.heading_path))
    return terms, found


def propose(terms: tuple[str, ...], evidence: list[Evidence]) -> tuple[str, float, str]:
    if not evidence:
        return "ADD", 0.0, "nothing in the base shares a word with this claim."
    best = evidence[0]
    c = best.containment
    of = f"{len(best.shared)} of {len(terms)} words"
    if c >= NOOP_AT:
        return "NOOP", c, f"{of} are already in one passage of {best.id}: the base says this already."
    if c >= UPDATE_AT:
        adds = ", ".join(best.missing) or "nothing"
        return "UPDATE", c, (f"{of} are already in one passage of {best.id}, and the claim adds: {adds}. "
                             "That is the shape of the same fact with a new value.")
    return "ADD", c, (f"the closest passage ({best.id}) holds only {of}: related material, not the same fact.")


def remember(memory: Memory, claim: str, path: str | os.PathLike[str] | None = None, *, write: bool = False,
             keys: list[str] | tuple[str, ...] = (), title: str | None = None,
             purpose: str | None = None) -> Remembered:
    """Measure `claim`; with `write`, create the note at `path` (inside a base) and index it."""
    target = confine(memory.bases, path) if path is not None else None  # refused by name before any work
    clean_keys: list[str] = []
    if write:
        # Refused before measuring: a note no question can reach is not worth writing.
        if target is None:
            raise KbError("--write needs a path: the new note's .md path inside a base")
        clean_keys = _keys(keys)
        for what, text in (("the claim", claim), ("the purpose", purpose or ""), ("the title", title or "")):
            if "\x00" in text:
                raise KbError(f"{what} holds a NUL (U+0000): the note would be skipped as binary; nothing written")
        _check_new_note(target)
    # Measured as a question is read: the claim's words are one full-text query, whose time
    # grew with its square (2.1 MB: 139 s). A note written keeps the whole claim.
    measured, claim_chars = cut_question(claim)
    terms, evidence = assess(memory, measured)
    proposal, containment, reason = propose(terms, evidence)
    result = Remembered(claim=measured, terms=terms, proposal=proposal, containment=containment, reason=reason,
                        evidence=tuple(evidence[:EVIDENCE_SHOWN]), claim_chars=claim_chars)
    if not write:
        return result
    assert target is not None
    text = note_text(claim, clean_keys, title=title, purpose=purpose)
    try:
        target.path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise KbError(f"{target.id}: a part of its folder path is a file, not a folder; nothing written") from None
    except OSError as e:
        raise KbError(f"{target.id}: its folder cannot be made ({e.strerror or e}); nothing written") from None
    _check_inside(memory, target)
    try:
        create_atomic(target.path, text)
    except FileExistsError:
        raise KbError(f"{target.id}: already exists; kb remember never overwrites a note") from None
    except OSError as e:
        raise KbError(f"{target.id}: cannot be written ({e.strerror or e})") from None
    memory.refresh()
    rec = memory.snapshot().records.get(target.base.name, {}).get(target.rel)
    return replace(result, written=target.id, indexed=bool(rec and rec.is_entry))


def _keys(keys) -> list[str]:
    out = []
    for k in keys:
        k = k.strip()
        if not k:
            continue
        bad = _BAD_KEY.search(k)
        if bad:
            raise KbError(f"key {k!r} holds {_named(bad.group())}: a key cannot hold a comma, a backtick, a NUL or a "
                          "line break (the Search for: line is one line of comma-separated keys); nothing written")
        out.append(k)
    if not out:
        raise KbError("--write needs at least one --key: a note without a Search for: line is one no question can "
                      "reach")
    return out


def _named(ch: str) -> str:
    """A refused character as a person can find it: `,` or U+000B."""
    return f"`{ch}`" if ch in ",`" else f"U+{ord(ch):04X}"


def _check_new_note(target) -> None:
    if not target.rel or not target.rel.endswith(".md"):
        raise KbError(f"{target.id}: a note is a .md file inside a base")
    parts = target.rel.split("/")
    if any(p.startswith(".") for p in parts):
        raise KbError(f"{target.id}: a hidden folder or file is never indexed; choose a visible path")
    if len(parts) == 1 and parts[0].lower() in MAP_NAMES:
        raise KbError(f"{target.id}: a map is a reading list for people, not a note")
    if os.path.lexists(target.path):
        raise KbError(f"{target.id}: already exists; kb remember never overwrites a note")


def _check_inside(memory: Memory, target) -> None:
    # The folders were just made; a symlink swapped in between would move the note out.
    again = confine(memory.bases, target.path)
    if again.path != target.path:
        raise KbError(f"{target.id}: its folder moved while it was being written; nothing written")


def _first_sentence(s: str, limit: int) -> str:
    s = " ".join(s.split())
    m = re.match(r"^(.+?[.!?])(\s|$)", s)
    first = m.group(1) if m else s
    if len(first) > limit:
        first = first[: limit - 3].rstrip() + "..."
    return first


def note_text(claim: str, keys: list[str], *, title: str | None = None, purpose: str | None = None,
              date: str | None = None) -> str:
    """A new note: title, the `Search for:` line directly under it, `Exists to:`, the claim."""
    title = " ".join((title or _first_sentence(claim, 80).rstrip(".")).split())
    purpose = " ".join((purpose or _first_sentence(claim, 200)).split())
    date = date or _dt.date.today().isoformat()
    key_line = ", ".join(f"`{k}`" for k in keys)
    body = claim.strip()
    return f"# {title}\n\n**Search for:** {key_line}\n\n**Exists to:** {purpose}\n\nUpdated: {date}\n\n{body}\n"


def render(r: Remembered) -> str:

    lines = [
        f"claim:     {one_line(r.claim)}",
        *([f"cut:       the claim has {r.claim_chars:,} characters; only the first {MAX_QUESTION_CHARS:,} or fewer "
           "were measured, as a question is read"] if r.claim_chars else []),
        f"terms:     {', '.join(r.terms)}",
        f"proposal:  {r.proposal}  (containment {r.containment:.2f}; NOOP at >= {NOOP_AT:.2f}, UPDATE at >= "
        f"{UPDATE_AT:.2f})",
        f"           {one_line(r.reason)}",
    ]
    if r.evidence:
        lines += ["", "evidence:"]
    for e in r.evidence:
        lines.append(f"  {e.containment:.2f}  {printable(e.id)}  ({one_line(e.heading_path)})")
        lines.append(f"        shared:  {', '.join(e.shared)}")
        lines.append(f"        missing: {', '.join(e.missing) or '-'}")
        lines.append(f"        {one_line(e.excerpt)}")
    if r.written:
        state = "indexed, an entry" if r.indexed else "written, but the index does not list it as an entry"
        lines += ["", f"wrote:     {printable(r.written)} ({state})"]
    lines += ["", DISCLAIMER]
    return "\n".join(lines)
