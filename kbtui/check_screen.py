"""The check screen: `kb check` findings (code, severity, file, line, message); Enter
opens the file in the reader at that line."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.widgets import DataTable

from engine.review.check import check

from .clean import one_line
from .messages import CheckFinished
from .table_screen import TableScreen

# Severity is a word as well as a colour, so it survives NO_COLOR.
SEVERITY_STYLE = {"error": "bold reverse red", "warning": "bold yellow", "info": "dim"}


def _missing(f) -> bool:
    """A finding about a file that does not exist (W01: no agent.txt): nothing to open."""
    file = getattr(f, "file", "")
    return bool(file) and not Path(file).exists()


def _where(f) -> str:
    """base/path:line, relative to the fleet (the absolute `file` is for editors). A file that
    does not exist is not pointed at: the finding is about its folder."""
    base, path, line = getattr(f, "base", ""), getattr(f, "path", ""), getattr(f, "line", 0)
    if _missing(f):
        return f"{base}/ (no {path})" if base else f"(no {path})"
    where = f"{base}/{path}" if base else str(path)
    return f"{where}:{line}" if line else where


def run_check(memory) -> list:
    """The engine's findings for this fleet (engine/review/check.py, the same as `kb check`)."""
    return list(check(memory))


class CheckScreen(TableScreen):
    NAME, TITLE = "check", "Check"
    COLUMNS = (("code", "code", 4), ("severity", "severity", 8), ("where", "where", None), ("message", "message", None))
    BINDINGS = [Binding("r", "reload", "Re-check", id="check.reload")]

    def load(self) -> None:
        self.findings: list = []
        self.action_reload()

    def action_reload(self) -> None:
        self.detail.update(Text("checking…", style="dim"))
        self._run()

    @work(thread=True, exclusive=True, exit_on_error=False, group="check", description="check the fleet")
    def _run(self) -> None:
        self.post_message(CheckFinished(findings=run_check(self.app.memory)))

    def on_check_finished(self, message: CheckFinished) -> None:
        detail = self.detail
        if message.error:
            detail.update(Text(message.error, style="bold"))
            return
        self.findings = message.findings
        counts: dict[str, int] = {}
        rows = []
        for i, f in enumerate(self.findings):
            sev = str(getattr(f, "severity", "info"))
            counts[sev] = counts.get(sev, 0) + 1
            rows.append((str(i), [
                Text(one_line(str(getattr(f, "code", ""))), style="bold"),
                Text(sev, style=SEVERITY_STYLE.get(sev, "")),
                Text(one_line(_where(f)), no_wrap=True),
                Text(one_line(str(getattr(f, "message", ""))), no_wrap=True),
            ]))
        self.fill(rows)
        title = self.title_text()
        summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in sorted(counts.items())) or "no findings"
        title.append(f"  {summary}", style="bold")
        self.set_title(title)
        detail.update(self._detail(0) if self.findings else Text("the fleet passes every check", style="bold"))

    def _detail(self, i: int) -> Text:
        f = self.findings[i]
        t = Text()
        t.append(f"{one_line(str(getattr(f, 'code', '')))} ", style="bold")
        t.append(f"{one_line(_where(f))}\n", style="bold")
        t.append(one_line(str(getattr(f, "message", ""))))
        if _missing(f):
            t.append(f"\n{one_line(str(f.path))} does not exist yet: there is nothing to open", style="dim")
        elif getattr(f, "base", ""):
            t.append("\nEnter opens the note at the line", style="dim")
        return t

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and self.findings:
            self.detail.update(self._detail(int(event.row_key.value)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key is None or not self.findings:
            return
        f = self.findings[int(event.row_key.value)]
        if _missing(f):
            self.notify(f"{_where(f)}: the file does not exist yet, so there is nothing to open", timeout=4)
            return
        if not getattr(f, "base", "") or not str(f.path).endswith(".md"):
            self.notify(f"{_where(f)}: not a note the reader can open", timeout=3)
            return
        self.app.open_reader(f.base, f.path, None, line=int(f.line or 0))
