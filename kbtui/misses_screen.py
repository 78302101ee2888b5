"""The misses screen: kb-misses.txt read back, most asked first, each question re-asked of
today's index (engine/missreview: what it gets now, the files it nearly reached, an alias
line proved before anyone writes it). Enter asks a question again on the main screen."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from engine.misses import misses_path
from engine.missreview import review_misses

from .clean import name_line, one_line
from .messages import MissesLoaded


class MissesScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="misses.back"),
        Binding("r", "reload", "Reload", id="misses.reload"),
    ]

    def compose(self) -> ComposeResult:
        yield Static(Text(" Misses ", style="bold reverse"), id="misses-title", classes="screen-title")
        table = DataTable(id="misses-table", cursor_type="row")
        table.add_column("count", key="count", width=5)
        table.add_column("first seen", key="first", width=10)
        table.add_column("last seen", key="last", width=10)
        table.add_column("question", key="question")
        yield table
        yield Static(id="misses-detail", classes="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.entries: list = []
        self.query_one("#misses-table").focus()
        self._load()

    def action_reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="misses", description="read the miss log")
    def _load(self) -> None:
        path = misses_path(self.app.memory.fleet.root)
        try:
            entries = list(review_misses(self.app.memory).reviews)
        except OSError as e:
            self.post_message(MissesLoaded(str(path), [], f"cannot read {path.name}: {e.strerror or e}"))
            return
        self.post_message(MissesLoaded(str(path), entries))

    def on_misses_loaded(self, message: MissesLoaded) -> None:
        self.entries = message.entries
        title = Text()
        title.append(" Misses ", style="bold reverse")
        total = sum(r.entry.count for r in message.entries)
        n = len(message.entries)
        title.append(f"  {n} question{'s' if n != 1 else ''}, asked {total} time{'s' if total != 1 else ''}",
                     style="bold")
        title.append("  kb-misses.txt, most asked first; private, git-ignored", style="dim")
        self.query_one("#misses-title", Static).update(title)
        table = self.query_one(DataTable)
        table.clear()
        for i, review in enumerate(message.entries):
            e = review.entry
            table.add_row(
                Text(str(e.count), style="bold", justify="right"), Text(e.first_seen), Text(e.last_seen),
                Text(one_line(e.question), overflow="ellipsis", no_wrap=True), key=str(i),
            )
        detail = self.query_one("#misses-detail", Static)
        if message.error:
            detail.update(Text(message.error, style="bold red"))
        elif not message.entries:
            detail.update(Text("no misses recorded yet: a question that gets NOTHING is logged when you press Enter",
                               style="dim"))
        else:
            detail.update(self._detail(0))

    def _detail(self, i: int) -> Text:
        review = self.entries[i]
        e = review.entry
        t = Text()
        t.append(one_line(e.question) + "\n", style="bold")
        t.append("looked like  ", style="dim")
        t.append((one_line(e.looked_like) or "(nothing the base holds is spelled like it)") + "\n")
        if review.verdict_now is not None:
            t.append("today        ", style="dim")
            t.append(review.verdict_now.upper(), style="bold")
            if review.top_now:
                t.append(f" on {name_line(review.top_now)}")
            t.append("\n")
        if review.near:
            t.append("nearly       ", style="dim")
            t.append(", ".join(name_line(f.id) for f in review.near[:3]) + "\n")
        p = review.proposal
        if p is not None:
            t.append("alias line   ", style="dim")
            t.append(one_line(p.line), style="bold")
            t.append(f"  would make it {p.verdict_with_it.upper()}", style="")
            if p.top_with_it:
                t.append(f" on {one_line(p.top_with_it)} ({p.score_with_it:.2f})")
            t.append("\n")
        for a in review.advice[:2]:
            t.append(one_line(a) + "\n", style="italic dim")
        t.append("Enter asks it again (without counting it)", style="dim")
        return t

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and self.entries:
            self.query_one("#misses-detail", Static).update(self._detail(int(event.row_key.value)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key is not None and self.entries:
            self.app.ask(self.entries[int(event.row_key.value)].entry.question)
