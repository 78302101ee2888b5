"""The verbs about who answers: kb fleet, remember, serve, list (rows of engine/cli's verb table).

Each one is a thin surface over Memory; nothing here scores or chooses.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..clean import shown
from ..rank.covered import OPTION, OPTION_HELP
from ..errors import KbError
from ..notes.fleet import discover, is_base
from ..memory import Memory
from ..review.remember import render
from ..render import json_line, printable
from ..notes.roster import render_roster
from ..serve.mcp import fleet_json, list_notes, serve
from . import MISSES_HELP, add_no_record, add_paths


def add_fleet(subparsers) -> None:
    fl = subparsers.add_parser("fleet", help="the roster: who is in the fleet, what each does, where each stops")
    add_paths(fl)
    fl.add_argument("--json", action="store_true", help="one line of JSON")
    fl.set_defaults(func=cmd_fleet)


def add_remember(subparsers) -> None:
    rm = subparsers.add_parser("remember", help="measure a claim against the notes: ADD, UPDATE or NOOP (never DELETE)")
    rm.add_argument("claim", metavar="CLAIM")
    add_paths(rm, many=False, what="a base or fleet root to measure against, or a new note's .md path")
    rm.add_argument("--write", action="store_true", help="create the note at PATH (needs --key) and index it")
    rm.add_argument("--key", action="append", default=[], metavar="K", help="a Search for: key (repeatable)")
    rm.add_argument("--title", metavar="T", help="the note's title (default: the claim's first sentence)")
    rm.add_argument("--purpose", metavar="P", help="the Exists to: line (default: the claim's first sentence)")
    rm.add_argument("--json", action="store_true", help="one line of JSON")
    rm.set_defaults(func=cmd_remember)


def add_serve(subparsers) -> None:
    sv = subparsers.add_parser("serve", help="MCP over stdio: kb_route, kb_retrieve, kb_remember, kb_fleet, kb_list",
                               epilog=MISSES_HELP)
    add_paths(sv, what="the bases or fleet roots to serve")
    sv.add_argument(OPTION, action="store_true", help=OPTION_HELP)
    add_no_record(sv)
    sv.set_defaults(func=cmd_serve)


def add_allow(subparsers) -> None:
    al = subparsers.add_parser(
        "allow", help="let the classifier command fleet.txt names run here (asked again when the line changes)")
    add_paths(al, many=False, what="the fleet root whose fleet.txt names the classifier")
    al.set_defaults(func=cmd_allow)


def cmd_allow(args) -> int:
    # Reads fleet.txt and the roster only: allowing a command is no reason to index the notes.
    from ..stages.classifier import allow
    from ..notes.roster import roster_of

    roster = roster_of(discover([args.path]))
    if not roster.classifier:
        raise KbError(f"{shown(str(roster.root / 'fleet.txt'))}: names no classifier; nothing to allow")
    written = allow(roster.root, roster.classifier)
    print(f"allowed: classifier = {shown(roster.classifier)} in {shown(str(roster.root / 'fleet.txt'))} "
          f"(kept in {shown(str(written))})")
    return 0


def add_list(subparsers) -> None:
    ls = subparsers.add_parser("list", help="the notes of a fleet, a base, or a folder inside one")
    add_paths(ls, many=False, what="a base or fleet root, or a folder or note inside a base")
    ls.add_argument("--json", action="store_true", help="one line of JSON")
    ls.set_defaults(func=cmd_list)


def _memory(paths):
    return Memory(paths)


def cmd_fleet(args) -> int:
    mem = _memory(args.paths)
    if args.json:
        print(json_line(fleet_json(mem)))  # C1 and bidi escaped: safe on a terminal
        return 0
    snap = mem.snapshot()
    counts = {}
    for b in mem.bases:
        recs = snap.records.get(b.name, {}).values()
        counts[b.name] = (sum(1 for r in recs if r.is_entry), sum(1 for r in recs if not r.is_entry))
    print(render_roster(mem.roster, counts))
    return 0


def _note_memory(path: str):
    """The Memory PATH belongs to, and PATH itself when it is a folder or note inside a base.

    A base or a fleet root is opened whole (None). Anything below a base opens that base, so
    `kb list demo/zed/knowledge` lists zed's folder rather than mistaking it for a base.
    """
    try:
        return _note_memory_of(path)
    except KbError:
        raise
    except OSError as e:  # a name too long, a working directory deleted: one line, not a traceback
        raise KbError(f"{shown(path)}: {e.strerror or e}") from None


def _note_memory_of(path: str):
    p = Path(os.path.abspath(Path(path).expanduser()))
    vault = _indexed_vault_above(p)
    if vault is not None:
        return _memory([vault]), str(p)
    if p.is_dir() and (is_base(p) or _has_child_base(p)):
        return _memory([p]), None
    if not p.is_dir() and p.suffix.lower() != ".md":
        raise KbError(f"{path}: neither a directory nor a .md note path")
    for parent in p.parents:
        if parent.is_dir() and is_base(parent):
            return _memory([parent]), str(p)
    if p.is_dir():
        return _memory([p]), None  # a plain folder of notes is a base of its own
    raise KbError(f"{path}: not inside a base (no agent.txt, index.md or map above it, and no folder "
                  "above it indexed by kb index)")


def _indexed_vault_above(p: Path) -> Path | None:
    """The nearest folder above `p` that kb index made one base and that is no base by its
    own markers (a vault), so that a folder of it holding an index.md or an agent.txt, and a
    note in that folder, are still the vault's (discovery reads such a folder as the vault's
    when the vault holds other notes). An indexed base, or a fleet root (fleet.txt), on the
    way ends the search: those name their own bases. A base not indexed on its own is passed."""
    for parent in p.parents:
        if not parent.is_dir():
            continue  # a new note's folders, made when it is written
        if (parent / "fleet.txt").is_file():
            return None
        if _indexed(parent):
            return None if is_base(parent) else parent
    return None


def _indexed(folder: Path) -> bool:
    """A plain folder kb has indexed as a base (a vault with no agent.txt): a folder or a new
    note below it belongs to it, not to a second base of its own with a second index."""
    kb = folder / ".kb"
    return not kb.is_symlink() and (kb / "index.db").is_file()


def _has_child_base(p: Path) -> bool:
    try:
        return any(c.is_dir() and not c.name.startswith(".") and is_base(c) for c in p.iterdir())
    except OSError:
        return False


def cmd_remember(args) -> int:
    mem, note = _note_memory(args.path)
    if args.write and note is None:
        raise KbError(f"{args.path}: --write needs PATH to be the new note's .md path inside a base")
    r = mem.remember(args.claim, note, write=args.write, keys=args.key, title=args.title, purpose=args.purpose)
    if args.json:
        print(json_line(r.to_json()))  # C1 and bidi escaped: safe on a terminal
    else:
        print(render(r))
    return 0


def cmd_serve(args) -> int:
    return serve(args.paths or ["."], coverage_rule=args.coverage_rule or None, record=not args.no_record)


def cmd_list(args) -> int:
    mem, inside = _note_memory(args.path)
    listing = list_notes(mem, inside)
    if args.json:
        print(json_line(listing))  # C1 and bidi escaped: safe on a terminal
        return 0
    for n in listing["notes"]:
        mark = "entry" if n["entry"] else "no Search for: line"
        print(f"{printable(n['id'])}  [{n['species']}, {mark}]")
        if n["title"]:
            print(f"    {printable(n['title'])}")
    return 0
