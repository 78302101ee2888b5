"""What the stage knows about notes beyond the pool: their links (as a graph) and dates.

Built once per catalogue snapshot and reused by every question against it: the graph and the
dates are a function of the notes, never of the question. Two sources give the same facts:
the text index's file records (links as written, the `Date:`/`Updated:` line, mtime), or
reading the markdown directly for a folder with no index yet.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from engine.clean import is_valid_text
from engine.stages.purpose.links import LinkResolver, build_graph, extract_links, undirected
from engine.notes.textfile import read_text

# `Date: 2026-09-01`, `**Updated:** 2026-09-01 14:30`, `- Date: 2026-09-01T14:30:00Z`.
_DATE_LINE = re.compile(
    r"^\s*(?:[-*]\s+)?(?:\*\*|__)?\s*(?:date|updated)\s*(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:|:)\s*"
    r"(\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?(?:Z|[+-]\d{2}:?\d{2})?)",
    re.IGNORECASE,
)
_MAX_DATE_LINES = 200  # a note's date sits near its head; never scan a huge note for it


def parse_date_ms(text: str | None) -> int | None:
    """A written date as epoch ms (UTC when no offset is given), or None when it does not parse."""
    if not text:
        return None
    s = text.strip().replace(" ", "T", 1)
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp()) * 1000 + dt.microsecond // 1000


def date_line(text: str) -> str | None:
    """The latest `Date:`/`Updated:` value in a note's head, as written."""
    best: tuple[int, str] | None = None
    for i, line in enumerate(text.splitlines()):
        if i >= _MAX_DATE_LINES:
            break
        m = _DATE_LINE.match(line)
        if m:
            ms = parse_date_ms(m.group(1))
            if ms is not None and (best is None or ms > best[0]):
                best = (ms, m.group(1))
    return None if best is None else best[1]


@dataclass(frozen=True)
class NoteFacts:
    graph: dict[str, tuple[str, ...]]  # undirected: id -> neighbour ids
    dates: dict[str, int]  # id -> epoch ms (the written date, else the file's mtime)
    date_source: dict[str, str]  # id -> "line" or "mtime"

    def date_of(self, note_id: str) -> int | None:
        return self.dates.get(note_id)


def facts_from_records(records: Mapping[str, Iterable[Any]]) -> NoteFacts:
    """From the index: `records` maps a base name to its FileRecords (path, links, date, mtime_ns)."""
    links: dict[str, tuple[str, ...]] = {}
    dates: dict[str, int] = {}
    source: dict[str, str] = {}
    for base, recs in records.items():
        for r in recs:
            nid = f"{base}/{r.path}"
            links[nid] = tuple(r.links)
            ms = parse_date_ms(r.date)
            if ms is None:
                dates[nid], source[nid] = r.mtime_ns // 1_000_000, "mtime"
            else:
                dates[nid], source[nid] = ms, "line"
    resolver = LinkResolver(links)
    return NoteFacts(graph=undirected(build_graph(links, resolver)), dates=dates, date_source=source)


def facts_from_disk(bases: Mapping[str, str | os.PathLike[str]]) -> NoteFacts:
    """By reading the markdown: `bases` maps a base name to its directory. Hidden folders
    (the `.kb` index among them) are skipped, as the indexer skips them."""
    links: dict[str, tuple] = {}
    dates: dict[str, int] = {}
    source: dict[str, str] = {}
    for base, root in sorted(bases.items()):
        root = Path(root)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                if not fn.endswith(".md") or fn.startswith("."):
                    continue
                full = Path(dirpath) / fn
                nid = f"{base}/{full.relative_to(root).as_posix()}"
                if not is_valid_text(nid):
                    continue  # not UTF-8: the indexer skips and reports it, the graph lacks it
                try:
                    text = read_text(full, errors="replace")
                    mtime_ns = full.stat().st_mtime_ns
                except OSError:
                    continue  # unreadable: the index reports it; the graph just lacks it
                links[nid] = extract_links(text)
                ms = parse_date_ms(date_line(text))
                if ms is None:
                    dates[nid], source[nid] = mtime_ns // 1_000_000, "mtime"
                else:
                    dates[nid], source[nid] = ms, "line"
    resolver = LinkResolver(links)
    return NoteFacts(graph=undirected(build_graph(links, resolver)), dates=dates, date_source=source)

