"""kb-misses.txt: the recall-loss log, beside the fleet manifest, else inside kb's own `.kb/`.

Where it lives (misses_path): KB_MISSES_PATH when set; beside fleet.txt in a fleet that has
one (seed 000: "written to kb-misses.txt beside the fleet manifest", a file its owner reads
and keeps beside the file that names the fleet); otherwise `<folder>/.kb/kb-misses.txt`: a
plain folder of notes, or a fleet without a manifest, gets no file beside its notes that
nobody asked for. A log an older kb wrote beside such a folder's notes is still read and
written there while no `.kb/` log exists: an upgrade loses no count and splits no log. The
lock is kb's own, so it lives in `.kb/` whenever the log sits beside the notes.

One entry per distinct question: count, first seen, last seen and the question verbatim on
one tab-separated line, then an indented `looked like:` line with what the base offered back.
The count is the priority. The log is private by construction (a nutrition agent's miss is
a health question), so it is git-ignored wherever it lands.

Writers take an exclusive lock on a sibling lock file, read, update, and replace the log
atomically, so two processes recording at once lose no count. A question is one entry however
it was capitalised or spaced (the first wording is kept), and the file is rewritten most asked
first, so `cat` shows the worklist in order. A line the reader cannot parse is kept as it
was, never dropped: the log is evidence that cannot be recomputed.

A log of REWRITE_BELOW_BYTES or more is not read to record a miss (a route would pay for the
log's size: 1.2 s for 36 MB): the miss is appended as an entry of its own, count 1, and the
reader adds up the entries of one question. The next rewrite merges them.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from ..answer import Answer, Miss
from ..notes.atomic import append_once, write_atomic
from ..clean import log_line
from ..notes.fleet import FLEET_FILE, MISSES_FILE
from ..notes.gitignore import ensure_ignored
from ..notes.nofollow import LinkRefused, open_lock, refuse_links
from ..notes.textfile import read_regular_text, read_text, text_lines
from ..rank.question import MAX_QUESTION_CHARS

MISSES_ENV = "KB_MISSES_PATH"
HEADER = (
    "# kb-misses.txt: questions this fleet could not answer, most useful first by count.\n"
    "# count<TAB>first seen<TAB>last seen<TAB>question, then what the base offered back.\n"
    "# Private: these are real questions. Do not commit it; inside a git work tree kb lists it in .git/info/exclude.\n"
)
# Tabs as written; any run of blanks as read, because an editor may have turned the tabs
# into spaces, and a reader that then parsed nothing would let the next write erase the log.
# A count is at most 18 digits (int() refuses past 4,300, and no log reaches 10**18): a longer
# one is a damaged line, kept as unreadable rather than raising on every later miss.
_ENTRY = re.compile(r"^(\d{1,18})[ \t]+(\S+)[ \t]+(\S+)[ \t]+(.*\S)\s*$")
_LOOKED = re.compile(r"^\s+looked like:\s?(.*)$")
# The largest count a line holds (18 digits): a sum past it would make its line unreadable.
MAX_COUNT = 10**18 - 1
# Damaged lines `kb misses` names one by one, on stderr and in its JSON; the rest are counted:
# a log torn tens of thousands of times must not bury the worklist.
DAMAGED_SHOWN = 10
# A logged question is read up to this many characters (a route logs at most MAX_QUESTION_CHARS).
MAX_LOGGED_CHARS = 16 * MAX_QUESTION_CHARS

# At or above this size the log is appended to, not read and rewritten, to record a miss
# (~700 entries): the route's cost stops growing with the log there.
REWRITE_BELOW_BYTES = 64 * 1024


@dataclass
class MissEntry:
    count: int
    first_seen: str
    last_seen: str
    question: str
    looked_like: str = ""


def one_line(question: str) -> str:
    """A question as one log line: no tabs, no newlines, no control characters.

    C1 controls too (NEL, U+0085, is one). U+2028 and U+2029 are text, kept as asked: the log
    is read back a line per "\n" (engine/notes/textfile.text_lines), so they end nothing there.
    """
    # A question that does not encode (a lone surrogate) is logged repaired, not lost in a
    # UnicodeEncodeError that would also cost the reader the answer.
    return log_line(question)


def question_key(question: str) -> str:
    """What makes two wordings one question: case and spacing do not."""
    return " ".join(question.casefold().split())


def parse_lines(text: str) -> tuple[list[MissEntry], list[tuple[int, str]]]:
    """The entries, and every other non-comment line as (1-based line number, line)."""
    entries: list[MissEntry] = []
    stray: list[tuple[int, str]] = []
    owner: MissEntry | None = None  # the entry a `looked like:` line may belong to
    for n, line in enumerate(text_lines(text), start=1):
        if not line.strip():
            continue
        if line.startswith("#"):
            owner = None
            continue
        m = _ENTRY.match(line)
        if m:
            # kb logs a question cut (engine/rank/question.py); a hand-edited longer one is shown
            # as logged, up to a bound: a planted 105 MB one is cut before it is merged (whose
            # casefold and split of it cost 1 GB)
            owner = MissEntry(int(m.group(1)), m.group(2), m.group(3), m.group(4)[:MAX_LOGGED_CHARS])
            entries.append(owner)
            continue
        lm = _LOOKED.match(line)
        if lm and owner is not None:
            owner.looked_like = "" if lm.group(1).strip() == "(nothing)" else lm.group(1).strip()
            owner = None
            continue
        owner = None
        stray.append((n, line))
    return _merged(entries), stray


def _merged(entries: list[MissEntry]) -> list[MissEntry]:
    """One entry per question: a repeat (an appended miss, a hand edit) adds its count to the
    first, widens its dates, and brings what the base offered most recently (it is later)."""
    first: dict[str, MissEntry] = {}
    out = []
    for e in entries:
        key = question_key(e.question)
        had = first.get(key)
        if had is None:
            first[key] = e
            out.append(e)
            continue
        had.count = min(had.count + e.count, MAX_COUNT)
        had.first_seen = min(had.first_seen, e.first_seen)
        had.last_seen = max(had.last_seen, e.last_seen)
        had.looked_like = e.looked_like
    return out


def by_priority(entries: list[MissEntry]) -> list[MissEntry]:
    """Most asked first, then most recently asked, then by question: one order, read and written."""
    out = sorted(entries, key=lambda e: question_key(e.question))
    out.sort(key=lambda e: (e.count, e.last_seen), reverse=True)  # stable: keeps the tiebreak
    return out


def render_log(entries: list[MissEntry], stray: list[str] | tuple[str, ...] = ()) -> str:
    lines = [HEADER]
    lines += [entry_lines(e) for e in by_priority(entries)]
    if stray:
        lines.append("# Lines kb could not read as a miss, kept as they were:\n")
        lines.extend(s + "\n" for s in stray)
    return "".join(lines)


def entry_lines(e: MissEntry) -> str:
    """An entry as the log holds it: its line, then what the base offered back."""
    return f"{e.count}\t{e.first_seen}\t{e.last_seen}\t{e.question}\n    looked like: {e.looked_like or '(nothing)'}\n"


def load(path: Path) -> tuple[list[MissEntry], list[str]]:
    """The log, most asked first, and one problem line ("path:line: what") per unreadable line.

    An absent log is no misses, not an error. Raises OSError when it exists and cannot be read.
    """
    try:
        refuse_links(path)  # a log reached through a link is another file's lines (engine/notes/nofollow)
        # A FIFO's read would block forever (also one put there after a check); a folder is no log.
        text = read_regular_text(path, errors="replace")
    except FileNotFoundError:
        return [], []
    entries, stray = parse_lines(text)
    problems = [
        f"{path}:{n}: damaged line (a miss is: count, first seen, last seen, question): {line.strip()[:60]}"
        for n, line in stray
    ]
    return by_priority(entries), problems


def read_log(path: Path) -> list[MissEntry]:
    """Most asked first; ties by most recent."""
    return load(path)[0]


def record(path: Path, question: str, looked_like: list[str], today: str) -> None:
    """Add one miss. Raises OSError when the log cannot be written; the caller reports it."""
    import fcntl

    q = one_line(question)
    if not q:
        return
    refuse_links(path)  # its lines would be read from elsewhere and copied here
    try:
        st = os.stat(path)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISREG(st.st_mode):
            # A FIFO would block the read forever; a device (KB_MISSES_PATH=/dev/full) would be
            # replaced by the atomic rename, as root. Refused: the caller reports it in `miss`.
            raise OSError(errno.EINVAL, "not a regular file", str(path))
    lock_path = lock_for(path)
    for folder in {path.parent, lock_path.parent}:
        if folder.name == ".kb":
            refuse_links(folder)  # a `.kb` planted as a link would carry the log or its lock elsewhere
    path.parent.mkdir(parents=True, exist_ok=True)
    # Before the first write, so there is no moment when the log exists and git would add it.
    ensure_ignored(path)
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    # O_NOFOLLOW: a lock planted as a link would create its target (as root, /etc/nologin).
    offered = ", ".join(looked_like)
    with os.fdopen(open_lock(lock_path), "a+") as lock:
        # Taken before the read: a merge over a stale read is the lost count the lock prevents.
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            if _size(path) >= REWRITE_BELOW_BYTES:  # stat'ed under the lock: another writer may have rewritten it
                entry = entry_lines(MissEntry(1, today, today, q, offered))
                append_once(path, entry.encode("utf-8", errors="surrogateescape"))
                return
            try:
                # Bytes that are not UTF-8 (a line typed in another encoding) are carried through
                # as they were: read as replacement characters, they were lost at the next miss.
                entries, stray = parse_lines(read_text(path, errors="surrogateescape"))
            except FileNotFoundError:
                entries, stray = [], []
            key = question_key(q)
            for e in entries:
                if question_key(e.question) == key:
                    e.count = min(e.count + 1, MAX_COUNT)
                    e.last_seen = today
                    e.looked_like = offered  # what today's base offers is what the reader needs
                    break
            else:
                entries.append(MissEntry(1, today, today, q, offered))
            # 0600: a nutrition agent's miss is a health question; nobody else on the machine reads it.
            log = render_log(entries, [line for _, line in stray]).encode("utf-8", errors="surrogateescape")
            write_atomic(path, log, mode=0o600)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def misses_path(fleet_root: Path) -> Path:
    """Where this fleet's log is read and written (the module's docstring says why)."""
    # An exported but empty (or blank) variable chose no path; it is not a path called "".
    env = os.environ.get(MISSES_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    beside = fleet_root / MISSES_FILE
    if (fleet_root / FLEET_FILE).is_file():
        return beside
    inside = fleet_root / ".kb" / MISSES_FILE
    if not inside.exists() and beside.is_file():
        return beside  # an older kb's log, where the person already has it
    return inside


def lock_for(path: Path) -> Path:
    """The log's lock: kb's own empty file, so in `.kb/` when the log is at its default place
    (beside fleet.txt, or an older kb's log beside the notes); beside a log KB_MISSES_PATH names."""
    name = "." + path.name + ".lock"
    if os.environ.get(MISSES_ENV, "").strip() or path.parent.name == ".kb":
        return path.with_name(name)
    return path.parent / ".kb" / name


def recall_loss(fleet_root: Path, answer: Answer) -> Miss | None:
    """A refusal asked for real, recorded in the fleet's log (Memory.recall_loss says when).

    The write can fail (a read-only fleet); the loss still comes back, with `recorded: false`
    and the error."""
    if answer.gate.served or not answer.question.strip():
        return None  # Memory asks only of a refusal; said here too, for any other caller
    path = misses_path(fleet_root)
    today = time.strftime("%Y-%m-%d")  # today's local date, as date.today().isoformat() (no datetime import)
    offered = list(answer.suggestions)
    try:
        record(path, answer.question, offered, today)
        recorded, error = True, None
    except OSError as e:
        # A refused link names itself: it may be the lock or the .gitignore, not the log.
        where = e.filename if isinstance(e, LinkRefused) and e.filename else path
        recorded, error = False, f"{where}: {e.strerror or e}"
    return Miss(
        question=answer.question, looked_like=tuple(offered), date=today, path=str(path),
        recorded=recorded, error=error,
    )
