"""`kb route` and `kb boot` in their common forms, parsed without argparse.

They run on every prompt of a hook, and argparse cost each ~4 ms: importing it (with gettext),
then building the verb's parser (every add_argument formats its metavar, which asks the
terminal's size). A hook's forms are few and plain: the positionals and the known options, each
spelled out. Anything else (help, an abbreviation, `--top=3`, a route's option before one of
its positionals, a value that starts with "-", an error) returns None and argparse parses it,
so usage and errors are argparse's own. tests/test_quickargs.py holds every form this accepts
to argparse's namespace.
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace

# Per verb: its handler (module, function); its options that take no value and those that
# take one (option -> attribute); and what argparse sets for every attribute a plain form
# does not name (engine/cli/route.py's, purpose.py's and rerank.py's options, boot.py's).
_ROUTE = (("engine.cli.route", "cmd_route"), {"--json": "json", "--hybrid": "hybrid", "--coverage-rule": "coverage_rule"},
          {"--top": "top"},
          {"top": 5, "hybrid": False, "json": False, "coverage_rule": False, "purpose": None, "near": None, "boost": None,
           "rerank": False, "rerank_model": None, "rerank_precision": "fp32", "rerank_summary": False})
_BOOT = (("engine.cli.boot", "cmd_boot"), {"--text": "text", "--coverage-rule": "coverage_rule"}, {"--session": "session"},
         {"path": None, "session": None, "text": False, "coverage_rule": False})
VERBS = {"route": _ROUTE, "boot": _BOOT}


def parse(argv: list[str]) -> SimpleNamespace | None:
    """What argparse's `kb` parser returns for `argv` (the same attributes and values), when
    `argv` is a common form of `kb route` or `kb boot`; else None."""
    if not argv or argv[0] not in VERBS:
        return None
    verb = argv[0]
    (module, handler), flags, valued, defaults = VERBS[verb]
    # A route's question and paths come first: argparse reads `Q P1 --json P2` as an error
    # (the paths end at the option). Boot's one optional PATH may stand anywhere.
    split = _split(argv[1:], flags, valued, interleaved=verb == "boot")
    if split is None:
        return None
    positionals, given = split
    if verb == "route":
        if len(positionals) < 2:
            return None  # argparse's error
        named = {"question": positionals[0], "paths": positionals[1:]}
        if "top" in given:
            try:
                given["top"] = int(given["top"])  # argparse's type=int: the same call
            except ValueError:
                return None
    else:
        if len(positionals) > 1:
            return None
        named = {"path": positionals[0]} if positionals else {}
    func = getattr(importlib.import_module(module), handler)
    return SimpleNamespace(command=verb, **{**defaults, **named, **given}, func=func)


def _split(words: list[str], flags: dict[str, str], valued: dict[str, str],
           interleaved: bool) -> tuple[list[str], dict] | None:
    """The positionals (words not starting with "-": all before the first option unless
    `interleaved`) and the known options; None when a word is anything else."""
    positionals: list[str] = []
    given: dict = {}
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            if given and not interleaved:
                return None
            positionals.append(word)
            i += 1
        elif word in flags:
            given[flags[word]] = True
            i += 1
        elif word in valued and i + 1 < len(words) and not words[i + 1].startswith("-"):
            given[valued[word]] = words[i + 1]
            i += 2
        else:
            return None
    return positionals, given
