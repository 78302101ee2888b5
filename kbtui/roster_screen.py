"""The fleet roster: who each agent is (agent.txt: name, role, where it stops) and what its
base holds. The roster is what a classifier is shown, so it is worth reading as one."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.widgets import DataTable

from .clean import one_line
from .messages import RosterLoaded
from .table_screen import TableScreen


@dataclass(frozen=True)
class AgentRow:
    key: str  # the base's directory name
    name: str
    role: str
    ends: str
    entries: int
    notes: int
    unreachable: int
    memory: int
    skills: int
    tools: int
    has_agent_file: bool = True  # agent.txt exists (a missing one names nothing)


def roster_rows(memory) -> list[AgentRow]:
    snap = memory.snapshot()
    rows = []
    for b in memory.fleet.bases:
        recs = list(snap.records.get(b.name, {}).values())
        entries = [r for r in recs if r.is_entry]
        rows.append(
            AgentRow(
                key=b.name, name=b.agent.get("name", b.name), role=b.agent.get("role", ""),
                ends=b.agent.get("ends", ""), entries=len(entries), notes=len(recs),
                unreachable=len(recs) - len(entries),
                memory=sum(1 for r in entries if r.species == "memory"),
                skills=sum(1 for r in entries if r.species == "skills"),
                tools=sum(1 for r in entries if r.species == "tools"),
                has_agent_file=(b.root / "agent.txt").is_file(),
            )
        )
    return rows


def agent_text(row: AgentRow) -> Text:
    t = Text()
    t.append(f"{one_line(row.name)}", style="bold")
    t.append(f"  ({one_line(row.key)}/)\n", style="dim")
    no_file = "(no agent.txt: nothing names this agent)"
    t.append("role  ", style="bold")
    t.append((one_line(row.role) or ("(agent.txt names no role)" if row.has_agent_file else no_file)) + "\n")
    t.append("ends  ", style="bold")
    t.append((one_line(row.ends) or ("(agent.txt does not say where this agent stops)" if row.has_agent_file
                                     else no_file)) + "\n")
    t.append("base  ", style="bold")
    t.append(f"{row.entries} entries of {row.notes} notes: {row.memory} memory, {row.skills} skills, {row.tools} tools")
    if row.unreachable:
        t.append(f"; {row.unreachable} without a Search for line (text index only)", style="dim")
    return t


class RosterScreen(TableScreen):
    NAME, TITLE = "roster", "Roster"
    COLUMNS = (("agent", "agent", None), ("entries", "entries", 7), ("role", "role", None))

    def load(self) -> None:
        self.rows: dict[str, AgentRow] = {}
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="roster", description="read the roster")
    def _load(self) -> None:
        self.post_message(RosterLoaded(roster_rows(self.app.memory)))

    def on_roster_loaded(self, message: RosterLoaded) -> None:
        name = self.app.memory.settings.get("name") or ""
        role = self.app.memory.settings.get("role") or ""
        title = self.title_text()
        if name:
            title.append(f"  {one_line(name)}", style="bold")
        if role:
            title.append(f"  {one_line(role)}", style="dim")
        self.set_title(title)
        self.rows = {row.key: row for row in message.rows}
        self.fill([
            (row.key, [Text(one_line(row.name), style="bold"), Text(str(row.entries), justify="right"),
                       Text(one_line(row.role) or "—", no_wrap=True)])
            for row in message.rows
        ])
        if message.rows:
            self.detail.update(agent_text(message.rows[0]))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        row = self.rows.get(event.row_key.value) if event.row_key else None
        if row is not None:
            self.detail.update(agent_text(row))
