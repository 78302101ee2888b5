"""`kb`: the engine on the command line, a thin surface over Memory (model: sqlite-utils).

Every answer comes from one call on Memory. Bad input ends in one line on stderr naming the
file and what is wrong, and a non-zero exit; never a traceback. `VERBS` below is the one
table of verbs: each row names a verb, its module and the function there that adds its
parser (and sets `func`, its handler). A new verb is a function and one row; tests/test_docs.py fails until README.md
names it and its options.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING

try:
    from .. import version
    from ..clean import shown
    from ..errors import KbError, os_error_line
except KeyboardInterrupt:  # Ctrl-C while kb starts: exit 130 as during a verb, no traceback
    raise SystemExit(130) from None

if TYPE_CHECKING:
    import argparse

# The verb table, in `kb --help` order: a verb as typed, the module that adds its parser
# (with its handler, `func`), and the function there that adds it. A process imports the
# module of the verb it runs and no other: `kb route` and `kb boot` run on every prompt of
# a hook, and should not pay for `kb label`'s or `kb misses`'s modules. `kb --help`, a bare
# `kb` and a mistyped verb build every verb's parser.
VERBS: tuple[tuple[str, str, str], ...] = (
    ("index", "engine.cli.route", "add_index"),
    ("route", "engine.cli.route", "add_route"),
    ("eval", "engine.cli.grade", "add_eval"),
    ("misses", "engine.cli.misses", "add_misses"),
    ("check", "engine.cli.misses", "add_check"),
    ("fleet", "engine.cli.who", "add_fleet"),
    ("boot", "engine.cli.boot", "add_boot"),
    ("remember", "engine.cli.who", "add_remember"),
    ("serve", "engine.cli.who", "add_serve"),
    ("allow", "engine.cli.who", "add_allow"),
    ("list", "engine.cli.who", "add_list"),
    ("fusion", "engine.cli.purpose", "add_fusion"),
    ("model", "engine.cli.rerank", "add_model"),
    ("rerank", "engine.cli.rerank", "add_rerank"),
    ("bench", "engine.cli.bench", "add_bench"),
    ("label", "engine.cli.label", "register"),
)


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """`kb`'s parser: with every verb, or with `verb` alone (what that verb's run needs: its
    usage, help and errors read the same either way)."""
    import argparse  # here, not at the top: `kb VERB` imports only what its verb needs

    p = argparse.ArgumentParser(
        prog="kb",
        description="Route a question to the note and the agent that answer it; no model, no network.",
        epilog=f"Every PATH defaults to . (the working directory). {MISSES_HELP}",
    )
    p.add_argument("--version", action=version_action("kb"), nargs=0, help="print kb's version and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module, adder in VERBS:
        if verb is None or name == verb:
            getattr(importlib.import_module(module), adder)(sub)
    return p


# Where a refusal is logged, said in `kb --help` and beside every --no-record (engine/review/misses.py decides).
MISSES_HELP = ("An unanswered question is logged to kb-misses.txt: beside fleet.txt in a fleet, else in the "
               "folder's .kb/; KB_MISSES_PATH=FILE logs it there instead, and --no-record logs nothing.")


def version_action(prog: str) -> type:
    """`--version`, read when asked: the package's metadata costs a route ~19 ms to import
    (importlib.metadata brings email, zipfile, tempfile), so no parser reads it to be built."""
    import argparse

    class Version(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            print(f"{prog} {version()}")
            parser.exit()

    return Version


def add_paths(parser: argparse.ArgumentParser, *, many: bool = True, what: str = "a base or a fleet root") -> None:
    """The PATH of a verb that reads notes: one rule for every verb, `.` when omitted."""
    if many:
        parser.add_argument("paths", nargs="*", default=["."], metavar="PATH", help=f"{what} (default: .)")
    else:
        parser.add_argument("path", nargs="?", default=".", metavar="PATH", help=f"{what} (default: .)")


def add_no_record(parser: argparse.ArgumentParser) -> None:
    """--no-record, on every verb that can log a miss (route, boot, serve)."""
    parser.add_argument("--no-record", action="store_true",
                        help="log no unanswered question (default: logged; KB_MISSES_PATH=FILE chooses where)")


def _verb_of(argv: list[str]) -> str | None:
    """The verb `argv` runs, when its first word is one; else None (help, a typo: every verb)."""
    first = argv[0] if argv else None
    return first if any(first == name for name, _, _ in VERBS) else None


def _speak_utf8() -> None:
    """kb writes UTF-8 whatever the locale says, as git does: under LC_ALL=C Python's ASCII
    stdout would raise on the first accented title, and --json must stay valid JSON (a
    backslash escape would not be). A lone surrogate left in text is written as its byte."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(encoding="utf-8", errors="surrogateescape")
            except (OSError, ValueError):
                pass  # a stream that cannot be reconfigured keeps what it had


def main(argv: list[str] | None = None) -> int:
    try:
        return _run(argv)
    except KeyboardInterrupt:  # during the verb, or while its modules were imported and parsed
        return 130


def _run(argv: list[str] | None) -> int:
    _speak_utf8()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(_verb_of(argv)).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KbError as e:
        print(f"kb: {shown(str(e))}", file=sys.stderr)  # a refusal is one line, whatever it quotes
        return e.exit_code
    except BrokenPipeError:
        # The reader went away (`kb misses | head`): not an error. Caught before OSError, of
        # which it is one (it printed "kb: Broken pipe" and exit 1), and stdout pointed at
        # /dev/null so the flush at exit cannot raise it again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        # The last net under every verb: a failure of the file system is one line naming the
        # file and the reason (the verbs refuse what they foresee with a KbError of their own).
        print(f"kb: {os_error_line(e)}", file=sys.stderr)
        return 1
