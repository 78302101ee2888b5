"""The incremental update: bring a base's index up to date with its markdown, in one transaction.

A note is re-read only when its stat changed (or is too young for the stat to vouch for it),
re-indexed only when its bytes changed; a note gone is deleted, a folder that could not be
listed keeps its notes. What could not be read is reported and remembered, never fatal.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..notes import notefiles
from .listing_cache import keep_plan, notes_on_disk, unchanged
from .fts5search import chunk_total, refresh_common_terms
from .indexschema import meta_get, use_wal
from ..notes.notefiles import LISTING_FAILED, RACY_NS, in_gap, is_read_failure, list_notes, listing_gaps
from ..notes.mapfiles import is_map_file
from .notestore import delete_note, insert_note
from ..shared.record import factory, record
from ..rank.stemming import stems_fingerprint

if TYPE_CHECKING:
    from .prepworker import PrepWorker


@record(frozen=False)
class IndexReport:
    """What one update of a base's index did."""

    base: str
    files: int = 0
    entries: int = 0
    chunks: int = 0
    unchanged: int = 0
    changed: int = 0
    added: int = 0
    removed: int = 0
    unreachable: list[str] = factory(list)  # notes with no Search for: line
    skipped: list[str] = factory(list)  # "path: why", files that could not be read
    warnings: list[str] = factory(list)  # "path:line: what", indexed anyway
    rebuilt: bool = False  # the file was damaged and replaced
    rebuilt_for_version: bool = False  # ... or written by another version of kb (an upgrade)
    seconds: float = 0.0

    @property
    def touched(self) -> int:
        return self.changed + self.added + self.removed


# How far a ctime may lag the fine clock that stamps indexed_at_ns: the kernel stamps files
# from a coarse clock (a jiffy: 10 ms at the slowest, HZ=100), so a change made just after an
# update began can carry a ctime just before it. Far below RACY_NS, because a ctime cannot be
# set back by anyone; and no more than that, since a note changed just before an update is read
# by it (a wider margin only made notes copied just before an index young once more).
CTIME_SLACK_NS = 10_000_000


def young(st: os.stat_result, young_from: int) -> bool:
    """Whether the note may have changed since the update that set `young_from` (racy_from)
    without its stat showing it. The mtime can be set back (`cp -p`, `rsync -t`, `touch -r`,
    an unpacked archive), so a note replaced by one of the same size and mtime kept its stale
    answer for good; its ctime cannot be set, and any write, rename over or chmod puts it
    after the update began (git's racy check reads it too)."""
    mtime_from, mtime_to, ctime_from = young_window(young_from)
    return mtime_from <= st.st_mtime_ns < mtime_to or st.st_ctime_ns >= ctime_from


def young_window(young_from: int | None) -> tuple[int, int, int]:
    """(mtime from, mtime to, ctime from): a note is young when its mtime is in [from, to) or
    its ctime is at or past ctime from. With no update to be young against, none is."""
    if young_from is None:
        return 1, 0, 1 << 126
    indexed_at = young_from + RACY_NS
    # An mtime past the update by more than a clock's grain is a skewed stamp (an archive from
    # a machine whose clock ran ahead, `touch -d tomorrow`), not a racy one: it made the note
    # young until the clock caught up, so every question re-indexed. Any change to the note
    # since moves its ctime, which still says so.
    return young_from, indexed_at + RACY_NS, indexed_at - CTIME_SLACK_NS


def racy_from(con: sqlite3.Connection) -> int | None:
    """Notes with an mtime at or after this may have changed without their stat showing it."""
    last = meta_get(con, "indexed_at_ns")
    return int(last) - RACY_NS if last else None


STEMS_KEY = "stems"  # meta: the fingerprint of the stemmer that made the index's stems


def stems_differ(con: sqlite3.Connection) -> bool:
    """Whether the index holds notes stemmed by another stemmer than this process's (a
    PyStemmer upgrade): its stems would no longer meet a question's. An index with no notes
    holds no stems, and an index from before the fingerprint was kept is another stemmer's."""
    if con.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None:
        return False
    return meta_get(con, STEMS_KEY) != stems_fingerprint()


def bring_up_to_date(con: sqlite3.Connection, root: Path, report: IndexReport, force: bool) -> None:
    """The index made to match the markdown under `root`, in one write transaction; `report`
    says what changed and what could not be read. `force` re-reads every note."""
    # The writer's modules (parsing, chunking, streaming a large note) are imported when a
    # base is written, not by every route's stale check.
    from ..notes.bignote import STREAM_ABOVE_BYTES

    started_ns = time.time_ns()
    # A folder that cannot be listed (no permission, out of file descriptors) is not a folder
    # emptied: its notes stay indexed as they were, and the answer says the listing failed.
    on_disk, list_problems = list_notes(root)
    gaps = listing_gaps(list_problems)
    report.skipped.extend(list_problems)
    skipped_stats: dict[str, str] = {}
    con.execute("BEGIN IMMEDIATE")
    changes_before = con.total_changes
    try:
        # Read under the write lock: another process may have indexed while this one waited.
        known = {
            r[0]: (r[1], r[2], r[3], r[4], bool(r[5]), r[6])
            for r in con.execute("SELECT path, id, mtime_ns, size, hash, is_entry, chunks FROM files")
        }
        young_from = racy_from(con)
        for rel in sorted(known):
            if (rel not in on_disk and not in_gap(rel, gaps)) or is_map_file(rel):
                delete_note(con, known[rel][0])
                report.removed += 1
        notes = [(rel, st) for rel, st in sorted(on_disk.items()) if not is_map_file(rel)]
        # A large build's notes are read, parsed and stemmed by a second process while this
        # one writes them, when a core is free for it (engine/index/prepworker.py); a large note
        # streams here.
        to_read = [
            (rel, st, _hash_held(known.get(rel), force)) for rel, st in notes
            if _must_read(known.get(rel), st, force, young_from) and st.st_size <= STREAM_ABOVE_BYTES
        ]
        ahead = _worker_for(root, to_read)
        try:
            for rel, st in notes:
                _bring_note(con, root, rel, st, known.get(rel), force, young_from, report, skipped_stats, ahead)
        finally:
            if ahead is not None:
                ahead.close()
        meta = {"skipped_stats": json.dumps(skipped_stats), STEMS_KEY: stems_fingerprint(),
                # Remembered so a later answer still says which notes it could not read.
                "skipped": json.dumps(report.skipped, ensure_ascii=False)}
        _commit_unless_unchanged(con, meta, force, con.total_changes == changes_before, young_from, notes, started_ns)
    except BaseException:
        # A COMMIT that fails on a full disk has already rolled back, and a second ROLLBACK
        # would raise over the error that says what happened.
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise
    use_wal(con)
    refresh_common_terms(con)
    _count_into(con, report)


def _commit_unless_unchanged(con: sqlite3.Connection, meta: dict[str, str], force: bool, unchanged: bool,
                             young_from: int | None, notes: list, started_ns: int) -> None:
    """The update's transaction ended: rolled back when it changed nothing, else committed with
    its meta and stamp. unchanged: no row was written since BEGIN."""
    if (not force and unchanged and young_from is not None
            and not any(young(st, young_from) for _, st in notes)
            and all(meta_get(con, key) == value for key, value in meta.items())):
        # Nothing to write: the index stays byte for byte and stat for stat as it was, so
        # every cache keyed on its file state stays valid (a hook's no-op `kb index` made
        # the next route at 60,000 chunks rebuild them, ~1 s). Its stamp stays the last
        # update's: no note is young against it, so none needs a later one.
        con.execute("ROLLBACK")
    else:
        for key, value in meta.items():
            con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
        con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('indexed_at_ns', ?)", (str(started_ns),))
        con.execute("COMMIT")


def _count_into(con: sqlite3.Connection, report: IndexReport) -> None:
    """The index's totals, unreachable notes and warnings, as the report gives them."""
    report.files = con.execute("SELECT count(*) FROM files").fetchone()[0]
    report.entries = con.execute("SELECT count(*) FROM files WHERE is_entry").fetchone()[0]
    report.chunks = chunk_total(con)
    report.unreachable = [r[0] for r in con.execute("SELECT path FROM files WHERE NOT is_entry ORDER BY path")]
    for path, problems in con.execute("SELECT path, problems FROM files WHERE problems != '[]' ORDER BY path"):
        report.warnings.extend(f"{path}: {p}" for p in json.loads(problems))


def _must_read(old: tuple | None, st: os.stat_result, force: bool, young_from: int | None) -> bool:
    """Whether a note's stat leaves it to be read: new, touched, too young, or forced."""
    sig = (st.st_mtime_ns, st.st_size)
    return not (old and not force and (old[1], old[2]) == sig and (young_from is None or not young(st, young_from)))


def _hash_held(old: tuple | None, force: bool) -> str | None:
    """The hash that lets a touched note skip parsing: the index's, unless forced."""
    return old[3] if old and not force else None


# A second process pays for its start (an interpreter and the engine's modules, ~60 ms of
# CPU) and for carrying each prepared note back (a value frame each way, engine/index/helperprocess.py), so it is started
# only for a build of at least this many bytes of notes, and only when a core is free: at a
# load average above the cores less one, the two processes would take turns on one core
# and the build would cost that much more CPU for no less time (docs/quality.md).
WORKER_MIN_BYTES = 4 << 20


def worker_wanted(n_bytes: int) -> bool:
    if n_bytes < WORKER_MIN_BYTES:
        return False
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        load = os.getloadavg()[0]
    except (OSError, AttributeError):  # not on every platform
        load = 0.0
    return cpus >= 2 and load <= cpus - 1


def _worker_for(root: Path, to_read: list[tuple[str, os.stat_result, str | None]]) -> PrepWorker | None:
    if not worker_wanted(sum(st.st_size for _rel, st, _old in to_read)):
        return None
    from .prepworker import PrepWorker  # a large build's path only: subprocess is not a question's import

    return PrepWorker(root, to_read)


def _bring_note(
    con: sqlite3.Connection, root: Path, rel: str, st: os.stat_result, old: tuple | None, force: bool, young_from: int | None,
    report: IndexReport, skipped_stats: dict[str, str], ahead: PrepWorker | None = None,
) -> None:
    """One note on disk into the open transaction: left alone when its stat (or, touched, its
    hash) vouches for it; reported when it cannot be read; otherwise its rows replaced."""
    from ..notes.bignote import STREAM_ABOVE_BYTES, chunks as streamed_chunks, scan as scan_note
    from .prepared import Prepared, prepare

    sig = (st.st_mtime_ns, st.st_size)
    if not _must_read(old, st, force, young_from):
        report.unchanged += 1
        return
    # A large note is read in two bounded passes (engine/notes/bignote.py), never whole.
    big = scan_note(root, rel, st, notefiles.MAX_NOTE_BYTES) if st.st_size > STREAM_ABOVE_BYTES else None
    if big:
        read = Prepared(big.problem, big.hash, big.note)
    elif ahead is not None:
        read = ahead.next_result(rel)
    else:
        read = prepare(root, rel, st, _hash_held(old, force))
    if read.problem:
        report.skipped.append(read.problem)
        # What the bytes say (binary, not UTF-8, too large) holds for every reader and
        # is remembered until the stat changes; a failed read (permission denied) says
        # only who tried, so it is re-tried on the next update, not stored for everyone.
        if not is_read_failure(read.problem):
            skipped_stats[rel] = f"{st.st_mtime_ns}:{st.st_size}"
        if old:
            delete_note(con, old[0])
            report.removed += 1
        return
    h = read.hash
    if old and not force and old[3] == h:
        # Touched, not changed: remember the new stat so the next check is free.
        con.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE id = ?", (*sig, old[0]))
        report.unchanged += 1
        return
    note = read.note
    if old:
        delete_note(con, old[0])
        report.changed += 1
    else:
        report.added += 1
    insert_note(con, note, h, sig, report.warnings, streamed_chunks(root, rel, big) if big else None, read.rows)


def is_stale(root: Path, read) -> bool:
    """Cheap check: has any note been added, removed, or touched since the last index?
    `read(fn)` runs `fn(connection)` against the index (TextIndex's guarded read)."""
    said = json.loads(read(lambda c: meta_get(c, "skipped")) or "[]")
    known = read(lambda c: dict(c.execute("SELECT path, mtime_ns || ':' || size FROM files")))
    skips = json.loads(read(lambda c: meta_get(c, "skipped_stats")) or "{}")
    return notes_changed(root, known, skips, said, read(racy_from))


def notes_changed(root: Path, known: dict[str, str] | Callable[[], dict[str, str]], skips: dict[str, str],
                  said: list[str], young_from: int | None, stamp: tuple | None = None) -> bool:
    """Whether the notes below `root` differ from what an index recorded: `known` and `skips`
    map a path to its "mtime_ns:size" (indexed, or skipped for its bytes), `said` is the
    skipped lines it reported, `young_from` as racy_from. is_stale asks it with what the
    index holds; the opening cache (engine/index/catalogue_cache.py) with what it kept, and with
    `stamp`, the index state those describe: then a check that finds nothing changed keeps
    its plan, and the next one against the same state runs it (listing_cache.unchanged).
    `known` may be given as a function, called only when the plan does not decide."""
    if stamp is not None and unchanged(root, stamp):
        return False
    if callable(known):
        known = known()
    on_disk, problems = notes_on_disk(root, len(known))  # the walk, or its kept listing when no folder moved
    changed = _differs(on_disk, problems, known, skips, said, young_from)
    if stamp is not None and not changed:
        keep_plan(root, stamp, on_disk, young_window(young_from)[2])
    return changed


def _differs(on_disk: dict[str, os.stat_result], problems: list[str], known: dict[str, str],
             skips: dict[str, str], said: list[str], young_from: int | None) -> bool:
    """notes_changed's verdict on the notes as listed (see there)."""
    gaps = listing_gaps(problems)
    # A listing that fails, or fails no more, is news the stored answer must tell.
    if {p for p in problems if LISTING_FAILED in p} != {p for p in said if LISTING_FAILED in p}:
        return True
    # young() written out: this loop runs over every note of every base on every one-shot.
    mtime_from, mtime_to, ctime_from = young_window(young_from)
    for rel, st in on_disk.items():
        mtime = st.st_mtime_ns
        sig = f"{mtime}:{st.st_size}"
        # A changed stat, or the same one too young to prove the same content; a map file
        # (index.md's kind) is not a note and never tells.
        if ((known.get(rel) != sig and skips.get(rel) != sig) or mtime_from <= mtime < mtime_to
                or st.st_ctime_ns >= ctime_from) and not is_map_file(rel):
            return True
    # A note that was skipped and is gone must leave the skipped list too.
    return any(rel not in on_disk and not in_gap(rel, gaps) for rel in (*known, *skips))
