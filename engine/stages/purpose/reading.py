"""The fusion stage applied to Memory's reading list: the one seam between the two.

Memory computes the fused RRF pool (every keyword-ranked entry and the text leg's constant
width of files); this module re-orders that pool for a purpose and hands back the same
(id, score, ranks) rows Memory already renders, plus each row's contributions and the page
stamp. The owner and the verdict never pass through here.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.stages.purpose.errors import FusionOptionError
from engine.stages.purpose.facts import NoteFacts, facts_from_records
from engine.stages.purpose.stage import FusionOptions, PoolRow, order_pool, parse_options
from engine.stages.purpose.stamp import check_stamp
from engine.stages.purpose.weights import DEFAULT_PURPOSE, PURPOSE_DEFAULT_ON, PURPOSE_NAMES


@dataclass(frozen=True)
class FusedReading:
    rows: list[tuple[str, float, Any]]  # Memory's fused rows, re-ordered: (id, rrf score, ranks)
    fusion: dict[str, dict[str, Any]]  # id -> the row's contributions, for Result.fusion
    stamp: dict[str, Any]  # the page stamp, for answer.stages["fusion"]


def options_for(
    purpose: Any = None,
    near: Any = None,
    boosts: Any = None,
    *,
    bases: Mapping[str, str | os.PathLike[str]] | None = None,
) -> FusionOptions | None:
    """The validated options, or None when the stage is off. Called before any work.

    `purpose=False` is the one off switch; None means "the build's default", which is off
    while PURPOSE_DEFAULT_ON is False. A `near` entry may be an id ("zed/knowledge/x.md") or a
    path to a note on disk inside one of `bases`, which is turned into its id.
    """
    if purpose is None and PURPOSE_DEFAULT_ON:
        purpose = DEFAULT_PURPOSE
    if purpose is None or purpose is False:
        if near is not None or boosts:
            raise FusionOptionError(
                f"near and boosts order a purpose's fusion: name one ({', '.join(PURPOSE_NAMES)})"
            )
        return None
    if bases and isinstance(near, (list, tuple)):
        near = [path_to_id(n, bases) if isinstance(n, str) else n for n in near]
    opts = parse_options(purpose, near, boosts or ())
    if bases and opts.near:
        # An anchor that names no note is a typo, not a statement: refuse it by name.
        missing = [n for n in opts.near if not _note_exists(n, bases)]
        if missing:
            raise FusionOptionError(f"near: {', '.join(missing)} is not a note in this fleet (give base/path or a file path)")
    return opts


def _note_exists(note_id: str, bases: Mapping[str, str | os.PathLike[str]]) -> bool:
    base, _, path = note_id.partition("/")
    try:
        return base in bases and (Path(bases[base]) / path).is_file()
    except OSError:  # a name too long for the file system names no note either
        return False


def path_to_id(item: str, bases: Mapping[str, str | os.PathLike[str]]) -> str:
    """A note's path on disk to its "base/path" id; anything else comes back unchanged."""
    p = Path(item).expanduser()
    if not p.is_file():
        return item
    p = p.resolve()
    for name, root in bases.items():
        try:
            rel = p.relative_to(Path(root).resolve())
        except ValueError:
            continue
        return f"{name}/{rel.as_posix()}"
    return item


# Facts per catalogue snapshot: keyed by the snapshot object itself (held weakly), so a new
# snapshot (notes changed) rebuilds them and a dead one frees them.
_facts: dict[int, tuple[weakref.ref, NoteFacts]] = {}
_facts_lock = threading.Lock()


def facts_for(snapshot: Any, records: Mapping[str, Mapping[str, Any]]) -> NoteFacts:
    key = id(snapshot)
    with _facts_lock:
        hit = _facts.get(key)
        if hit is not None and hit[0]() is snapshot:
            return hit[1]
    facts = facts_from_records({b: list(recs.values()) for b, recs in records.items()})
    with _facts_lock:
        for k in [k for k, (ref, _) in _facts.items() if ref() is None]:
            del _facts[k]
        try:
            _facts[key] = (weakref.ref(snapshot), facts)
        except TypeError:
            pass  # an object that cannot be referenced weakly is simply not cached
    return facts


def fuse_reading_list(
    fused: Iterable[tuple[str, float, Any]],
    *,
    options: FusionOptions,
    snapshot: Any,
    records: Mapping[str, Mapping[str, Any]],
    base_roots: Mapping[str, str | os.PathLike[str]],
    now_ms: int | None = None,
    generation: int | None = None,
    offset: int = 0,
    limit: int | None = None,
) -> FusedReading:
    """Re-order Memory's fused pool for `options`. Checks (or writes) each base's fusion stamp
    first and raises FusionStampMismatch on a disagreement; raises FusionOptionError when an
    explicit anchor is not a note of this fleet."""
    stamp_errors = []
    for name, root in base_roots.items():
        try:
            check_stamp(root)
        except OSError as e:
            # A read-only base cannot be stamped; like an unwritable miss log, the answer
            # still comes back, and the page says the stamp was not written.
            stamp_errors.append(f"{name}: {e.strerror or e}")
    known = {f"{b}/{p}" for b, recs in records.items() for p in recs}
    if options.near:
        missing = [n for n in options.near if n not in known]
        if missing:
            raise FusionOptionError(f"near: {', '.join(missing)} is not a note in this fleet (give base/path or a file path)")
    facts = facts_for(snapshot, records)
    fused = list(fused)
    by_id = {row[0]: row for row in fused}
    pool = []
    for ident, score, _ranks in fused:
        base, _, path = ident.partition("/")
        rec = records.get(base, {}).get(path)
        meta = {"agent": base, "base": base, "path": path, "id": ident}
        if rec is not None:
            meta["species"] = rec.species
            meta["title"] = rec.title
        pool.append(PoolRow(id=ident, text=float(score), date_ms=facts.date_of(ident), metadata=meta))
    out = order_pool(
        pool, purpose=options.purpose, near=options.near, boosts=options.boosts, graph=facts.graph, now_ms=now_ms
    )
    stamp = out.page(offset, limit).stamp.to_json()
    if generation is not None:
        stamp["generation"] = generation
    if stamp_errors:
        stamp["stampErrors"] = stamp_errors
    return FusedReading(
        rows=[by_id[r.id] for r in out.rows],
        fusion={r.id: r.to_json() for r in out.rows},
        stamp=stamp,
    )
