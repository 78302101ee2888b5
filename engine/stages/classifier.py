"""The classifier: a process, named in fleet.txt, that chooses who answers.

Finding the note is a lookup and the keyword scorer does it exactly. Choosing the agent is a
judgement about a subject, and no count of shared words makes it: a score of zero says "no
match", never "no one here does this kind of work". So `classifier = COMMAND` names a
process that reads the dossier on stdin and answers four lines on stdout (SUBJECT, REASON,
COVERAGE, OWNER). Any model behind any runtime satisfies that, and kb gains no dependency
and no network code for it.

It runs after retrieval and never inside it: it cannot change the keyword ranking, the
reading list or the verdict, only who answers. Any failure (not found, non-zero exit, past
its timeout, a missing or garbled line, a name off the roster) falls back to the
deterministic fold, and the answer says which chose and why, so a fleet never stops
answering because a model was unavailable, and a dead classifier is never mistaken for a
fleet that has none.

A cascade that asks the classifier only when the fold does not dominate its field was built
and rejected ("How the Catalogue Ranks", "Why not a score, once more"): it routed a deployment question to
marketing in 971 ms because one word matched three marketing notes. The fold's score does
not know when it is wrong, so a gate on it inherits the blindness. The constant is kept so
the idea is met rather than rediscovered; nothing reads it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from ..answer import AgentChoice
from ..notes.atomic import write_atomic
from ..clean import flat, shown
from dataclasses import replace
from .dossier import ANSWER_FIELDS, COVERAGES, build_dossier
from ..notes.roster import Roster
from ..notes.userstate import ensure_state_dir, state_dir

# The person's grants (engine/notes/userstate): one line per (folder, exact command), its SHA-256
# first. A cloned fleet.txt is the repository author's text, and a command it names runs
# only once the person allowed that text in that folder, as `direnv allow` does.
ALLOWED_FILE = "allowed-classifiers.txt"
ALLOWED_LIMIT = 1 << 20  # the file is the person's own; past this it is not a grant list

REJECTED_CASCADE_SHARE = 0.70  # measured and rejected 2026-08-19; never consulted (see above)
# A question is often asked again within seconds (a reader going back to it in the room, a
# `kb serve` client re-asking), and a model should not be paid twice for one identical dossier. Short, so a fixed classifier is
# consulted again on the next real question.
MEMO_SECONDS = 10.0
MEMO_SIZE = 64
REPLY_LIMIT = 64 * 1024  # more than this on stdout is not four lines; the rest is ignored
FIELD_LIMIT = 300  # a subject or a reason longer than this is cut, not trusted whole

_FIELD = re.compile(r"^[\s>*#_`-]*(SUBJECT|REASON|COVERAGE|OWNER)[\s*_`]*:[\s*_`]*(.*?)[\s*_`]*$", re.IGNORECASE)
_NO_OWNER = frozenset({"", "none", "nobody", "no one", "-", "null", "n/a"})


@dataclass(frozen=True)
class Verdict:
    """What a classifier answered, parsed; `owner` is a roster key or None."""

    subject: str
    reason: str
    coverage: str  # covered | adjacent | uncovered
    owner: str | None


@dataclass(frozen=True)
class Consultation:
    """One call to the classifier: its verdict, or why the fold chose instead."""

    command: str
    verdict: Verdict | None
    fell_back: str | None  # why the fold chose; None when the classifier did
    ms: float
    stdout: str = ""


def parse_reply(text: str, roster: Roster) -> Verdict | str:
    """The four lines, parsed tolerantly; or one line saying what is wrong with the reply.

    Models decorate (`**OWNER:** Zed`), so emphasis and case are ignored. The first line
    naming a field wins.
    """
    found: dict[str, str] = {}
    for line in text.splitlines():
        m = _FIELD.match(line)
        if m and m.group(1).upper() not in found:
            found[m.group(1).upper()] = _clean(m.group(2))
    if not found:
        return f"its reply has none of the four lines (SUBJECT, REASON, COVERAGE, OWNER): {_preview(text)}"
    missing = [f for f in ANSWER_FIELDS if f not in found]
    if missing:
        return f"its reply has no {', '.join(missing)} line"
    coverage = found["COVERAGE"].lower().strip(" .!")
    if coverage not in COVERAGES:
        return f"COVERAGE {found['COVERAGE']!r} is none of covered, adjacent, uncovered"
    said = found["OWNER"]
    owner = None
    if said.lower().strip(" .") not in _NO_OWNER:
        member = roster.resolve(said)
        if member is None:
            return f"it named {said!r}, who is not on the roster ({', '.join(roster.keys)}), so no owner"
        owner = member.key
    if coverage == "uncovered":
        owner = None  # uncovered means no agent near enough to name, whatever it wrote
    elif owner is None:
        return f"it said {coverage} but named no owner"
    return Verdict(subject=found["SUBJECT"], reason=found["REASON"], coverage=coverage, owner=owner)


def _clean(s: str) -> str:
    s = flat(s)
    return s if len(s) <= FIELD_LIMIT else s[: FIELD_LIMIT - 3] + "..."


def _preview(s: str, n: int = 60) -> str:
    s = flat(s)
    if not s:
        return "(empty)"
    return repr(s if len(s) <= n else s[:n] + "...")


def argv_for(command: str, root: Path) -> list[str]:
    """The command split like a shell would (no shell features), relative paths made absolute.

    It runs in an empty directory, so a path written relative to fleet.txt
    (`python3 ../classify.py`) has to be resolved against the fleet root first. A bare name
    on PATH and an option pass through untouched.
    """
    argv = shlex.split(command)
    out = []
    for arg in argv:
        if arg and not arg.startswith("-") and not os.path.isabs(arg) and (os.sep in arg or "/" in arg):
            cand = (root / arg)
            if cand.exists():
                arg = str(cand.resolve())
        out.append(arg)
    return out


def run(command: str, dossier: str, *, root: Path, timeout_ms: int, roster: Roster) -> Consultation:
    """Start the classifier in an empty directory outside the fleet, dossier on stdin.

    The working directory matters: a CLI runtime inspects the directory it starts in, and
    started at a fleet root it read 11,510 files on every message ("How the Catalogue Ranks": 43 to 48 s
    against a hook budget of 30). Outside the fleet rather than under .kb/, because a
    runtime that walks up looking for instruction files would find the fleet's own.
    """
    t0 = time.perf_counter()

    def done(verdict: Verdict | None, why: str | None, out: str = "") -> Consultation:
        return Consultation(command=command, verdict=verdict, fell_back=why, ms=(time.perf_counter() - t0) * 1000,
                            stdout=out)

    try:
        argv = argv_for(command, root)
    except ValueError as e:
        return done(None, f"fleet.txt: classifier = {command!r} cannot be split into a command ({e})")
    if not argv:
        return done(None, "fleet.txt: classifier = names no command")
    scratch = tempfile.mkdtemp(prefix="kb-classifier-")
    try:
        try:
            # A new session, so a timeout can end the classifier and anything it started;
            # killing only the child would leave a grandchild holding the pipe open.
            proc = subprocess.Popen(
                argv, cwd=scratch, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as e:
            return done(None, f"the classifier {argv[0]!r} could not start: {e.strerror or e}")
        except ValueError as e:  # an argument no program can be given (a NUL byte in fleet.txt)
            return done(None, f"fleet.txt: classifier = {command!r} cannot be run ({e})")
        try:
            out, err = proc.communicate(dossier.encode("utf-8"), timeout=timeout_ms / 1000)
        except subprocess.TimeoutExpired:
            _end(proc)
            return done(None, f"the classifier did not answer within {timeout_ms} ms")
        except BaseException:
            _end(proc)
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    reply = out[:REPLY_LIMIT].decode("utf-8", errors="replace")
    if proc.returncode != 0:
        last = [ln for ln in err.decode("utf-8", errors="replace").splitlines() if ln.strip()]
        tail = f": {_preview(last[-1], 100)}" if last else ""
        how = f"was killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exited with status {proc.returncode}"
        return done(None, f"the classifier {how}{tail}", reply)
    parsed = parse_reply(reply, roster)
    if isinstance(parsed, str):
        return done(None, f"the classifier's answer was not usable: {parsed}", reply)
    return done(parsed, None, reply)


def _end(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.communicate(timeout=2)
    except subprocess.TimeoutExpired:
        pass  # a grandchild that escaped the group holds a pipe; do not wait on it


def _grant(root: Path, command: str) -> str:
    """The grant of one command in one folder: the folder's real path and the exact text."""
    digest = hashlib.sha256(os.fsencode(os.path.realpath(root)))
    digest.update(b"\0" + command.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _allowed_path() -> Path:
    return state_dir() / ALLOWED_FILE


def _grants() -> set[str]:
    try:
        with open(_allowed_path(), "rb") as f:
            text = f.read(ALLOWED_LIMIT).decode("utf-8", "replace")
    except OSError:  # none yet (or unreadable): nothing is allowed
        return set()
    return {ln.split(" ", 1)[0] for ln in text.splitlines() if ln.strip()}


def is_allowed(root: Path, command: str) -> bool:
    return _grant(root, command) in _grants()


def allow(root: Path, command: str) -> Path:
    """Record that the person allows `command` in the fleet at `root`; the file it wrote."""
    path = ensure_state_dir() / ALLOWED_FILE
    grant = _grant(root, command)
    try:
        old = path.read_bytes()[:ALLOWED_LIMIT].decode("utf-8", "replace")
    except FileNotFoundError:
        old = ""
    if grant not in {ln.split(" ", 1)[0] for ln in old.splitlines()}:
        line = f"{grant} {shown(os.path.realpath(root))} {shown(command)}\n"  # the rest is for a person to read
        write_atomic(path, (old if not old or old.endswith("\n") else old + "\n") + line, mode=0o600)
    return path


def not_allowed(root: Path, command: str) -> str:
    """The one line a fleet gets whose classifier the person has not allowed."""
    return (f"{shown(str(root / 'fleet.txt'))}: classifier = {shown(command)!r} has not been allowed on this machine, "
            f"so it did not run (`kb allow {shlex.quote(shown(str(root)))}` lets this command run)")


def choose(fold_choice: AgentChoice, consultation: Consultation, scored_files: dict[str, int]) -> AgentChoice:
    """The answer's agent: the classifier's when it answered, else the fold's with the reason.

    `scored_files` counts, per agent, the files the keyword scorer matched. The totals stay
    the fold's, so a reader can still see what the arithmetic said.
    """
    v = consultation.verdict
    if v is None:
        return replace(fold_choice, chosen_by="fold", note=consultation.fell_back)
    totals = {t.agent: t.score for t in fold_choice.totals}
    owner = v.owner
    score = totals.get(owner, 0.0) if owner else 0.0
    margin = fold_choice.margin if owner and owner == fold_choice.name else None
    return replace(
        fold_choice, name=owner, score=score, files=scored_files.get(owner, 0) if owner else 0, margin=margin,
        chosen_by="classifier", coverage=v.coverage, subject=v.subject, reason=v.reason, note=None,
    )


class Classifier:
    """The configured classifier of one Memory, with a short memo of identical dossiers."""

    def __init__(self, roster: Roster):
        self.roster = roster
        self.command = roster.classifier
        self._memo: OrderedDict[str, tuple[float, Consultation]] = OrderedDict()
        self._lock = threading.Lock()

    def consult(self, dossier: str) -> Consultation:
        assert self.command
        if not is_allowed(self.roster.root, self.command):  # read each time: an allow made meanwhile counts
            return Consultation(command=self.command, verdict=None, fell_back=not_allowed(self.roster.root, self.command),
                                ms=0.0)
        now = time.monotonic()
        with self._lock:
            hit = self._memo.get(dossier)
            if hit is not None and now - hit[0] < MEMO_SECONDS:
                return hit[1]
        c = run(self.command, dossier, root=self.roster.root, timeout_ms=self.roster.classifier_timeout_ms,
                roster=self.roster)
        with self._lock:
            self._memo[dossier] = (time.monotonic(), c)
            self._memo.move_to_end(dossier)
            while len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        return c


def classified(classifier: Classifier, roster: Roster, question: str, keyword, fold_choice: AgentChoice) -> AgentChoice:
    """The owner as `choose` rules it, from the classifier's reading of the question's dossier."""
    text = build_dossier(roster, question, keyword, fold_choice.totals)
    files: dict[str, int] = {}
    for k in keyword:
        files[k.base] = files.get(k.base, 0) + 1
    return choose(fold_choice, classifier.consult(text), files)
