"""README.md names every `kb` verb and every option of it (model: sqlite-utils' test_docs.py).

The verbs and options are read from the real parser (engine.cli.build_parser), so a verb or
an option added without a word in the README fails here, by name.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from engine.cli import build_parser

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _verbs(parser: argparse.ArgumentParser, prefix: str = "kb") -> list[tuple[str, argparse.ArgumentParser]]:
    """Every verb as typed ("kb route", "kb fusion restamp"), with its parser, leaves only."""
    out = []
    for action in parser._actions:  # argparse exposes no public walk of its subparsers
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                nested = _verbs(sub, f"{prefix} {name}")
                out += nested or [(f"{prefix} {name}", sub)]
    return out


VERBS = _verbs(build_parser())
OPTIONS = sorted(
    {(verb, opt) for verb, p in VERBS for a in p._actions for opt in a.option_strings if opt.startswith("--") and opt != "--help"}
)


def test_the_walk_finds_the_verbs():
    names = {v for v, _ in VERBS}
    assert {"kb route", "kb index", "kb fusion restamp", "kb model import", "kb rerank bench"} <= names


@pytest.mark.parametrize("verb", [v for v, _ in VERBS])
def test_readme_names_every_verb(verb):
    assert re.search(rf"`{re.escape(verb)}[ `]|^{re.escape(verb)}\b", README, re.MULTILINE), f"README.md never shows `{verb}`"


@pytest.mark.parametrize("verb, option", OPTIONS)
def test_readme_names_every_option(verb, option):
    assert re.search(rf"{re.escape(option)}(?![\w-])", README), f"README.md never mentions {option} (of `{verb}`)"
