"""What accepting `kb label`'s proposals would change, worked out on a private copy of the fleet.

The gold questions (when a gold.tsv sits at the fleet root) are graded before and after; the
miss log's questions are asked again, each changed verdict sorted by whether the text leg
agrees; every owner that would change is listed. Nothing under the reader's folder is written.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import KbError
from .evaluate import run_eval
from ..notes.fleet import copy_notes
from .label import apply
from ..memory import Memory
from .misses import misses_path, read_log

GOLD_FILE = "gold.tsv"


@dataclass
class Effect:
    """What accepting the proposals would change. Without a gold.tsv nobody has said which
    note is right, so a verdict turned into a hit is never counted as a success: it is split
    into the risky part (a hit on a note the text leg did not put first: a claim nobody has
    checked) and the rest (a hit on the text leg's own first note: the two scorers agree)."""

    gold_before: dict | None = None
    gold_after: dict | None = None
    gold_problem: str | None = None  # a gold.tsv that cannot be graded: said, and the rest goes on
    hit_elsewhere: list[dict] = field(default_factory=list)  # now a hit where the text leg disagrees
    hit_agreeing: list[dict] = field(default_factory=list)  # now a hit on the text leg's first note
    other_changes: list[dict] = field(default_factory=list)  # any other verdict changed
    owner_changes: list[dict] = field(default_factory=list)
    misses_asked: int = 0
    progress: object = None  # called with (done, total) while questions are asked (the labels screen)

    def to_json(self) -> dict:
        return {
            "gold_before": self.gold_before, "gold_after": self.gold_after, "gold_problem": self.gold_problem,
            "misses_asked": self.misses_asked,
            "changed": {"hit_where_the_text_leg_disagrees": self.hit_elsewhere,
                        "hit_where_the_text_leg_agrees": self.hit_agreeing, "other": self.other_changes},
            "owner_changes": self.owner_changes,
        }


def miss_questions(fleet) -> list[str]:

    try:
        return [e.question for e in read_log(misses_path(fleet.root))]
    except (OSError, UnicodeDecodeError):
        return []


def effect(fleet, memory, proposals: list, progress=None, reviewed: bool = False) -> Effect:  # labelcli's NoteProposals
    """Ask the same questions of the fleet as it is and of a private copy with every proposal
    written as `kb label --write` (or, `reviewed`, the labels screen) writes it; nothing under
    the reader's folder changes. `progress(stage, done, total)` is called as the work goes."""

    eff = Effect()
    say = progress or (lambda stage, done, total: None)
    say("copying the notes", 0, 1)
    questions = miss_questions(fleet)
    gold = fleet.root / GOLD_FILE
    with tempfile.TemporaryDirectory(prefix="kb-label-") as tmp:
        paths = _labelled_copy(fleet, proposals, Path(tmp) / fleet.root.name, reviewed)
        say("indexing the copy", 0, 1)
        after = Memory(paths)
        if gold.is_file():
            _gold_effect(eff, memory, after, gold, say)
        _miss_log_effect(eff, memory, after, questions, say)
    return eff


def _labelled_copy(fleet, proposals: list, copy: Path, reviewed: bool = False) -> list[Path]:
    """The fleet's notes copied to `copy` with every writable proposal written in; the paths a
    Memory of the copy opens."""
    copy_notes(fleet.root, copy, notes_only=True)  # what kb reads, and no linked folder
    rel_root = {b.name: b.root.relative_to(fleet.root) for b in fleet.bases}
    for b in fleet.bases:
        # A base reached through a link is copied as a folder: copied as the link, the
        # proposals below were written through it into the reader's own notes.
        if not (copy / rel_root[b.name]).is_dir():
            copy_notes(b.root, copy / rel_root[b.name], notes_only=True)
    for np in proposals:
        if not np.proposal.can_write:
            continue
        target = copy / rel_root[np.base] / np.proposal.relpath
        try:
            data = target.read_bytes()
            if target.is_symlink():  # the copy's link still points at the reader's file
                target.unlink()
            target.write_bytes(apply(data, np.proposal, merge=True, reviewed=reviewed))
        except (OSError, ValueError):
            continue
    return [copy / rel_root[b.name] for b in fleet.bases] if not fleet.is_fleet_root else [copy]


def _gold_effect(eff: Effect, memory, after, gold: Path, say) -> None:
    """gold.tsv graded before and after, and the owners that changed (into `eff`)."""
    try:
        say("grading gold.tsv", 0, 1)
        eff.gold_before = _grade(memory, gold)
        eff.gold_after = _grade(after, gold)
    except KbError as e:
        # A stale answer key (a note renamed since) must not cost the proposals: the
        # effect says why it has no before and after, and kb check would say the same.
        eff.gold_problem, eff.gold_before, eff.gold_after = str(e), None, None
    if eff.gold_before is not None:
        for qb, qa in zip(eff.gold_before.pop("rows"), eff.gold_after.pop("rows")):
            if qb["owner"] != qa["owner"]:
                eff.owner_changes.append({"question": qb["question"], "from": qb["owner"], "to": qa["owner"],
                                          "source": "gold"})


def _miss_log_effect(eff: Effect, memory, after, questions: list[str], say) -> None:
    """The miss log's questions asked again before and after, each change sorted (into `eff`)."""
    for n, q in enumerate(questions):
        say("asking the miss log's questions again", n, len(questions))
        b = memory.ask(q, record_miss=False, with_passages=False, top=1, classify=False)
        a = after.ask(q, record_miss=False, with_passages=False, top=1, classify=False)
        eff.misses_asked += 1
        if a.verdict != b.verdict or a.keyword_top != b.keyword_top:
            text_first = a.text[0].id if a.text else None
            row = {"question": q, "note": a.keyword_top, "text_first": text_first,
                   "before": b.verdict, "after": a.verdict}
            if a.verdict != "hit":
                eff.other_changes.append(row)
            elif a.keyword_top == text_first:
                eff.hit_agreeing.append(row)
            else:
                eff.hit_elsewhere.append(row)
        ob = b.agent.name if b.gate.served else None
        oa = a.agent.name if a.gate.served else None
        if ob != oa:
            eff.owner_changes.append({"question": q, "from": ob, "to": oa, "source": "miss log"})


def _grade(memory, gold: Path) -> dict:

    r = run_eval(memory, gold, speed=False)
    ans = r.answerable
    return {
        "questions": len(ans),
        "hit": sum(1 for g in ans if g.verdict == "hit"),
        "hit_right": sum(1 for g in ans if g.verdict == "hit" and g.keyword_ok),
        "first_row_right": sum(1 for g in ans if g.file_ok),
        "rows": [{"question": g.gold.question, "owner": g.owner} for g in r.graded],
    }
