"""`kb route` and `kb boot` in their common forms, parsed without argparse.

They run on every prompt of a hook, and argparse cost each ~4 ms: importing it (with gettext),
then building the verb's parser (every add_argument formats its metavar, which asks the
terminal's size). A hook's forms are few and plain: the positionals, then known options, each
spelled out. Anything else (help, an abbreviation, `--top=3`, an option before a positional,
a value that starts with "-", an error) returns None and argparse parses it, so usage and
errors are argparse's own. tests/test_quickargs.py holds every form this accepts to
argparse's namespace.
"""

from __future__ import annotations

import importlib
from types import SimpleNamespace

# Per verb: its handler (module, function); its options that take no value and those that
# take one (option -> attribute); and what argparse sets for every attribute a plain form
# does not name (engine/cli/route.py's, purpose.py's and rerank.py's options, boot.py's).
_ROUTE = (("engine.cli.route", "cmd_route"), {"--json": "json", "--hybrid": "hybrid"}, {"--top": "top"},
          {"top": 5, "hybrid": False, "json": False, "purpose": None, "near": None, "boost": None,
           "rerank": False, "rerank_model": None, "rerank_precision": "fp32", "rerank_summary": False})
_BOOT = (("engine.cli.boot", "cmd_boot"), {"--text": "text"}, {"--session": "session"},
         {"path": None, "session": None, "text": False})
VERBS = {"route": _ROUTE, "boot": _BOOT}


def parse(argv: list[str]) -> SimpleNamespace | None:
    """What argparse's `kb` parser returns for `argv` (the same attributes and values), when
    `argv` is a common form of `kb route` or `kb boot`; else None."""
    if not argv or argv[0] not in VERBS:
        return None
    verb = argv[0]
    (module, handler), flags, valued, defaults = VERBS[verb]
    split = _split(argv[1:], flags, valued)
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


def _split(words: list[str], flags: dict[str, str], valued: dict[str, str]) -> tuple[list[str], dict] | None:
    """The positionals (every word before the first that starts with "-") and then the known
    options; None when a word after them is anything else."""
    at = 0
    while at < len(words) and not words[at].startswith("-"):
        at += 1
    given: dict = {}
    rest = words[at:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in flags:
            given[flags[word]] = True
            i += 1
        elif word in valued and i + 1 < len(rest) and not rest[i + 1].startswith("-"):
            given[valued[word]] = rest[i + 1]
            i += 2
        else:
            return None
    return words[:at], given
