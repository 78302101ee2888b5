"""The help screen (F1, or ? where no box is being typed in): every key and every screen,
read from the bindings themselves, then the seed's words in plain ones.

Nothing here names a key: the keys, their descriptions (and tooltips) and the screens' one
lines come from the Binding lists and the command palette's rows, so a key added or moved is
listed here without an edit, and this screen cannot tell a person a key that does not work.
"""

from __future__ import annotations

from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from engine.rank.gate import MIN_ENTRIES_TO_ROUTE
from engine.rank.rrf import RRF_K

KEY_WIDTH = 11  # the key column, the same in every section: "flagged N/M" fits

# The seed's terms, as the room shows them. Definitions follow the seed ("How the Catalogue
# Ranks"); what the room prints beside each is named so a person can find it on screen.
GLOSSARY: tuple[tuple[str, str], ...] = (
    ("label", "a note's Search for line: the phrases a person would type, each one a key. A note with a "
              "label is an entry; the fleet's size N counts entries."),
    ("hit", "the top file's keyword score reached the floor: the answer is served and its agent named "
            "as the owner."),
    ("guess", f"something matched but under the floor (or the fleet has fewer than {MIN_ENTRIES_TO_ROUTE} "
              "entries): served with a warning that the evidence is thin."),
    ("nothing", "no label shares a word with the question. Enter then logs it as a miss, so a label can "
                "be written for it (F4)."),
    ("floor", "the score a hit needs: about 62% of what one key only one note carries would score, so "
              "it grows with the fleet (the Gate pane shows the sum)."),
    ("margin", "the top file's keyword score divided by the second's; — when only one file scored."),
    ("species", "the three kinds of note an agent has, read from its folders: memory (what it knows: "
                "knowledge/), skills (how it works: skills/, protocols/, templates/), tools (what it "
                "can use: tools/)."),
    ("fold", "how an owner is chosen: per agent, its best memory score + best skills score + best tools "
             "score; the highest total owns the question (the Agents pane)."),
    ("RRF", f"Reciprocal Rank Fusion, the reading list's order: each list (keywords, text) gives a file "
            f"1/({RRF_K} + its rank), summed. 0.033 is first on one list and second on the other; "
            "space on a row shows its sum."),
    ("text leg", "the second scorer: full-text search (SQLite FTS5, BM25) over the notes' prose, for "
                 "words nobody put on a label. It orders the reading list, never the verdict."),
    ("purpose", "F7: another order for the reading list (documents, conversation, workspace), mixing "
                "text, links and age; the verdict and owner stay the keyword scorer's."),
    ("flagged N/M", "on the eval screen: of the M questions whose top keyword file was wrong, N were "
                    "not served as a hit (0/0: none was wrong)."),
)


def _own_bindings(cls) -> list[Binding]:
    """The bindings `cls` and its kbtui bases declare (Textual's widgets' own are left out:
    the arrows, PgUp/PgDn and Home/End move in every list and are said once)."""
    out: list[Binding] = []
    for klass in reversed(cls.__mro__):
        if klass.__module__.startswith("kbtui.") and "BINDINGS" in vars(klass):
            out.extend(Binding.make_bindings(vars(klass)["BINDINGS"]))
    return out


def key_rows(app, bindings: list[Binding]) -> list[tuple[str, str, str]]:
    """(keys, what, action) per action: the keys of one action joined with /, and one key's
    actions (a toggle's two halves) joined with /; a later binding of a key replaces an
    earlier one of the same key and action (App's ctrl+q and the room's)."""
    by_pair: dict[tuple[str, str], Binding] = {}
    for b in bindings:
        if b.description or b.tooltip:
            by_pair.pop((b.key, b.action), None)
            by_pair[(b.key, b.action)] = b
    by_action: dict[str, tuple[list[str], list[str]]] = {}
    for b in by_pair.values():
        keys, whats = by_action.setdefault(b.action, ([], []))
        keys.append(app.get_key_display(b))
        what = b.tooltip or b.description
        if what not in whats:
            whats.append(what)
    rows: list[tuple[str, list[str], str]] = []
    for action, (keys, whats) in by_action.items():
        joined = " / ".join(keys)
        same = next((r for r in rows if r[0] == joined), None)
        if same is not None:
            same[1].extend(whats)
        else:
            rows.append((joined, list(whats), action))
    return [(k, " / ".join(w), a) for k, w, a in rows]


def _screen_rows(app) -> list[tuple[str, str, str, type]]:
    """(action, title, what it is for, class) of every screen an F-key shows, from the app's
    bindings and the palette's rows."""
    from .commands import palette_rows
    from .screens import screen_class

    palette = {action: (title, help_text) for title, help_text, action in palette_rows()}
    out = []
    for b in type(app).BINDINGS:  # the running app's own table (no import of the app: a circle)
        if isinstance(b, Binding) and b.action.startswith("show(") and b.action in palette:
            name = b.action[len("show('"):-len("')")]
            title, help_text = palette[b.action]
            out.append((b.action, title, help_text, screen_class(name)))
    return out


def help_text(app) -> Group:
    sheet = _Sheet()
    screens = {action: (title, help_text, cls) for action, title, help_text, cls in _screen_rows(app)}
    _everywhere(sheet, app, screens)
    _main_screen(sheet, app)
    _screens(sheet, app, screens)
    sheet.head("Words on these screens")
    for term, meaning in GLOSSARY:
        sheet.row(term, meaning)
    return Group(*sheet.parts)


class _Sheet:
    """The help screen as it is written: headings, and under each a grid of keys and what they do."""

    def __init__(self) -> None:
        self.parts: list = []
        self.grid: Table | None = None

    def head(self, text: str) -> None:
        self.grid = None
        self.parts.append(Text(("\n" if self.parts else "") + text, style="bold underline"))

    def row(self, keys: str, what: str, style: str = "") -> None:
        # Two columns: a description wraps under itself, not under the keys.
        if self.grid is None:
            self.grid = Table.grid(padding=(0, 1), pad_edge=False)
            self.grid.add_column(width=KEY_WIDTH)  # a longer key wraps at its " / "
            self.grid.add_column(ratio=1)
            self.parts.append(Padding(self.grid, (0, 0, 0, 2)))
        self.grid.add_row(Text(keys, style="bold"), Text(what, style=style))


def _everywhere(sheet: _Sheet, app, screens: dict) -> None:
    """The app's own keys (a screen's key named by the screen's title) and the palette."""
    from textual.app import App

    sheet.head("Everywhere")
    everywhere = [*Binding.make_bindings(App.BINDINGS), *Binding.make_bindings(type(app).BINDINGS)]
    for keys, what, action in key_rows(app, everywhere):
        sheet.row(keys, screens[action][0] if action in screens else what)
    palette_key = app.get_key_display(Binding(app.COMMAND_PALETTE_BINDING, "command_palette", ""))
    sheet.row(palette_key, "the command palette: every screen, pane and purpose by name, and your questions again")


def _main_screen(sheet: _Sheet, app) -> None:
    """The main screen's keys, the question box's and each pane's."""
    from .main_screen import PANES, MainScreen
    from .question_input import QuestionInput

    row = sheet.row
    sheet.head("Main screen: type a question, the answer comes as you type")
    row(app.get_key_display(Binding("enter", "submit", "")),
        "done typing: into the reading list; a question nothing answers is logged as a miss (F4)")
    for keys, what, _ in key_rows(app, _own_bindings(MainScreen)):
        row(keys, what)
    for keys, what, _ in key_rows(app, _own_bindings(QuestionInput)):
        row(keys, f"in the question box: {what.lower()}")
    for p in PANES:
        for keys, what, _ in key_rows(app, _own_bindings(p)):
            row(keys, f"{p.TITLE.split(' (')[0]}: {what.lower()}")
    row("a letter", "on any pane: starts a new question (the one before is kept: ↑ in the box)")
    row("↑ ↓ ⏎", "move in a list; ⏎ opens the note in the reader", "dim")


def _screens(sheet: _Sheet, app, screens: dict) -> None:
    """Every screen: its title, what it is for, and its own keys."""
    from .reader import ReaderScreen
    from .why_screen import WhyScreen

    sheet.head("Screens")
    shown = [(title, help_text, cls) for title, help_text, cls in screens.values()]
    shown += [
        ("Reader: one note", "⏎ on a row of the reading list or the keywords opens it, the matched words lit",
         ReaderScreen),
        ("Why this row", "space on a row of the reading list: the sum behind its place", WhyScreen),
        ("Help", "this screen", HelpScreen),
    ]
    for title, help_text, cls in shown:
        sheet.parts.append(Text("  " + title, style="bold"))
        t = Text(help_text, style="dim")
        keys = key_rows(app, _own_bindings(cls))
        if keys:
            t.append("\n" + ", ".join(f"{k} {w.lower()}" for k, w, _ in keys), style="")
        sheet.parts.append(Padding(t, (0, 0, 0, 4)))  # wrapped lines stay under the screen's title


class HelpScreen(Screen):
    NAME = "help"
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="help.back")]
    DEFAULT_CSS = """
    HelpScreen #help-body { height: 1fr; }
    HelpScreen #help-text { padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        title = Text()
        title.append(" Help ", style="bold reverse")
        title.append("  every key, every screen, and the words on them", style="dim")
        yield Static(title, id="help-title", classes="screen-title")
        with VerticalScroll(id="help-body"):
            yield Static(help_text(self.app), id="help-text")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()
