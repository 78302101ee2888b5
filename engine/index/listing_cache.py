"""A base's note listing, remembered by its folders' stats: the stale check's walk, shortened.

Every one-shot checks every note, so that an edit is never missed: it lists each folder of
each base (open, read the entries, close) and stats each note. A folder's entries change only
by a create, a delete or a rename in it, and each of those moves the folder's mtime and ctime;
an edit to a note moves the note's stat, not its folder's. So what the walk saw is kept at
`<base>/.kb/listing.cache`: each folder it entered, that folder's stat (device, inode, mtime,
ctime), and the names in it that can be notes. While every one of
those folders still has its stat, they hold the same names: the notes are then stat'ed by
name, exactly as the walk stats them, and no folder is listed.

What is checked on every run, and why that is enough:
- every folder the walk entered, by one stat: a note or folder added, removed or renamed
  anywhere in the base is an entry changed in one of them. ctime is compared too, because
  mtime can be set back (`touch -d`) and ctime cannot; a folder made unreadable (chmod) moves
  its ctime as well. Any difference, or a folder gone, and the whole base is walked as before
  (and a new listing kept);
- every name that could be a note (anything ending `.md` that is not hidden, files, links and
  links to folders alike), by stat, following links as the walk does: an edited note, a link
  pointed elsewhere, a note that cannot be read any more are all seen, as before.
A listing is kept only when every folder could be listed and every folder's mtime and ctime,
stat'ed after the walk, are older than RACY_NS before the walk began: then no folder changed
while it was listed, and a change in the same tick of a coarse clock cannot hide behind an
equal stat (as for notes and for the opening cache). A base of fewer than MIN_NOTES notes
keeps none: walking it costs what reading a kept listing would. In a fleet of many bases its
walk's listing is held in memory only, for the check's plan, which the fleet keeps for all its
small bases in one file (engine/index/fleet_plans.py).

Safe to read as the opening cache is (engine/index/catalogue_cache.py): kb's own value layout, signed, a
magic line and CRC-32s (engine/index/sealedfile.py), opened O_NOFOLLOW, written atomically with no
link followed; a file that is damaged, foreign or of another format is ignored and replaced,
and a listing that cannot be written is not kept (the stale check walks, as it always did).
The file also keeps the check's plan (below), read first; the folders are read only when the
plan does not decide.
"""

from __future__ import annotations

import os
import stat
import time
from array import array
from pathlib import Path

from . import fleet_plans
from ..notes.atomic import write_atomic
from .sealedfile import Damaged, encode, open_shaped, seal
from ..clean import is_valid_text, shown
from ..notes.nofollow import refuse_links
from ..notes.mapfiles import is_map_file
from ..notes.notefiles import LISTING_FAILED, RACY_NS, list_notes

CACHE_NAME = "listing.cache"
MAGIC = b"kb-listing-cache\n"
FORMAT = 3  # 3: signed, kb's own value layout; 2: the check's plan in the head, the folders in a region (engine/index/sealedfile.py)
MAX_BYTES = 64 << 20  # a listing is names and numbers: a larger file is not ours
# A base of fewer notes (as its index knows them) is walked every time and keeps no listing:
# trying to read one costs about what walking a few folders does (measured over 2,000 bases
# of 3 notes in 3 folders each: the try made the check slower, not faster).
MIN_NOTES = 64


def notes_on_disk(root: Path, known_notes: int) -> tuple[dict[str, os.stat_result], list[str]]:
    """What notefiles.list_notes(root) returns, as far as the stale check reads it (the notes
    and their stats; the folders that could not be listed), from the kept listing when no
    folder moved; else by walking, keeping the listing for the next run. `known_notes`: how
    many notes the index holds (below MIN_NOTES the base is simply walked, its listing held
    for the plan when its fleet keeps one for its small bases: engine/index/fleet_plans.py)."""
    root_s = os.fspath(root)
    _listed.pop(root_s, None)
    if known_notes < MIN_NOTES:
        if fleet_plans.of(root_s) is None:
            return list_notes(root)
        return _walked_for_plan(root, root_s)
    path = os.path.join(root_s, ".kb", CACHE_NAME)
    kept = _load(path)
    if kept is not None:
        found = _from_listing(root_s, kept)
        if found is not None:
            _listed[root_s] = kept
            return found
    started = time.time_ns()
    folders: list = []
    found, problems = list_notes(root, folders)
    if not any(LISTING_FAILED in p for p in problems):
        kept = _stamped(root_s, folders, started)
        if kept is not None and _store(root_s, path, kept):
            _listed[root_s] = kept
    return found, problems


def _walked_for_plan(root: Path, root_s: str) -> tuple[dict[str, os.stat_result], list[str]]:
    """A small base of a fleet of many, walked; its listing held (not written) when it could
    be kept, for keep_plan to make the plan the fleet keeps (engine/index/fleet_plans.py)."""
    started = time.time_ns()
    folders: list = []
    found, problems = list_notes(root, folders)
    if not any(LISTING_FAILED in p for p in problems):
        kept = _stamped(root_s, folders, started)
        if kept is not None:
            _listed[root_s] = kept
    return found, problems


# The kept listing the last notes_on_disk of each base answered from (read, or walked and
# kept; or walked and held, for a small base of a fleet): keep_plan builds the check's plan
# from it without reading the file again.
_listed: dict[str, list] = {}


def _stamped(root: str, folders: list, started: int) -> list | None:
    """The walk's folders with their stats, when every one is older than RACY_NS before the
    walk began: then none changed while it was listed (a change would have moved its stat
    past that), so the stat taken now vouches for the names listed then. None otherwise."""
    kept = []
    for under, names in folders:
        try:
            st = os.stat(os.path.join(root, under) if under else root)
        except OSError:
            return None
        if max(st.st_mtime_ns, st.st_ctime_ns) >= started - RACY_NS:
            return None
        kept.append((under, _sig(st), tuple(names)))
    return kept


def _sig(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def _from_listing(root: str, kept: list) -> tuple[dict[str, os.stat_result], list[str]] | None:
    """The notes by name when every kept folder still has its stat; None when one moved.

    A folder of several notes is opened and its notes stat'ed relative to it: a lookup of one
    name, where a stat of the whole path walks every folder above it again (measured: 19 ms
    against 26 ms for the 5,230 notes of the 60,000-chunk haystack, and against 33 ms for
    listing them). A folder of one or two notes (four in five of the haystack's 1,539) is
    stat'ed and its notes stat'ed by path: two calls for one note, where opening, checking
    and closing the folder first made four."""
    found: dict[str, os.stat_result] = {}
    problems: list[str] = []
    for under, sig, names in kept:
        folder = os.path.join(root, under) if under else root
        if len(names) <= BY_PATH_UP_TO:
            try:
                if _sig(os.stat(folder)) != sig:
                    return None
            except OSError:
                return None
            # the folder's path with its separator made once: a kept name is a file name (no
            # "/"), so this is os.path.join(folder, name) without a join per note
            prefix = os.path.join(folder, "")
            _stat_notes(under, names, lambda name: os.stat(prefix + name), found, problems)
            continue
        try:
            fd = os.open(folder, _FOLDER_FLAGS)
        except OSError:
            return None
        try:
            if _sig(os.fstat(fd)) != sig:
                return None
            _stat_notes(under, names, lambda name: os.stat(name, dir_fd=fd), found, problems)
        finally:
            os.close(fd)
    return found, problems


BY_PATH_UP_TO = 2  # notes in a folder stat'ed by path rather than through the opened folder


def _stat_notes(under: str, names, stat_of, found: dict, problems: list) -> None:
    """Each kept name of one folder as the walk sees it: stat'ed (a link followed, as the walk
    follows it), kept when a regular file, a problem when unreadable or not UTF-8."""
    for name in names:
        rel = under + name
        if not rel.isascii() and not is_valid_text(rel):
            problems.append(f"{shown(rel)}: file name is not valid UTF-8; rename it to index it")
            continue
        try:
            st = stat_of(name)
        except OSError as e:
            problems.append(f"{rel}: cannot read ({e.strerror})")
            continue
        if stat.S_ISREG(st.st_mode):
            found[rel] = st


_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _load(path: str) -> list | None:
    got = _payload(path)
    if got is None:
        return None
    try:
        rows = got[1][0].value()  # read only here: a check that its plan decides never needs them
    except Damaged:
        return None
    if type(rows) is not tuple:
        return None
    for row in rows:
        if not (type(row) is tuple and len(row) == 3 and type(row[0]) is str and type(row[1]) is tuple
                and len(row[1]) == 4 and type(row[2]) is tuple and all(type(n) is str for n in row[2])):
            return None
    return list(rows)


def _payload(path: str) -> tuple[tuple, list] | None:
    """(the head: FORMAT and the plan, [the folders' region]), or None."""
    return open_shaped(path, MAGIC, MAX_BYTES, FORMAT, 2, 1)


def _store(root: str, path: str, folders: list, plan: tuple | None = None) -> bool:
    """Keep the listing (and the check's plan); False when it could not be written."""
    try:
        if not os.path.isdir(os.path.join(root, ".kb")):
            return False  # no index here yet: nothing is created beside the notes for a listing
        refuse_links(path, below=root)  # `.kb` or the listing itself a planted link
        write_atomic(path, seal(MAGIC, (FORMAT, plan), [encode(tuple(folders))]))
    except OSError:
        return False  # a read-only fleet, a full disk, a link: the next check walks, as before
    return True


# -- the plan: "nothing changed" in one loop of stats --------------------------------------
#
# Even through the kept listing, the check spent more in Python than in its ~6,800 stats at
# 60,000 chunks: a join, a lambda, a problem test and a dict entry per note, then a string
# made and compared per note against the index's. What it concludes is a function of the
# stats alone, for a given index state: so once a check has found nothing changed against
# an index state, its inputs are kept as a plan (every folder's path and stat; every note's
# path, its indexed mtime and size; the names that were not notes) stamped with that state.
# The next check against the same state stats each path in turn and compares integers; the
# first difference hands over to the check above, which decides as it always did.


def keep_plan(root: Path, stamp: tuple, found: dict[str, os.stat_result], ctime_from: int) -> None:
    """Keep the plan of a check that found nothing changed: `found` the notes it saw (each
    with the stat the index holds for it), `stamp` the index state it compared against,
    `ctime_from` the ctime at which a note becomes too young to vouch for (young_window)."""
    root_s = os.fspath(root)
    kept = _listed.get(root_s)
    if kept is None:
        return  # walked and not kept: no listing vouches for the names
    folder_paths, note_paths, others = [], [], []
    devs, inos, folder_mtimes, ctimes, mtimes, sizes = array("Q"), array("Q"), array("q"), array("q"), array("q"), array("q")
    for under, (dev, ino, mtime, ctime), names in kept:
        folder = os.path.join(root_s, under) if under else root_s
        folder_paths.append(folder)
        devs.append(dev)
        inos.append(ino)
        folder_mtimes.append(mtime)
        ctimes.append(ctime)
        prefix = os.path.join(folder, "")
        for name in names:
            rel = under + name
            if not rel.isascii() and not is_valid_text(rel):
                continue  # never a note, whatever its stat
            if is_map_file(rel):
                continue  # never tells (the check skips it); the index holds none
            st = found.get(rel)
            if st is None:
                others.append(prefix + name)  # a link to a folder, dangling, unreadable: must stay so
            else:
                note_paths.append(prefix + name)
                mtimes.append(st.st_mtime_ns)
                sizes.append(st.st_size)
    # Paths joined by NUL (no path holds one) and numbers as arrays: a few objects to load,
    # where a tuple of every path and number was ~15,000 (2 ms of a fresh route at 60,000 chunks).
    plan = (stamp, root_s, ctime_from, "\0".join(folder_paths), devs.tobytes(), inos.tobytes(),
            folder_mtimes.tobytes(), ctimes.tobytes(), "\0".join(note_paths), mtimes.tobytes(), sizes.tobytes(),
            "\0".join(others))
    fleet = fleet_plans.of(root_s)
    if fleet is not None and not os.path.isfile(os.path.join(root_s, ".kb", CACHE_NAME)):
        fleet.add(root_s, plan)  # a small base of a fleet: its plan in the fleet's file
        return
    _store(root_s, os.path.join(root_s, ".kb", CACHE_NAME), kept, plan)


def unchanged(root: Path, stamp: tuple) -> bool:
    """True when the kept plan for `stamp` holds: every folder has its stat, every note its
    mtime and size and a ctime older than the plan's bound, every other name is still no
    regular file. False means only "ask the full check"."""
    root_s = os.fspath(root)
    fleet = fleet_plans.of(root_s)
    plan = fleet.find(root_s) if fleet is not None else None
    if plan is not None:
        if _is_plan(plan, root_s) and plan[0] == stamp and plan_holds(plan):
            return True
        fleet.failed(root_s)
        return False
    plan = kept_plan(root_s)
    return plan is not None and plan[0] == stamp and plan_holds(plan)


def kept_plan(root_s: str) -> tuple | None:
    """The plan kept in the listing of the base at `root_s` (its first value the index state it
    was made against), or None: no listing, another base's, or not a plan of our making."""
    got = _payload(os.path.join(root_s, ".kb", CACHE_NAME))
    if got is None:
        return None
    plan = got[0][1]
    return plan if _is_plan(plan, root_s) else None


def _is_plan(plan, root_s: str) -> bool:
    """Whether a kept value is a plan of our making for the base at `root_s` (sealed as ours
    is not enough: a file can be sealed right by hand)."""
    return (type(plan) is tuple and len(plan) == 12 and plan[1] == root_s and type(plan[2]) is int
            and all(type(plan[i]) is str for i in _PLAN_PATHS) and all(type(plan[i]) is bytes for i in _PLAN_NUMBERS))


def plan_holds(plan: tuple) -> bool:
    """Whether the disk still matches a kept plan (see unchanged), by one stat per path."""
    stat_of = os.stat
    try:
        ctime_from = plan[2]
        folders, devs, inos, folder_mtimes, ctimes = _paths(plan[3]), *_numbers(plan[4:8], "QQqq")
        notes, mtimes, sizes = _paths(plan[8]), *_numbers(plan[9:11], "qq")
        others = _paths(plan[11])
        for path, dev, ino, mtime, ctime in zip(folders, devs, inos, folder_mtimes, ctimes, strict=True):
            st = stat_of(path)
            if st.st_mtime_ns != mtime or st.st_ctime_ns != ctime or st.st_ino != ino or st.st_dev != dev:
                return False
        for path, mtime, size in zip(notes, mtimes, sizes, strict=True):
            st = stat_of(path)
            if st.st_mtime_ns != mtime or st.st_size != size or st.st_ctime_ns >= ctime_from or not (
                    st.st_mode & _TYPE_BITS == _REGULAR):
                return False
    except (OSError, TypeError, ValueError):
        return False  # a path gone or unreadable, or a plan not of our making
    for path in others:
        try:
            if stat_of(path).st_mode & _TYPE_BITS == _REGULAR:
                return False
        except (OSError, TypeError, ValueError):
            continue
    return True


_PLAN_PATHS, _PLAN_NUMBERS = (3, 8, 11), (4, 5, 6, 7, 9, 10)  # keep_plan's NUL-joined paths, packed arrays


def _paths(joined: str) -> list[str]:
    return joined.split("\0") if joined else []


def _numbers(packed: tuple, codes: str) -> list[array]:
    out = []
    for raw, code in zip(packed, codes, strict=True):
        numbers = array(code)
        numbers.frombytes(raw)
        out.append(numbers)
    return out


_TYPE_BITS, _REGULAR = 0o170000, stat.S_IFREG  # stat.S_IFMT's mask, a regular file's type
