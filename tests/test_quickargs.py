"""`kb route` and `kb boot` parsed without argparse (engine/cli/quickargs.py): every form it
accepts gives argparse's namespace, and every other form is left to argparse, so usage and
errors stay argparse's own."""

from __future__ import annotations

import contextlib
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cli import build_parser, quickargs
from tests.conftest import run_kb


def _argparse(argv: list[str]) -> dict | None:
    """argparse's namespace for `argv` as a dict, or None when it refuses (usage, an error)."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(build_parser(argv[0]).parse_args(argv))
        except SystemExit:
            return None


COMMON = [
    ["route", "how much protein", "fleet", "--json"],
    ["route", "q", "a", "b", "c"],
    ["route", "q", "fleet", "--top", "3", "--hybrid"],
    ["route", "q", "fleet", "--json", "--top", "0", "--top", "12"],
    ["route", "", "fleet", "--json", "--json"],
    ["route", "q", "fleet", "--top", " 7"],
    ["boot", "--text"],
    ["boot"],
    ["boot", "fleet", "--text", "--session", "abc"],
    ["boot", "fleet", "--session", ""],
    ["boot", "--text", "fleet"],
    ["boot", "--session", "s1", "fleet", "--text"],
]


@pytest.mark.parametrize("argv", COMMON, ids=" ".join)
def test_a_common_form_gives_argparses_namespace(argv):
    quick = quickargs.parse(argv)
    assert quick is not None
    assert vars(quick) == _argparse(argv)


LEFT_TO_ARGPARSE = [
    ["route", "--help"], ["route", "q"], ["route", "q", "fleet", "--js"], ["route", "q", "fleet", "--top=3"],
    ["route", "q", "fleet", "--top", "x"], ["route", "q", "fleet", "--top"], ["route", "q", "--json", "fleet"],
    ["route", "q", "fleet", "--top", "-5"], ["route", "q", "fleet", "--purpose", "learn"],
    ["route", "q", "fleet", "--rerank"], ["route", "-", "fleet"], ["route", "q", "fleet", "--", "x"],
    ["boot", "a", "b"], ["boot", "--session"], ["boot", "a", "--text", "b"], ["boot", "-h"],
    ["index", "fleet"], ["rout", "q", "fleet"], [],
]


@pytest.mark.parametrize("argv", LEFT_TO_ARGPARSE, ids=lambda a: " ".join(a) or "nothing")
def test_anything_else_is_left_to_argparse(argv):
    assert quickargs.parse(argv) is None


WORDS = st.sampled_from(["q", "fleet", "", " ", "3", "-5", "x y", "--json", "--hybrid", "--top", "--text",
                         "--session", "--js", "--top=2", "-", "--", "-h", "--purpose", "--rerank", "route", "boot"])


@settings(max_examples=400, deadline=None)
@given(verb=st.sampled_from(["route", "boot"]), words=st.lists(WORDS, max_size=7))
def test_whatever_the_quick_parser_accepts_argparse_parses_the_same(verb, words):
    argv = [verb, *words]
    quick = quickargs.parse(argv)
    if quick is not None:
        assert vars(quick) == _argparse(argv)


def test_kb_routes_usage_and_errors_are_argparses():
    r = run_kb("route", "q")
    assert r.returncode == 2 and r.stderr.startswith("usage: kb route [-h]")
    assert "the following arguments are required: PATH" in r.stderr
    r = run_kb("route", "q", "fleet", "--top", "x")
    assert r.returncode == 2 and "argument --top: invalid int value: 'x'" in r.stderr
