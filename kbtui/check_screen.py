"""The check screen: `kb check` findings (code, severity, file, line, message); Enter
opens the file in the reader at that line."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from engine.check import check

from .clean import one_line
from .messages import CheckFinished

# Severity is a word as well as a colour, so it survives NO_COLOR.
SEVERITY_STYLE = {"error": "bold reverse red", "warning": "bold yellow", "info": "dim"}


def _where(f) -> str:
    """base/path:line, relative to the fleet (the absolute `file` is for editors)."""
    base, path, line = getattr(f, "base", ""), getattr(f, "path", ""), getattr(f, "line", 0)
    where = f"{base}/{path}" if base else str(path)
    return f"{where}:{line}" if line else where


def run_check(memory) -> list:
    """The engine's findings for this fleet (engine/check.py, the same as `kb check`)."""
    return list(check(memory))


class CheckScreen(Screen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="check.back"),
        Binding("r", "reload", "Re-check", id="check.reload"),
    ]

    def compose(self) -> ComposeResult:
        yield Static(Text(" Check ", style="bold reverse"), id="check-title", classes="screen-title")
        table = DataTable(id="check-table", cursor_type="row")
        table.add_column("code", key="code", width=4)
        table.add_column("severity", key="severity", width=8)
        table.add_column("where", key="where")
        table.add_column("message", key="message")
        yield table
        yield Static(id="check-detail", classes="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.findings: list = []
        self.query_one("#check-table").focus()
        self.action_reload()

    def action_reload(self) -> None:
        self.query_one("#check-detail", Static).update(Text("checking…", style="dim"))
        self._run()

    @work(thread=True, exclusive=True, exit_on_error=False, group="check", description="check the fleet")
    def _run(self) -> None:
        self.post_message(CheckFinished(findings=run_check(self.app.memory)))

    def on_check_finished(self, message: CheckFinished) -> None:
        detail = self.query_one("#check-detail", Static)
        if message.error:
            detail.update(Text(message.error, style="bold"))
            return
        self.findings = message.findings
        table = self.query_one(DataTable)
        table.clear()
        counts: dict[str, int] = {}
        for i, f in enumerate(self.findings):
            sev = str(getattr(f, "severity", "info"))
            counts[sev] = counts.get(sev, 0) + 1
            where = one_line(_where(f))
            table.add_row(
                Text(one_line(str(getattr(f, "code", ""))), style="bold"),
                Text(sev, style=SEVERITY_STYLE.get(sev, "")),
                Text(where, overflow="ellipsis", no_wrap=True),
                Text(one_line(str(getattr(f, "message", ""))), overflow="ellipsis", no_wrap=True),
                key=str(i),
            )
        title = Text()
        title.append(" Check ", style="bold reverse")
        summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in sorted(counts.items())) or "no findings"
        title.append(f"  {summary}", style="bold")
        self.query_one("#check-title", Static).update(title)
        detail.update(self._detail(0) if self.findings else Text("the fleet passes every check", style="bold"))

    def _detail(self, i: int) -> Text:
        f = self.findings[i]
        t = Text()
        t.append(f"{one_line(str(getattr(f, 'code', '')))} ", style="bold")
        t.append(f"{one_line(_where(f))}\n", style="bold")
        t.append(one_line(str(getattr(f, "message", ""))))
        if getattr(f, "base", ""):
            t.append("\nEnter opens the note at the line", style="dim")
        return t

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and self.findings:
            self.query_one("#check-detail", Static).update(self._detail(int(event.row_key.value)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key is None or not self.findings:
            return
        f = self.findings[int(event.row_key.value)]
        if not getattr(f, "base", "") or not str(f.path).endswith(".md"):
            self.notify(f"{_where(f)}: not a note the reader can open", timeout=3)
            return
        self.app.open_reader(f.base, f.path, None, line=int(f.line or 0))
