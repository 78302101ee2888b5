"""The snapshot: everything routing needs that changes only when notes change, built from
each base's opening (engine/index/catalogue_cache.py) and swapped whole by Memory
(engine/memory.py), so a question being scored never sees half of an update."""

from __future__ import annotations

import os
from pathlib import Path

from ..shared.record import record, replace

from ..notes.aliases import Alias, load_aliases
from ..notes.notefiles import on_base
from ..rank.catalogue import Catalogue
from . import catalogue_cache, collector
from .notestore import FileRecord


@record
class Snapshot:
    """Everything routing needs that changes only when notes change; swapped whole."""

    catalogue: Catalogue
    records: dict[str, dict[str, FileRecord]]  # base -> path -> record
    aliases: tuple[Alias, ...]
    alias_problems: tuple[str, ...]
    unreachable: tuple[str, ...]
    skipped: tuple[str, ...]
    chunks: int
    generation: int
    aliases_sig: tuple[int, ...] | None = None  # kb-aliases.txt's stat (file_sig) when read
    openings: dict | None = None  # base -> catalogue_cache.Opening the snapshot was built from


def file_sig(path: Path) -> tuple[int, ...] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    # The inode and ctime too: a file replaced keeping its size and mtime (`cp -p`, an atomic
    # rename of a copy) kept the old aliases in a long-lived process for good.
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def build_snapshot(fleet, indexes: dict, fleet_openings, generation: int, checked: dict | None = None) -> Snapshot:
    """The fleet's snapshot numbered `generation`.

    Each base's records and catalogue rows come from its opening cache when that is current
    (engine/index/catalogue_cache.py), decoded as a question needs them; a base whose stale
    check just read its cache (`checked`: base -> opening) is not looked up again."""
    checked = checked or {}
    openings = {
        b.name: checked.get(b.name) or catalogue_cache.opening(indexes[b.name]) for b in fleet.bases
    }
    if fleet_openings is not None:
        fleet_openings.keep(openings)
    records = {name: catalogue_cache.Records(op) for name, op in openings.items()}
    unreachable = [f"{name}/{path}" for name, op in openings.items() for path in op.unreachable]
    chunks = sum(op.chunks for op in openings.values())
    skipped = [
        on_base(name, s) for name, op in openings.items() for s in catalogue_cache.shown_skipped(indexes[name], op)
    ]
    aliases_sig = file_sig(fleet.aliases_path)  # before the read: a later edit is seen
    aliases, alias_problems = load_aliases(fleet.aliases_path)
    snap = Snapshot(
        catalogue=catalogue_cache.FleetCatalogue(openings, fleet_root=os.fspath(fleet.root)),
        records=records,
        aliases=tuple(aliases),
        alias_problems=tuple(alias_problems),
        unreachable=tuple(sorted(unreachable)),
        skipped=tuple(skipped),
        chunks=chunks,
        generation=generation,
        aliases_sig=aliases_sig,
        openings=openings,
    )
    if chunks >= collector.FREEZE_ABOVE_CHUNKS:
        collector.out_of_sight()  # the one GC policy: engine/index/collector.py
    return snap


def with_aliases(snap: Snapshot, aliases_path: Path, sig: tuple[int, ...] | None, generation: int) -> Snapshot:
    """`snap` with kb-aliases.txt read again (its stat now `sig`), numbered `generation`."""
    aliases, problems = load_aliases(aliases_path)
    return replace(
        snap, aliases=tuple(aliases), alias_problems=tuple(problems), aliases_sig=sig,
        generation=generation,
    )


def brought_up(indexes: dict, *, stale_only: bool, force: bool = False) -> tuple[list, dict]:
    """Each base's IndexReport (None: a stale check found it current, nothing was written), and
    base -> the opening that stale check read, for the snapshot built next."""
    reports = []
    checked = {}
    for name, idx in indexes.items():
        # From the opening cache when it is current: then no connection is opened.
        if stale_only:
            op, stale = catalogue_cache.stale_check(idx)
            if not stale and not idx.was_rebuilt:
                if op is not None:
                    checked[name] = op
                reports.append(None)
                continue
        reports.append(idx.update(force=force))
    return reports, checked
