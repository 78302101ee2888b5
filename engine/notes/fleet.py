"""Finding the bases behind a path, and reading the fleet's small text files.

A path given to any verb is a base or a fleet root. A base is one agent's directory of
markdown; a fleet root is a directory that is not itself a base but whose immediate
children are. Neither arrangement is required: requiring one would be an assumption
about the reader's filesystem. A directory holding a map or an agent.txt of its own is a
base and is never expanded, since expanding it would silently drop the parent's notes.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..clean import shown
from ..errors import KbError
from .mapfiles import MAP_NAMES
from ..shared.record import factory, record
from .textfile import TooLarge, read_regular_text

BASE_MARKERS = ("agent.txt", "index.md", *sorted(MAP_NAMES))
FLEET_FILE = "fleet.txt"
ALIASES_FILE = "kb-aliases.txt"
MISSES_FILE = "kb-misses.txt"
# What a copy of notes leaves behind: what kb writes beside them (the index, the miss log and
# its lock). A copy indexes itself, as a new user's would. The one list every copy uses.
LEFT_BEHIND = (".kb", MISSES_FILE, f".{MISSES_FILE}.lock")


def copy_notes(src: Path, dest: Path, *also: str, notes_only: bool = False) -> Path:
    """The notes under `src` at `dest`, without LEFT_BEHIND (nor `also`); symlinks stay links.
    For `kb label`'s trial copy, the benchmarks and the tests: a measurement on a copy.

    `notes_only` copies only what kb reads (markdown and its own text files, no hidden
    folder): a docs folder's images, archives or node_modules beside the notes were copied
    whole to the temporary folder for every `kb label`, gigabytes for nothing."""
    import shutil  # for a copy: no module a route needs imports it at the top

    skip = shutil.ignore_patterns(*LEFT_BEHIND, *also)

    def ignore(folder: str, names: list[str]) -> set[str]:
        out = set(skip(folder, names))
        if notes_only:
            out.update(name for name in names if name.startswith(".") or not _read_by_kb(os.path.join(folder, name)))
        return out

    shutil.copytree(src, dest, symlinks=True, ignore=ignore)
    return dest


# The text files kb reads beside the notes (a copy with notes_only keeps them).
READ_BESIDE_NOTES = frozenset({"agent.txt", FLEET_FILE, ALIASES_FILE, "gold.tsv"})


def _read_by_kb(path: str) -> bool:
    """A folder, or a note or text file kb reads: a link (copied as a link) or a regular file.
    A FIFO or socket is never one (copying a FIFO waits for a writer forever)."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISDIR(st.st_mode):
        return True
    name = os.path.basename(path)
    return (name.endswith(".md") or name in READ_BESIDE_NOTES) and (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode))


@record
class Base:
    """One agent's folder of notes."""

    name: str  # the directory's name: the agent's key everywhere ("zed")
    root: Path
    agent: Mapping[str, str] = factory(dict)  # agent.txt: name, role, ends (an AgentCard)

    @property
    def index_path(self) -> Path:
        # Always here, and deliberately no flag to point it anywhere else.
        return self.root / ".kb" / "index.db"

    @property
    def display_name(self) -> str:
        return self.agent.get("name") or self.name


@record
class Fleet:
    """The bases a question is asked of, and the fleet's settings."""

    root: Path  # the fleet root, or the base itself when a lone base was given
    bases: tuple[Base, ...]
    settings: dict[str, str]  # fleet.txt
    is_fleet_root: bool
    # Bases reached a second time through a link (`ln -s zed fleet/zed2`): counted once, under
    # the folder's own name; kept here so `kb check` can say so. (link name, kept name, link path)
    duplicates: tuple[tuple[str, str, Path], ...] = ()

    @property
    def aliases_path(self) -> Path:
        return self.root / ALIASES_FILE


# A manifest is a few `key = value` lines; one a repository carries is read no further than this
# (a 98 MB fleet.txt cost every route 14.6 s and 1.3 GB).
MAX_MANIFEST_BYTES = 1 << 20


def read_kv(path: Path, *, strict: bool = False) -> dict[str, str]:
    """`key = value` lines; `#` comments and blank lines ignored; unreadable is empty. With
    `strict` (fleet.txt, which names the fleet and its classifier command), bytes that are not
    UTF-8 are refused in one line naming the file, not read as U+FFFD."""
    out: dict[str, str] = {}
    try:
        # absent, a folder, or a FIFO (whose read would block forever, even one put there late)
        text = read_regular_text(path, errors="strict" if strict else "replace", max_bytes=MAX_MANIFEST_BYTES)
    except OSError:
        return out
    except TooLarge as e:
        raise KbError(f"{shown(str(path))}: {e}; a manifest of `key = value` lines is read no further") from None
    except UnicodeDecodeError as e:
        raise KbError(f"{shown(str(path))}: not UTF-8 (byte 0x{e.object[e.start]:02x} at offset "
                      f"{e.start}); save it as UTF-8") from None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        out[k.strip().lower()] = v.strip()
    return out


class AgentCard(Mapping):
    """A base's agent.txt as `key = value` pairs, read when first looked at: a question reads
    the owner's card at most, and reading 2,000 bases' cards at discovery was a tenth of a
    one-shot over such a fleet."""

    def __init__(self, base_root: Path):
        self._root = base_root  # agent.txt's path made when it is read, not 2,000 times at discovery
        self._pairs: dict[str, str] | None = None

    def _read(self) -> dict[str, str]:
        if self._pairs is None:
            self._pairs = read_kv(self._root / "agent.txt")
        return self._pairs

    def __getitem__(self, key: str) -> str:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())

    def __repr__(self) -> str:
        return repr(self._read())


def is_base(path: Path | str) -> bool:
    # os.path.isfile on a joined string: a Path made and stat'ed per marker was a tenth of
    # discovering 2,000 bases. A folder this user may not enter holds no marker it can read.
    # A plain folder of notes with no markers is still a base, unless it is a fleet root.
    folder = os.path.join(path, "")
    return any(os.path.isfile(folder + m) for m in BASE_MARKERS)


def _has_markdown(path: Path) -> bool:
    try:
        for entry in os.scandir(path):
            if entry.name.endswith(".md") and entry.is_file():
                return True
    except OSError:
        return False
    return False


def _child_bases(path: Path) -> list[tuple[Path, bool]]:
    """The child folders of `path` that are bases, each with whether it is a link."""
    try:
        # scandir's is_dir and is_symlink read the entry's type from the listing (a stat only
        # for a link): a stat per child was a quarter of opening a fleet of 2,000 bases.
        with os.scandir(path) as listing:
            found = sorted((e.name, e.path, _is_link_entry(e)) for e in listing
                           if not e.name.startswith(".") and _is_dir_entry(e))
    except OSError:
        return []
    return [(path / name, link) for name, where, link in found if is_base(where)]


def _is_link_entry(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _is_dir_entry(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # follows a link, as Path.is_dir did
    except OSError:
        return False


def discover(paths: list[str | os.PathLike[str]]) -> Fleet:
    """Resolve the paths a verb was given into one fleet of bases."""
    if not paths:
        raise KbError("no path given: name a base or a fleet root")
    bases: list[Base] = []
    candidates: list[Path] = []
    roots: list[Path] = []
    fleet_root_flags = []
    for raw in paths:
        p = _readable_folder(raw)
        found, is_root = _bases_at(p, raw)
        fleet_root_flags.append(is_root)
        roots.append(p)
        candidates.extend(found)
    kept, duplicates = _one_per_real_directory(candidates)
    for b in kept:
        bases.append(Base(name=b.name, root=b, agent=AgentCard(b)))
    # Counted once, not list.count per base: quadratic over 2,000 bases.
    dupes = sorted(n for n, k in Counter(b.name for b in bases).items() if k > 1)
    if dupes:
        raise KbError(f"two bases share the name {dupes[0]!r}: agent names must be unique in a fleet")
    root = roots[0]
    is_root = fleet_root_flags[0]
    settings = read_kv((root if is_root else root.parent) / FLEET_FILE, strict=True)
    if not is_root and (root.parent / FLEET_FILE).is_file():
        # A base inside a fleet: the fleet's manifest, aliases and miss log still apply.
        root = root.parent
    return Fleet(root=root, bases=tuple(bases), settings=settings, is_fleet_root=is_root, duplicates=duplicates)


def _readable_folder(raw: str | os.PathLike[str]) -> Path:
    """The path a verb was given, resolved, once it is known to be a folder this user can list
    and enter; else the one-line error naming it."""
    p = Path(raw).expanduser()
    try:
        is_dir = p.is_dir()  # raises, unlike exists(), when the question cannot be asked
    except OSError as e:  # a folder on the way that this user may not enter, a link loop
        raise KbError(f"{raw}: cannot read ({e.strerror or e})") from e
    if not is_dir and not p.exists():
        try:
            os.stat(p)  # a link loop "does not exist" to exists(): its own error names it
        except FileNotFoundError:
            pass
        except OSError as e:
            raise KbError(f"{raw}: cannot read ({e.strerror or e})") from e
        raise KbError(f"{raw}: no such file or directory")
    if not is_dir:
        raise KbError(f"{raw}: not a directory (give a base or a fleet root)")
    try:  # listed (r) and entered (x): a folder missing either cannot be read as notes
        with os.scandir(p) as listing:
            next(listing, None)
        os.stat(os.path.join(p, "."))
    except OSError as e:
        raise KbError(f"{raw}: cannot read ({e.strerror or e})") from e
    try:
        return p.resolve()
    except OSError as e:  # `.` after the working directory was deleted
        raise KbError(f"{raw}: cannot resolve ({e.strerror or e}); was the current directory deleted?") from e


def _bases_at(p: Path, raw) -> tuple[list, bool]:
    """The bases a resolved folder holds (each with its link flag), and whether it is a fleet root."""
    # p is resolved: no link itself; a child's link flag comes from its folder's listing
    if is_base(p):
        return [(p, False)], False
    found = _child_bases(p)
    if found and not (p / "fleet.txt").is_file() and _notes_outside(p, found):
        return [(p, False)], False  # a vault whose folder holds an index.md: a note there, not an agent
    if found:
        return found, True
    if _has_markdown(p) or _has_markdown_below(p):
        return [(p, False)], False  # a plain folder of notes
    raise KbError(f"{raw}: no markdown notes here, and no bases below it")


def _one_per_real_directory(found: list[tuple[Path, bool]]) -> tuple[list[Path], tuple[tuple[str, str, Path], ...]]:
    """One base per real directory (`found`: each candidate and whether it is a link). A link
    to a base already in the fleet would count the same agent twice (its notes twice in every
    score, the floor moved); the folder itself is kept, whatever the names' order, and the
    link is reported, never silently dropped."""
    candidates = [c for c, _ in found]
    links = [link for _, link in found]
    order = sorted(range(len(candidates)), key=lambda i: (links[i], i))
    first: dict[str, int] = {}
    dupes: list[tuple[int, int]] = []
    for i in order:
        # A candidate is a resolved path or a child of one (discover resolves what it is
        # given): unless it is itself a link, it is its own real path (no realpath per base).
        real = os.path.realpath(candidates[i]) if links[i] else os.fspath(candidates[i])
        if real in first:
            dupes.append((i, first[real]))
        else:
            first[real] = i
    kept = [candidates[i] for i in sorted(first.values())]
    duplicates = tuple(
        (candidates[i].name, candidates[k].name, candidates[i]) for i, k in sorted(dupes)
        if candidates[i] != candidates[k]  # the same path given twice is no link to report
    )
    return kept, duplicates


def _notes_outside(root: Path, bases: list[tuple[Path, bool]]) -> bool:
    """Would reading `root` as a fleet of these bases leave notes unread? A note at its top
    (a README.md aside: a fleet's repository has one) or a folder of notes that is no base.
    Such a folder without fleet.txt is a person's vault, one base, and an index.md inside it
    is one more note; a fleet.txt says the subfolders are agents whatever else is there."""
    try:
        with os.scandir(root) as listing:
            entries = [e for e in listing if not e.name.startswith(".")]
    except OSError:
        return False
    kept = {b.name for b, _ in bases}
    for e in entries:
        if e.name.endswith(".md") and e.name.lower() != "readme.md" and e.is_file():
            return True
        if e.name not in kept and _is_dir_entry(e) and _has_markdown_below(Path(e.path)):
            return True
    return False


def _has_markdown_below(path: Path, limit: int = 2000) -> bool:
    seen = 0
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if any(f.endswith(".md") for f in filenames):
            return True
        seen += 1
        if seen > limit:
            break
    return False
