"""kb-misses.txt: the recall-loss log, beside the fleet manifest.

One entry per distinct question: count, first seen, last seen and the question verbatim on
one tab-separated line, then an indented `looked like:` line with what the base offered back.
The count is the priority. The log is private by construction (a nutrition agent's miss is
a health question), so it is git-ignored wherever it lands.

Writers take an exclusive lock on a sibling lock file, read, update, and replace the log
atomically, so two processes recording at once lose no count.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .atomic import write_atomic

MISSES_ENV = "KB_MISSES_PATH"
HEADER = (
    "# kb-misses.txt: questions this fleet could not answer, most useful first by count.\n"
    "# count<TAB>first seen<TAB>last seen<TAB>question, then what the base offered back.\n"
    "# Private: these are real questions. It is git-ignored; do not commit it.\n"
)
_ENTRY = re.compile(r"^(\d+)\t(\S+)\t(\S+)\t(.*)$")
_LOOKED = re.compile(r"^\s+looked like:\s?(.*)$")


@dataclass
class MissEntry:
    count: int
    first_seen: str
    last_seen: str
    question: str
    looked_like: str = ""


def one_line(question: str) -> str:
    """A question as one log line: no tabs, no newlines, no control characters."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", question).strip()


def parse_log(text: str) -> list[MissEntry]:
    entries: list[MissEntry] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m = _ENTRY.match(line)
        if m:
            entries.append(MissEntry(int(m.group(1)), m.group(2), m.group(3), m.group(4)))
            continue
        lm = _LOOKED.match(line)
        if lm and entries:
            entries[-1].looked_like = lm.group(1).strip()
    return entries


def render_log(entries: list[MissEntry]) -> str:
    lines = [HEADER]
    for e in entries:
        lines.append(f"{e.count}\t{e.first_seen}\t{e.last_seen}\t{e.question}\n")
        lines.append(f"    looked like: {e.looked_like or '(nothing)'}\n")
    return "".join(lines)


def read_log(path: Path) -> list[MissEntry]:
    """Most asked first; ties by most recent."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    entries = parse_log(text)
    entries.sort(key=lambda e: (-e.count, _neg(e.last_seen), e.question))
    return entries


def _neg(s: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in s)


def record(path: Path, question: str, looked_like: list[str], today: str) -> None:
    """Add one miss. Raises OSError when the log cannot be written; the caller reports it."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    q = one_line(question)
    lock_path = path.with_name("." + path.name + ".lock")
    with open(lock_path, "a+") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            try:
                entries = parse_log(path.read_text(encoding="utf-8", errors="replace"))
            except FileNotFoundError:
                entries = []
            offered = ", ".join(looked_like)
            for e in entries:
                if e.question == q:
                    e.count += 1
                    e.last_seen = today
                    e.looked_like = offered
                    break
            else:
                entries.append(MissEntry(1, today, today, q, offered))
            write_atomic(path, render_log(entries))
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    ensure_ignored(path)


def ensure_ignored(path: Path) -> None:
    """Inside a git work tree, make sure the log (and its lock) are ignored where they land."""
    d = path.parent.resolve()
    for parent in (d, *d.parents):
        if (parent / ".git").exists():
            break
    else:
        return
    gi = d / ".gitignore"
    wanted = [path.name, "." + path.name + ".lock"]
    try:
        current = gi.read_text(encoding="utf-8") if gi.exists() else ""
    except OSError:
        return
    have = {ln.strip() for ln in current.splitlines()}
    missing = [w for w in wanted if w not in have]
    if missing:
        sep = "" if not current or current.endswith("\n") else "\n"
        try:
            write_atomic(gi, current + sep + "".join(m + "\n" for m in missing))
        except OSError:
            pass


def misses_path(fleet_root: Path) -> Path:
    env = os.environ.get(MISSES_ENV)
    return Path(env) if env else fleet_root / "kb-misses.txt"
