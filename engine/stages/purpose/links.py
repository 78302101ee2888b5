"""Links between notes: relative markdown links and [[wiki links]], resolved to row ids.

A row id is "base/path" (e.g. "zed/knowledge/deploy-checklist.md"). A relative link resolves
against the linking note's folder and may climb into a sibling base of the same fleet
(`../../steve/knowledge/x.md`); a wiki link resolves by path, then by file name, preferring
the linking note's own base and then the lowest id, so resolution never depends on the
order files were read in. Links to anything that is not a known note resolve to None.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

# The reading of links lives in engine/notes/links.py (kb check reads them the same way).
from ...notes.links import Link, extract_links  # noqa: F401  (re-exported for the graph and its tests)


def _norm_name(name: str) -> str:
    name = name.strip().lower()
    return name[:-3] if name.endswith(".md") else name


class LinkResolver:
    """Resolves link targets against a fixed set of note ids (one catalogue snapshot)."""

    def __init__(self, ids: Iterable[str]):
        self.ids = frozenset(ids)
        self._lower: dict[str, str] = {}
        self._by_stem: dict[str, list[str]] = {}
        for i in sorted(self.ids):
            self._lower.setdefault(i.lower(), i)
            stem = _norm_name(posixpath.basename(i))
            self._by_stem.setdefault(stem, []).append(i)

    def resolve(self, target: str, from_id: str, kind: str | None = None) -> str | None:
        """The id `target` points at from note `from_id`, or None. With no `kind` (targets
        stored as written), a relative path is tried first and then a wiki name."""
        target = target.strip()
        if not target:
            return None
        base, _, path = from_id.partition("/")
        if kind in (None, "markdown"):
            hit = self._relative(target, base, path)
            if hit or kind == "markdown":
                return hit
        return self._wiki(target, base)

    def _relative(self, target: str, base: str, path: str) -> str | None:
        if target.startswith("/"):  # rooted at the base, as most markdown viewers read it
            joined = posixpath.join(base, target.lstrip("/"))
        else:
            joined = posixpath.join(base, posixpath.dirname(path), target)
        joined = posixpath.normpath(joined)
        if joined.startswith("..") or "/" not in joined:
            return None  # climbed out of the fleet, or names a base rather than a note
        plain = unquote(joined)  # targets stored as written may still carry %20
        for cand in (joined, joined + ".md", plain, plain + ".md"):
            if cand in self.ids:
                return cand
        return None

    def _wiki(self, target: str, base: str) -> str | None:
        name = target.strip().strip("/")
        want = _norm_name(name) + ".md"
        # A path: within this base first, then as a fleet-wide "base/path".
        for cand in (f"{base}/{want}".lower(), want):
            if cand in self._lower:
                return self._lower[cand]
        # A bare name: the note with that file name, this base first, then the lowest id.
        hits = self._by_stem.get(_norm_name(posixpath.basename(name)))
        if not hits:
            return None
        if "/" in name:
            suffix = "/" + want
            hits = [h for h in hits if h.lower().endswith(suffix)] or []
            if not hits:
                return None
        own = [h for h in hits if h.startswith(base + "/")]
        return (own or hits)[0]


# A base's table of contents (its index or map at the base root) links to everything, so as
# an edge it would put every note within two hops of every other: the walk ignores it.
CONTENTS_NAMES = frozenset({"index.md", "map.md", "_map.md"})


def is_contents(note_id: str) -> bool:
    _base, _, path = note_id.partition("/")
    return path.lower() in CONTENTS_NAMES


def build_graph(
    links: Mapping[str, Iterable[str | Link]], resolver: LinkResolver
) -> dict[str, tuple[str, ...]]:
    """id -> the ids it links to (resolved, sorted, once each, never itself); links from or
    to a base's table of contents are left out (see CONTENTS_NAMES)."""
    graph: dict[str, tuple[str, ...]] = {}
    for src, targets in links.items():
        if is_contents(src):
            continue
        seen: set[str] = set()
        for t in targets:
            hit = (
                resolver.resolve(t.target, src, t.kind) if isinstance(t, Link) else resolver.resolve(t, src)
            )
            if hit is not None and hit != src and not is_contents(hit):
                seen.add(hit)
        if seen:
            graph[src] = tuple(sorted(seen))
    return graph


def undirected(graph: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    """Both directions of every link: two notes are one hop apart whichever one names the other."""
    both: dict[str, set[str]] = {}
    for a, nbs in graph.items():
        for b in nbs:
            if a == b:
                continue
            both.setdefault(a, set()).add(b)
            both.setdefault(b, set()).add(a)
    return {k: tuple(sorted(v)) for k, v in both.items()}
