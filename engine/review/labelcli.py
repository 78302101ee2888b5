"""`kb label PATH`: proposed labels for unlabelled and thin notes, their effect, and writing.

Nothing is written unless `--write` is given. Before anything is written the effect is worked
out on a private copy of the fleet with every proposal accepted: the gold questions (when a
gold.tsv sits at the fleet root) graded before and after; without one, the miss log's questions
whose verdict changes, split into hits on a note the text leg did not put first (a claim nobody
has checked) and hits where the two scorers agree, never counted as a success; and every
miss-log or gold question whose owner would change. A logged question becomes a key only on
the note a person picked for it (`--pick`, the labels and misses screens). Writing inserts
the label under the title and changes no other byte; a note changed since it was read is
refused, and an existing label is never replaced (`--merge` adds keys to it).
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from ..notes.atomic import write_atomic
from ..errors import KbError
from ..notes.fleet import discover
from .label import NOTHING_TO_PROPOSE, apply, digest, propose, propose_fleet
from .labelstats import FleetStats
from ..memory import Memory
from .labeleffect import GOLD_FILE, Effect, effect, miss_questions
from ..notes.mapfiles import is_map_file
from ..render import json_line, printable
from ..notes.notefiles import MAX_NOTE_BYTES, list_notes, open_note
from ..clean import is_valid_text
from ..notes.thin import THIN_ASK, distinct_terms

@dataclass
class NoteProposal:
    base: str
    root: Path
    proposal: object  # engine.review.label.Proposal

    @property
    def id(self) -> str:
        return f"{self.base}/{self.proposal.relpath}"


def collect(fleet, memory=None, chosen: dict[str, list[str]] | None = None) -> list[NoteProposal]:
    """Every proposal across the fleet's bases, settled against each other (engine/review/label.py).
    `chosen` maps a note's id to the logged questions a person picked it for; the miss log
    alone never places a question on a note (its text leg's first row is no person's choice).
    `memory` is accepted for the callers that pass one; nothing here asks it."""

    files: dict[tuple[str, str], bytes] = {}
    for b in fleet.bases:
        found, _ = list_notes(b.root)
        for rel, st in found.items():
            if st.st_size > MAX_NOTE_BYTES:
                continue  # the index skips it unread (and says so): a label there would answer nothing
            if is_map_file(rel):
                continue  # a map is a reading list for people; the catalogue never reads its label
            try:
                with open_note(b.root / rel) as f:  # a FIFO put there since is skipped, not waited on
                    files[(b.name, rel)] = f.read(MAX_NOTE_BYTES + 1)
            except OSError:
                continue  # kb index reports what cannot be read
    settled = propose_fleet(files, chosen)
    del files
    roots = {b.name: b.root for b in fleet.bases}
    out = []
    for nid in sorted(settled):
        base, _, _ = nid.partition("/")
        out.append(NoteProposal(base, roots[base], settled[nid]))
    return out


@dataclass(frozen=True, slots=True)
class Written:
    """What `--write` did: written note ids, notes skipped with nothing to write (not a fault:
    a note with nothing distinctive says why), and one-line refusals (a fault: exit 1)."""

    written: tuple[str, ...]
    skipped: tuple[str, ...]
    refused: tuple[str, ...]


def write(proposals: list[NoteProposal], wanted: list[str], *, merge: bool,
          reviewed: bool = False) -> tuple[list[str], list[str]]:
    """Write the chosen proposals; returns (written ids, one-line refusals and skips).
    reviewed: a person kept these keys (the labels screen), so no unread mark is written."""

    w = write_all(proposals, wanted, merge=merge, reviewed=reviewed)
    return list(w.written), list(w.skipped) + list(w.refused)


def write_all(proposals: list[NoteProposal], wanted: list[str], *, merge: bool, reviewed: bool = False) -> Written:
    """Write the chosen proposals. With no note named, a note that has nothing to write (no
    key reached it, no heading to write under) is skipped with its reason; a note named on
    the command line that cannot be written is refused."""

    chosen = _choose(proposals, wanted)
    written, refused, skipped = [], [], []
    for np in chosen:
        p = np.proposal
        path = np.root / p.relpath
        where = f"{path}"
        if not wanted and not p.can_write:
            skipped.append(f"{where}: {p.why_not}")
            continue
        if not wanted and p.existing and not merge:
            skipped.append(f"{where}: it has a label of {len(p.existing)} keys; --merge adds the proposed keys to it")
            continue
        if path.is_symlink():
            refused.append(f"{where}: a symbolic link; label the file it points to instead")
            continue
        if p.existing and not merge:
            refused.append(f"{where}: it has a label of {len(p.existing)} keys; --merge adds the proposed keys to it")
            continue
        if not p.can_write:
            refused.append(f"{where}: {p.why_not}")
            continue
        try:
            with open_note(path) as f:  # a FIFO swapped in since the proposal is refused, not waited on
                data = f.read(MAX_NOTE_BYTES + 1)
        except OSError as e:
            refused.append(f"{where}: cannot read ({e.strerror})")
            continue
        if digest(data) != p.digest:
            refused.append(f"{where}: changed since it was read; run kb label again")
            continue
        try:
            write_atomic(path, apply(data, p, merge=merge, reviewed=reviewed))
        except ValueError as e:
            refused.append(f"{where}: {e}")
            continue
        except OSError as e:  # a note marked read-only among them (engine/notes/atomic.py)
            refused.append(f"{where}: cannot write ({e.strerror})")
            continue
        written.append(np.id)
    return Written(tuple(written), tuple(skipped), tuple(refused))


def _named(path: str | os.PathLike[str]) -> str:
    """The file a path names, its folders resolved but not its last component: a link named
    on the command line is that link (refused), never the note it points to."""
    path = os.path.abspath(path)
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def _choose(proposals: list[NoteProposal], wanted: list[str]) -> list[NoteProposal]:
    if not wanted:
        return list(proposals)
    by_id = {np.id: np for np in proposals}
    by_path = {_named(np.root / np.proposal.relpath): np for np in proposals}
    by_rel: dict[str, list[NoteProposal]] = {}
    for np in proposals:
        by_rel.setdefault(np.proposal.relpath, []).append(np)
    out = []
    for w in wanted:
        np = by_id.get(w) or by_path.get(_named(w))
        if np is None and len(by_rel.get(w, [])) == 1:
            np = by_rel[w][0]
        if np is None:
            raise KbError(f"{w}: {_why_no_proposal(w)}")
        out.append(np)
    return out


def _why_no_proposal(wanted: str) -> str:
    """Why a note named with --write has no proposal, said as it is (a missing file or a name
    kb cannot index was once told its label was not thin)."""
    if not is_valid_text(wanted):
        return "file name is not valid UTF-8, so kb does not index it; rename it to label it"
    if os.path.isabs(wanted) and not os.path.lexists(wanted):
        return "no such note"
    if os.path.isdir(wanted) or (os.path.lexists(wanted) and not wanted.endswith(".md")):
        return "not a markdown note (.md)"
    return ("no proposal for this note (its label is not thin: 12 distinct keys or more; or it is not in "
            "these bases)")


def pick(fleet, memory, questions: list[str], ask=input, say=print) -> dict[str, list[str]]:
    """`kb label --pick`: for each logged question, the notes the fused list ranks first, and
    the person types the number of the one that answers it (Enter: none). Only what a person
    picked becomes a key; the miss log alone never attaches a question to a note."""

    chosen: dict[str, list[str]] = {}
    for n, q in enumerate(questions, start=1):
        a = memory.ask(q, record_miss=False, with_passages=False, top=PICK_ROWS, classify=False)
        rows = [r.id for r in a.results[:PICK_ROWS]]
        if not rows:
            continue
        say(f"[{n}/{len(questions)}] {printable(q)}")
        for i, rid in enumerate(rows, start=1):
            say(f"   {i}. {printable(rid)}")
        try:
            answer = ask("   which note answers it? number, Enter for none: ").strip()
        except EOFError:
            break
        if answer.isdigit() and 1 <= int(answer) <= len(rows):
            chosen.setdefault(rows[int(answer) - 1], []).append(q)
    return chosen


PICK_ROWS = 5


def attach_question(fleet, note_id: str, question: str) -> Written:
    """A logged question written as a key on the note a person picked for it (the misses
    screen's pick, `--pick`): that key alone, added to the note's label (or a new label under
    its title), no other byte changed."""
    base, _, rel = note_id.partition("/")
    b = next((b for b in fleet.bases if b.name == base), None)
    if b is None:
        raise KbError(f"{note_id}: no such note in this fleet")
    try:
        with open_note(b.root / rel) as f:
            data = f.read(MAX_NOTE_BYTES + 1)
    except OSError as e:
        raise KbError(f"{b.root / rel}: cannot read ({e.strerror})") from e
    p = propose(rel, data, FleetStats(1, Counter()), [question])
    mine = tuple(k for k in p.keys if k.source == "chosen by a person") if p else ()
    if not mine:
        return Written((), (), (f"{b.root / rel}: {question!r} is a key there already, or has no searchable word",))
    p = replace(p, keys=mine, purpose=None)
    return write_all([NoteProposal(base, b.root, p)], [], merge=True)


def _say(line: str) -> None:
    print(line, file=sys.stderr)  # the dialogue on stderr: stdout stays the report (or its JSON)


def _ask(prompt: str) -> str:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line


def cmd_label(args) -> int:

    fleet = discover(args.paths)
    memory = Memory(args.paths)
    chosen = pick(fleet, memory, miss_questions(fleet), ask=_ask, say=_say) if args.pick else None
    proposals = collect(fleet, memory, chosen)
    eff = None if args.no_effect or not proposals else effect(fleet, memory, proposals)
    done = Written((), (), ())
    if args.write is not None:
        done = write_all(proposals, args.write, merge=args.merge)
    if args.json:

        print(json_line({
            "root": str(fleet.root),
            "proposals": [dict(np.proposal.to_json(), id=np.id) for np in proposals],
            "effect": eff.to_json() if eff else None,
            "written": list(done.written),
            "skipped": list(done.skipped),
            "refused": list(done.refused),
            "short_of_w06": _short(proposals, done.written),
        }))
    else:
        print(render(proposals, eff, list(done.written), list(done.refused), wrote=args.write is not None,
                     skipped=list(done.skipped)))
    for r in done.refused:
        print(f"kb: {printable(r)}", file=sys.stderr)  # a file name may hold a newline: one line each
    return 1 if done.refused else 0


def _short(proposals: list[NoteProposal], written) -> list[str]:
    """The written notes whose label now holds fewer distinct keys than W06 asks for."""
    done = set(written)
    return [np.id for np in proposals if np.id in done
            and len(distinct_terms(tuple(np.proposal.existing) + tuple(k.key for k in np.proposal.keys))) < THIN_ASK]


W06_ADVICE = ("a label kb label writes is a start: kb check's W06 asks for {ask} keys. Add the phrases somebody "
              "types from inside the problem, written as questions, not as subjects (seed 000, \"Writing a label\")")


# Said wherever kb label writes or would write keys: the mark, what it does, how a reviewed key loses it.
MARK_ADVICE = ("the keys are written with a line under the label naming them unread (an html comment, "
               "engine/notes/proposal.py): a HIT resting on them alone stands only when the question names "
               "the note by its file name, the text search puts it first and it holds half the question's "
               "words (engine/rank/vouch.py); delete the line, or a key from it, once you have read the keys")


def render(proposals: list[NoteProposal], eff: Effect | None, written: list[str], refused: list[str],
           *, wrote: bool, skipped: list[str] = ()) -> str:  # type: ignore[assignment]

    if not proposals:
        return "kb label: every note has a label of 12 distinct keys or more; nothing to propose"
    bare = sum(1 for np in proposals if not np.proposal.existing)
    lines = [f"kb label: {len(proposals)} note(s) to label: {bare} without a label, "
             f"{len(proposals) - bare} with a thin one (under 12 distinct keys)"]
    for np in proposals:
        lines += _proposal_lines(np)
    if eff is not None:
        lines += _effect_lines(eff)
    if wrote:
        lines += _written_lines(proposals, written, refused, skipped)
    else:
        lines += ["", "nothing written: kb label PATH --write [NOTE ...] writes them (--merge adds to a thin label)",
                  MARK_ADVICE]
    return "\n".join(lines)


def _proposal_lines(np: NoteProposal) -> list[str]:
    """One note's block: its name, the label line proposed and where each key came from."""
    p = np.proposal
    lines = ["", f"  {printable(np.id)}  ({p.reason}{', ' + str(len(p.existing)) + ' keys' if p.existing else ''})"]
    if not p.keys:
        why = "" if p.why_not in ("", NOTHING_TO_PROPOSE) else ": " + p.why_not
        lines.append(f"    {NOTHING_TO_PROPOSE}{why}")
        return lines
    lines.append(f"    {printable(p.label_line)}")
    if p.purpose_line:
        lines.append(f"    {printable(p.purpose_line)}")
    by_source: dict[str, list[str]] = {}
    for k in p.keys:
        by_source.setdefault(k.source, []).append(k.key)
    lines.append("    from: " + "; ".join(f"{s}: {printable(', '.join(ks))}" for s, ks in by_source.items()))
    if not p.can_write:
        lines.append(f"    cannot be written: {p.why_not}")
    return lines


def _effect_lines(eff: Effect) -> list[str]:
    """The effect block: gold.tsv before and after, the miss log asked again, the owners moved."""
    lines = ["", "effect, with every proposal accepted (worked out on a copy; nothing written for it):"]
    if eff.gold_before is not None:
        b, a = eff.gold_before, eff.gold_after
        lines.append(f"  gold.tsv, {b['questions']} answerable: hit {b['hit']} -> {a['hit']}, "
                     f"hit on a right note {b['hit_right']} -> {a['hit_right']}, "
                     f"first row right {b['first_row_right']} -> {a['first_row_right']}")
    elif eff.gold_problem:
        lines.append(f"  {printable(eff.gold_problem)}: no graded before and after")
    else:
        lines.append(f"  no {GOLD_FILE} at the fleet root: no graded before and after")
    if eff.gold_before is None:
        lines.append("  without a gold.tsv nobody has said which note is right: a new hit below is a claim, not a success")
    changed = len(eff.hit_elsewhere) + len(eff.hit_agreeing) + len(eff.other_changes)
    lines.append(f"  miss log: {eff.misses_asked} question(s) asked again, {changed} verdict(s) changed")
    lines.append(f"    {len(eff.hit_elsewhere)} now a hit on a note the text leg did not put first "
                 "(a claim nobody has checked: read these first)")
    for h in eff.hit_elsewhere:
        lines.append(f"      {printable(h['question'])}  -> hit on {printable(h['note'] or '')} "
                     f"(text leg first: {printable(h['text_first'] or 'nothing')})")
    lines.append(f"    {len(eff.hit_agreeing)} now a hit on the note the text leg put first (the two scorers agree)")
    for h in eff.hit_agreeing:
        lines.append(f"      {printable(h['question'])}  -> hit on {printable(h['note'] or '')}")
    if eff.other_changes:
        lines.append(f"    {len(eff.other_changes)} other verdict change(s)")
        for h in eff.other_changes:
            lines.append(f"      {printable(h['question'])}: {h['before']} -> {h['after']} "
                         f"{printable(h['note'] or '')}")
    for c in eff.owner_changes:
        lines.append(f"  owner changes ({c['source']}): {printable(c['question'])}: {c['from']} -> {c['to']}")
    return lines


def _written_lines(proposals: list[NoteProposal], written: list[str], refused: list[str],
                   skipped: list[str]) -> list[str]:
    """What --write did: written, skipped and refused, and the labels it left short of W06."""
    summary = f"wrote {len(written)} note(s)"
    if skipped:
        summary += f"; skipped {len(skipped)} with nothing to write (listed below, with why; not an error)"
    if refused:
        summary += f"; refused {len(refused)} (listed below, and on stderr)"
    lines = ["", summary]
    lines += [f"  skipped: {printable(x)}" for x in skipped]
    lines += [f"  refused: {printable(x)}" for x in refused]
    if written:
        lines.append(MARK_ADVICE)
    short = _short(proposals, written)
    if short:
        lines.append(f"{len(short)} of the {len(written)} label(s) written hold fewer than {THIN_ASK} keys: "
                     + W06_ADVICE.format(ask=THIN_ASK))
    return lines
