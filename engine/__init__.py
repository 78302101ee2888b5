"""kbtui's ranking engine: pure Python and stdlib sqlite3. Never imports textual.

    from engine import Memory
    answer = Memory("examples/demo").ask("how much protein per meal")
    answer.verdict, answer.agent.name, answer.results[0].path
"""

from __future__ import annotations

import importlib

__all__ = ["Answer", "KbError", "Memory", "Query", "Result", "version"]

# The names above, each from its module, imported when first read (PEP 562): `kb route` runs
# `engine.cli`, and a package that imported Memory at once would import the whole engine
# for `kb --help` or a verb that never asks a question.
_HOMES = {"Answer": "answer", "Result": "answer", "KbError": "errors", "Memory": "memory", "Query": "query"}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])


def version() -> str:
    """kbtui's version, from the installed package's metadata: the one source (pyproject.toml's
    `version`), read by `kb --version`, `kbtui --version` and the MCP server's greeting."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("kbtui")
    except PackageNotFoundError:  # a source tree run without `pip install -e .`
        return "unknown (not installed: pip install -e .)"
