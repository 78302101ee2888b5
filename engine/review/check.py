"""kb check: grade every base's labels and links, and say exactly where each problem is.

`check(fleet_or_memory)` returns a list of `Finding`s, each naming its file and line, sorted
by file then line. It reads the notes from disk (never the index) and writes nothing, so
the reading room can call it at any time and open a finding's file at its line.

Errors are notes the router cannot use as written; warnings are notes it uses badly.

  E01  error    broken relative link: a markdown link or [[wiki link]] that points at
                nothing on disk (links under templates/ are placeholders and are exempt;
                links inside code are examples and are not read)
  E02  error    a note no question can make a HIT: it has no `Search for:` line, so the
                catalogue builds no entry for it (the text search still finds it)
  E03  error    a `Search for:` line that is not directly under the title: the catalogue
                reads the label only there, so this note is unreachable too
  E04  error    a `Search for:` line with no keys on it
  E05  error    a note kb cannot read (not UTF-8, binary, too large, permission denied)
  E06  error    a kb-aliases.txt line that is not in force (not `alias = canonical`, or
                made only of stopwords)
  W01  warning  a base with no agent.txt: it still routes, but nothing names it, says its
                role or where it stops, so a classifier or a host is told nothing about it
  W02  warning  a key written twice on one note's line (the same words, whatever the case
                or punctuation)
  W03  warning  an empty note
  W04  warning  an alias whose canonical matches no label, title, file name or purpose in
                the fleet, so the line adds nothing
  W06  warning  thin keyword line: under 12 distinct keys (engine/notes/thin.py). A question uses
                words the writer did not think of; aim for 30, in both languages, including
                the words somebody types from inside the problem ("How the Catalogue Ranks", "Writing a label")
  W07  warning  unsearchable key: a written key that collapses after stopwords into one
                different word or into nothing, as `nao contestar` became `contestar`,
                its own opposite
  W08  warning  a base reached a second time through a link (`ln -s zed fleet/zed2`): it
                is counted once, under its own folder's name, and the link is ignored
  W09  warning  a note of a plain folder with no `Search for:` line: E02's finding where
                no fleet is around it. A plain folder is supported as it is (the text
                search answers); a label is the next step, not a repair

A plain folder (one base, no fleet.txt above it, no agent.txt in it) is held to what it is:
W01 is not given (nobody routes between agents there) and its unlabelled notes are W09, so a
plain folder with nothing broken passes `kb check`.

E02 (W09 in a plain folder), E03 and E04 together are exactly the notes `kb index` counts as unreachable, and E05
and W03 the notes it skips: one predicate, so the linter and the index never disagree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath

from ..notes.aliases import read_aliases
from ..rank.catalogue import Catalogue, make_entry
from ..notes.fleet import ALIASES_FILE, Fleet, discover
from ..notes.links import FENCE, links_in_line
from ..rank.normalize import terms, words
from ..notes.mapfiles import is_map_file
from ..notes.note import Note, parse_note
from ..stages.purpose.links import LinkResolver
from ..notes.notefiles import list_notes, listing_gaps, read_note
from ..notes.thin import THIN_ASK, distinct_terms, is_thin

LINK_EXEMPT_DIRS = frozenset({"templates"})  # a template's [[links]] are placeholders

ERROR = "error"
WARNING = "warning"



@dataclass(frozen=True)
class Finding:
    """One problem at one place. `path` is relative to the base's folder (to the fleet root
    when `base` is empty, as for kb-aliases.txt); `line` is 1-based, 0 for a whole file
    or a file that does not exist; `file` is the absolute path, for an editor to open."""

    code: str
    severity: str  # "error" or "warning"
    base: str
    path: str
    line: int
    message: str
    file: str = ""

    @property
    def where(self) -> str:
        """`base/path:line`, as printed."""
        name = f"{self.base}/{self.path}" if self.base else self.path
        return f"{name}:{self.line}" if self.line else name

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def to_json(self) -> dict:
        return asdict(self)


def check(target: object) -> list[Finding]:
    """Every finding for a fleet: a Memory, a Fleet, a path, or a list of paths."""
    fleet = _fleet_of(target)
    return check_fleet(fleet)


def _fleet_of(target: object) -> Fleet:
    if isinstance(target, Fleet):
        return target
    fleet = getattr(target, "fleet", None)
    if isinstance(fleet, Fleet):
        return fleet
    if isinstance(target, (str, os.PathLike)):
        return discover([target])
    if isinstance(target, Iterable):
        return discover(list(target))  # type: ignore[arg-type]
    raise TypeError(f"check() wants a Memory, a Fleet or paths, not {type(target).__name__}")


@dataclass
class _Read:
    base: str
    root: Path
    rel: str
    note: Note | None
    text: str | None
    plain: bool = False  # of a plain folder: an unlabelled note is W09, not E02


def _is_plain(fleet: Fleet, base) -> bool:
    """One folder of notes on its own: no fleet root, no fleet.txt above it, no agent.txt."""
    alone = not fleet.is_fleet_root and len(fleet.bases) == 1 and fleet.root == base.root
    return alone and not (base.root / "agent.txt").is_file()


def check_fleet(fleet: Fleet) -> list[Finding]:
    out: list[Finding] = []
    read: list[_Read] = []
    for link, kept, where in fleet.duplicates:
        out.append(Finding(
            "W08", WARNING, link, "", 0,
            f"the same folder as base {kept} (reached through a link): counted once, as {kept}",
            str(where),
        ))
    for base in fleet.bases:
        found, problems = list_notes(base.root)
        if problems and listing_gaps(problems[:1]) == [""]:
            # The base's own folder cannot be listed (deleted while a room held it): one line
            # naming it, not also "no agent.txt" for a folder that is not there.
            path, _, why = problems[0].partition(": ")
            out.append(Finding("E05", ERROR, "", path, 0, why, str(base.root)))
            continue
        plain = _is_plain(fleet, base)
        if not plain and not (base.root / "agent.txt").is_file():
            out.append(Finding(
                "W01", WARNING, base.name, "agent.txt", 0,
                "no agent.txt: the base routes, but nothing gives its name, role or where it stops "
                "(name = ..., role = ..., ends = ...), so a classifier or a host is told nothing about it",
                str(base.root / "agent.txt"),
            ))
        for p in problems:
            rel, _, why = p.partition(": ")
            out.append(Finding("E05", ERROR, base.name, rel, 0, why or p, str(base.root / rel)))
        for rel, st in sorted(found.items()):
            text, _raw, problem = read_note(base.root, rel, st)
            if problem:
                why = problem.split(": ", 1)[1] if ": " in problem else problem
                if why == "empty file":
                    out.append(Finding("W03", WARNING, base.name, rel, 0,
                                       "empty note: nothing to index, no question can reach it",
                                       str(base.root / rel)))
                else:
                    out.append(Finding("E05", ERROR, base.name, rel, 0,
                                       f"{why}: the note is not indexed at all", str(base.root / rel)))
                read.append(_Read(base.name, base.root, rel, None, None, plain))
                continue
            read.append(_Read(base.name, base.root, rel, parse_note(rel, text), text, plain))

    ids = [f"{r.base}/{r.rel}" for r in read]
    resolver = LinkResolver(ids)
    entries = []
    for r in read:
        if r.note is None:
            continue
        out.extend(_links(r, resolver))
        if is_map_file(r.rel):
            continue  # a map is a reading list for people: the catalogue never reads it
        out.extend(_label(r))
        if r.note.is_entry:
            n = r.note
            entries.append(make_entry(r.base, r.rel, n.title, n.purpose, n.species, n.keys))
    out.extend(_aliases(fleet, Catalogue(entries)))
    out.sort(key=lambda f: (f.base, f.path, f.line, f.code))
    return out


def _label(r: _Read) -> list[Finding]:
    n = r.note
    assert n is not None
    f = str(r.root / r.rel)
    out: list[Finding] = []

    def add(code: str, sev: str, line: int | None, msg: str) -> None:
        out.append(Finding(code, sev, r.base, r.rel, line or 0, msg, f))

    if n.label_line is None and r.plain:
        add("W09", WARNING, n.title_line or 1,
            "no `Search for:` line: the text search reaches this note, and a label under its title would let "
            "a question make it a HIT: kb label proposes one")
        return out
    if n.label_line is None:
        add("E02", ERROR, n.title_line or 1,
            "no `Search for:` line: the text search reaches this note, but no question can make it a HIT: "
            "put one directly under the title, with the phrases somebody types when they need it")
        return out
    if not n.label_under_title:
        under = f" (line {n.title_line})" if n.title_line else " (the note has no title)"
        add("E03", ERROR, n.label_line,
            f"the `Search for:` line is not directly under the title{under}: the catalogue reads it only "
            "there, so no question can reach this note")
        return out
    if not n.keys:
        add("E04", ERROR, n.label_line, "the `Search for:` line has no keys, so no question can reach this note")
        return out

    seen: dict[str, str] = {}
    for key in n.keys:
        written = " ".join(words(key))
        if written in seen:
            add("W02", WARNING, n.label_line, f"key `{key}` is written twice on this line (also `{seen[written]}`)")
            continue
        seen[written] = key
        collapsed = terms(key)
        if not collapsed:
            add("W07", WARNING, n.label_line,
                f"unsearchable key `{key}`: made only of stopwords, it reaches neither index and no question "
                "can find it")
        elif len(collapsed) == 1 and collapsed[0] != written:
            add("W07", WARNING, n.label_line,
                f"unsearchable key `{key}`: the stopwords around it are dropped and it is indexed as "
                f"`{collapsed[0]}` alone, so it is never matched as written and every question with "
                f"`{collapsed[0]}` in it scores it. Rewrite it so the words that carry the meaning survive: "
                "`nao contestar` was indexed as `contestar`, its own opposite, until it became `proibido contestar`")
    if is_thin(n.keys):  # the same rule kb label widens by (engine/notes/thin.py)
        count = len(distinct_terms(n.keys))
        add("W06", WARNING, n.label_line,
            f"thin keyword line: {count} term{'s' if count != 1 else ''}. A question uses words the writer "
            f"did not think of, so a short list is a note reachable by luck. Aim for {THIN_ASK}, in both "
            "languages, including the words somebody types from inside the problem")
    return out


def _links(r: _Read, resolver: LinkResolver) -> list[Finding]:
    if PurePosixPath(r.rel).parts[0] in LINK_EXEMPT_DIRS:
        return []
    assert r.text is not None
    out: list[Finding] = []
    note_id = f"{r.base}/{r.rel}"
    note_dir = (r.root / r.rel).parent
    in_fence = False
    for i, line in enumerate(r.text.splitlines(), start=1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or ("[" not in line):
            continue
        for kind, target in _links_in(line):
            if kind == "markdown":
                if _exists(r.root, note_dir, target):
                    continue
                msg = f"broken link `{target}`: nothing there (from {r.rel})"
            else:
                if resolver.resolve(target, note_id, "wiki") or _exists(r.root, note_dir, target):
                    continue
                msg = f"broken link [[{target}]]: no note of that name in the fleet"
            out.append(Finding("E01", ERROR, r.base, r.rel, i, msg, str(r.root / r.rel)))
    return out


def _links_in(line: str) -> list[tuple[str, str]]:
    """(kind, target) for each link to a note on one line outside code (engine/notes/links.py)."""
    return [(link.kind, link.target) for link in links_in_line(line)]


def _exists(base_root: Path, note_dir: Path, target: str) -> bool:
    """A relative link resolves against the note's folder; a rooted one against the base."""
    where = base_root / target.lstrip("/") if target.startswith("/") else note_dir / target
    try:
        return where.exists() or where.with_name(where.name + ".md").exists()
    except (OSError, ValueError):
        return False


def _aliases(fleet: Fleet, cat: Catalogue) -> list[Finding]:
    path = fleet.aliases_path
    aliases, problems = read_aliases(path)
    rel = ALIASES_FILE
    out = [Finding("E06", ERROR, "", rel, n, f"{what}: this line is not in force", str(path)) for n, what in problems]
    for a in aliases:
        if not cat.score([list(a.canonical)]):
            canonical = " ".join(a.canonical)
            out.append(Finding(
                "W04", WARNING, "", rel, a.line,
                f"`{' '.join(a.alias)} = {canonical}`: `{canonical}` matches no label, title, file name or "
                "purpose in the fleet, so the line adds nothing",
                str(path),
            ))
    return out


def summary(findings: list[Finding]) -> tuple[int, int]:
    """(errors, warnings)."""
    errors = sum(1 for f in findings if f.is_error)
    return errors, len(findings) - errors
