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


# -- docs/architecture.md's layout names every module -------------------------------------

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").split("## Layout", 1)[1].split("```")[1]
MODULES = sorted(
    p.relative_to(ROOT).as_posix() for pkg in ("engine", "kbtui") for p in (ROOT / pkg).rglob("*.py")
    if p.name != "__init__.py"
)


@pytest.mark.parametrize("module", MODULES)
def test_architecture_names_every_module(module):
    name = module.rsplit("/", 1)[1]
    assert re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", LAYOUT), f"docs/architecture.md's layout never names {module}"


# -- the README's key table: every named key is bound in the room ------------------------

KEY = re.compile(r"\b(?:(?:Shift|Ctrl)\+)?(?:F\d{1,2}|Tab|Escape|Space|Enter|Down|Up|End|[A-Z])\b")


def _key_table() -> list[str]:
    section = README.split("## The reading room", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| key") and "---" not in line]
    assert len(rows) >= 8, "the README's key table was not found"
    return rows


def _keys_named(rows: list[str]) -> set[str]:
    """Each key a row names, in Textual's spelling ('Shift+F6' is 'shift+f6'), single letters
    only when written with a modifier (a lone capital is a word, not a key)."""
    out = set()
    for row in rows:
        for key in KEY.findall(row):
            if len(key) > 1:
                out.add(key.lower())
    return out


def _keys_of(binding) -> list[str]:
    """A Binding's keys, or a (key, action, description) tuple's: 'escape,space' is two."""
    key = binding.key if hasattr(binding, "key") else binding[0]
    return [k.strip() for k in key.split(",")]


def _bound_keys() -> set[str]:
    import inspect
    import pkgutil
    import importlib

    from textual.app import App
    from textual.widgets import Input

    import kbtui

    keys = {App.COMMAND_PALETTE_BINDING}
    classes = [Input]
    for info in pkgutil.iter_modules(kbtui.__path__):
        module = importlib.import_module(f"kbtui.{info.name}")
        classes += [c for _, c in inspect.getmembers(module, inspect.isclass) if c.__module__ == module.__name__]
    for cls in classes:
        for binding in getattr(cls, "BINDINGS", ()):
            keys.update(_keys_of(binding))
    return keys


def test_every_key_in_the_readme_table_is_bound():
    named = _keys_named(_key_table())
    assert {"f6", "shift+tab", "escape", "space", "f7", "f2", "ctrl+p", "ctrl+q"} <= named  # the parse reads the table
    unbound = named - _bound_keys()
    assert not unbound, f"README.md's key table names keys no binding of the room has: {sorted(unbound)}"


def test_the_room_binds_no_letter_on_the_main_screen_panes():
    """The README says a letter typed on a pane asks: no pane, nor what it is drawn with, nor
    the main screen may claim one (the reading list's Why was on w, the sums on a)."""
    import inspect
    import sys

    from kbtui.line_list import LineList
    from kbtui.line_table import LineTable
    from kbtui.main_screen import PANES, MainScreen

    classes = {MainScreen, LineList, LineTable}
    for pane in PANES:
        classes.update(c for _, c in inspect.getmembers(sys.modules[pane.__module__], inspect.isclass))
    for cls in classes:
        for binding in getattr(cls, "BINDINGS", ()):
            letters = [k for k in _keys_of(binding) if len(k) == 1]
            assert not letters, f"{cls.__name__} binds {letters}: the README says a letter on a pane asks"


# -- the README's commands run as shown --------------------------------------------------

def _block(heading: str, language: str) -> str:
    section = README.split(heading, 1)[1]
    return section.split(f"```{language}\n", 1)[1].split("```", 1)[0]


# kb serve waits on stdin, kb bench measures for minutes, kb label names a folder of the reader's
SKIPPED_VERBS = {"serve", "bench", "label"}


def _kb_lines() -> list[tuple[str, list[str], str | None]]:
    import shlex

    out = []
    for line in _block("## The `kb` command", "sh").splitlines():
        stdin = None
        words = shlex.split(line, comments=True)
        if "|" in words:  # echo "..." | kb boot ...
            bar = words.index("|")
            assert words[0] == "echo", line
            stdin, words = " ".join(words[1:bar]) + "\n", words[bar + 1:]
        assert words[0] == "kb", line
        if words[1] not in SKIPPED_VERBS:
            out.append((line, words[1:], stdin))
    return out


def test_readme_kb_commands_run_on_the_demo(tmp_path):
    from conftest import copy_demo, run_kb

    demo = copy_demo(tmp_path / "demo")
    lines = _kb_lines()
    assert {args[0] for _, args, _ in lines} >= {"index", "route", "eval", "misses", "check", "fleet", "boot", "remember"}
    for line, args, stdin in lines:
        args = [str(demo) + a[len("examples/demo"):] if a.startswith("examples/demo") else a for a in args]
        done = run_kb(*args, stdin=stdin)
        assert done.returncode == 0 and done.stdout.strip(), f"README's `{line.split('#')[0].strip()}`: exit {done.returncode}\n{done.stderr}"
        if "--json" in args:
            import json

            json.loads(done.stdout)


def test_readme_python_example_prints_what_its_comments_say(tmp_path):
    import subprocess
    import sys

    from conftest import copy_demo

    demo = copy_demo(tmp_path / "demo")
    code = _block("## Memory as a library", "python")
    expected = [line.split("#", 1)[1].strip() for line in code.splitlines() if line.startswith("print(")]
    assert len(expected) == 2
    done = subprocess.run([sys.executable, "-c", code.replace('"examples/demo"', repr(str(demo)))],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected


def test_readme_names_every_kbtui_option(capsys):
    from kbtui.app import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--help"])
    options = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", capsys.readouterr().out)) - {"--help"}
    assert {"--no-watch", "--serve", "--top"} <= options  # the help was read
    missing = sorted(o for o in options if not re.search(rf"{re.escape(o)}(?![\w-])", README))
    assert not missing, f"README.md never mentions kbtui's {missing}"
