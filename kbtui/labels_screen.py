"""The labels screen: every unlabelled or thin note with its proposed keys (engine/review/label.py).

Space keeps or drops the highlighted key, e edits it, x works out the effect of this note's
label as it now stands (on a private copy, nothing written), and w writes it, only once the
effect of exactly these keys has been shown. Writing follows `kb label --write`: under the
title, no other byte changed, a note changed since it was read refused.
"""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from .clean import one_line
from .messages import EffectProgress, EffectShown, LabelWritten, ProposalsLoaded


class LabelsScreen(Screen):
    NAME = "labels"
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="labels.back"),
        Binding("space", "toggle_key", "Keep/drop", id="labels.toggle"),
        Binding("e", "edit_key", "Edit key", id="labels.edit"),
        Binding("x", "effect", "Effect", id="labels.effect"),
        Binding("w", "write", "Write", id="labels.write"),
    ]

    def compose(self) -> ComposeResult:
        yield Static(Text(" Labels ", style="bold reverse") + Text("  reading the notes...", style="dim"),
                     id="labels-title", classes="screen-title")
        notes = DataTable(id="labels-notes", cursor_type="row")
        notes.add_column("note", key="note")
        notes.add_column("why", key="why", width=12)
        notes.add_column("keys", key="keys", width=5)
        yield notes
        keys = DataTable(id="labels-keys", cursor_type="row")
        keys.add_column("", key="state", width=4)
        keys.add_column("key", key="key")
        keys.add_column("from", key="source", width=10)
        yield keys
        yield Input(id="labels-edit", placeholder="edit the key; Enter keeps it, Escape leaves it")
        yield Static(id="labels-effect", classes="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.proposals: list = []
        self.keys: dict[str, list[list]] = {}  # note id -> [[key, source, kept], ...]
        self.shown_effect: dict[str, tuple[str, ...]] = {}  # note id -> the keys its effect was shown for
        self.query_one("#labels-edit", Input).display = False
        self.query_one("#labels-notes").focus()
        self._load()

    # -- loading ------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="labels", description="propose labels")
    def _load(self) -> None:
        from engine.review.labelcli import collect

        memory = self.app.memory
        try:
            proposals = collect(memory.fleet, memory)
        except OSError as e:
            self.post_message(ProposalsLoaded([], f"cannot read the notes: {e.strerror or e}"))
            return
        self.post_message(ProposalsLoaded(proposals))

    def on_proposals_loaded(self, message: ProposalsLoaded) -> None:
        self.proposals = [np for np in message.proposals if np.proposal.keys]
        self.keys = {np.id: [[k.key, k.source, True] for k in np.proposal.keys] for np in self.proposals}
        title = Text(" Labels ", style="bold reverse")
        title.append(f"  {len(self.proposals)} note(s) without a label or with a thin one", style="bold")
        title.append("  nothing is written until w, after x has shown the effect", style="dim")
        self.query_one("#labels-title", Static).update(title)
        table = self.query_one("#labels-notes", DataTable)
        table.clear()
        for np in self.proposals:
            table.add_row(Text(one_line(np.id)), Text(np.proposal.reason), Text(str(len(np.proposal.keys))),
                          key=np.id)
        effect = self.query_one("#labels-effect", Static)
        if message.error:
            effect.update(Text(message.error, style="bold red"))
        elif not self.proposals:
            effect.update(Text("every note has a label of 12 distinct keys or more: nothing to propose", style="dim"))
        else:
            self._show_keys(self.proposals[0].id)

    # -- the keys of one note -----------------------------------------------------

    def _current(self):
        table = self.query_one("#labels-notes", DataTable)
        if not self.proposals or table.cursor_row is None or table.cursor_row >= len(self.proposals):
            return None
        return self.proposals[table.cursor_row]

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "labels-notes" and event.row_key is not None:
            self._show_keys(str(event.row_key.value))

    def _show_keys(self, note_id: str) -> None:
        table = self.query_one("#labels-keys", DataTable)
        row = table.cursor_row if table.row_count else 0
        table.clear()
        for i, (key, source, kept) in enumerate(self.keys.get(note_id, [])):
            table.add_row(Text("keep" if kept else "drop", style="bold" if kept else "dim strike"),
                          Text(one_line(key), style="" if kept else "dim strike"), Text(source, style="dim"),
                          key=str(i))
        if table.row_count:
            table.move_cursor(row=min(row, table.row_count - 1))
        np = next((p for p in self.proposals if p.id == note_id), None)
        if np is not None:
            self.query_one("#labels-effect", Static).update(self._line_text(np))

    def _kept(self, np) -> tuple[str, ...]:
        return tuple(k for k, _, kept in self.keys[np.id] if kept)

    def _line_text(self, np) -> Text:
        t = Text()
        t.append("Search for: " + ", ".join(one_line(k) for k in self._kept(np)) + "\n", style="bold")
        if np.proposal.purpose_line:
            t.append(one_line(np.proposal.purpose_line) + "\n")
        if self.shown_effect.get(np.id) != self._kept(np):
            t.append("x shows what this label would change; w writes it after that", style="dim")
        return t

    def action_toggle_key(self) -> None:
        np, i = self._current(), self.query_one("#labels-keys", DataTable).cursor_row
        if np is None or i is None or i >= len(self.keys[np.id]):
            return
        self.keys[np.id][i][2] = not self.keys[np.id][i][2]
        self._show_keys(np.id)

    def action_edit_key(self) -> None:
        np, i = self._current(), self.query_one("#labels-keys", DataTable).cursor_row
        if np is None or i is None or i >= len(self.keys[np.id]):
            return
        box = self.query_one("#labels-edit", Input)
        box.value = self.keys[np.id][i][0]
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        np, i = self._current(), self.query_one("#labels-keys", DataTable).cursor_row
        event.input.display = False
        key = " ".join(event.value.replace(",", " ").split())
        if np is not None and i is not None and key:
            self.keys[np.id][i][0] = key
            self.keys[np.id][i][2] = True
            self._show_keys(np.id)
        self.query_one("#labels-keys").focus()

    # -- effect and writing ---------------------------------------------------------

    def _edited(self, np):
        from engine.review.label import ProposedKey

        keys = tuple(ProposedKey(k, s) for k, s, kept in self.keys[np.id] if kept)
        return replace(np, proposal=replace(np.proposal, keys=keys, can_write=np.proposal.can_write and bool(keys)))

    def action_effect(self) -> None:
        np = self._current()
        if np is not None:
            self.query_one("#labels-effect", Static).update(Text("working out the effect...", style="dim"))
            self._effect(self._edited(np), self._kept(np))

    @work(thread=True, exclusive=True, exit_on_error=False, group="labels-effect", description="label effect")
    def _effect(self, np, kept: tuple[str, ...]) -> None:
        from engine.review.labeleffect import effect

        memory = self.app.memory

        def progress(stage: str, done: int, total: int) -> None:
            self.post_message(EffectProgress(np.id, stage, done, total))

        try:
            eff = effect(memory.fleet, memory, [np], progress=progress, reviewed=True)  # a person kept these keys
        except OSError as e:
            self.post_message(EffectShown(np.id, kept, None, f"cannot work out the effect: {e.strerror or e}"))
            return
        self.post_message(EffectShown(np.id, kept, eff))

    def on_effect_progress(self, message: EffectProgress) -> None:
        np = self._current()
        if np is None or np.id != message.note_id or self.shown_effect.get(np.id) == self._kept(np):
            return
        count = f" {message.done}/{message.total}" if message.total > 1 else ""
        self.query_one("#labels-effect", Static).update(
            self._line_text(np) + Text(f"\nworking out the effect: {message.stage}{count}...", style="bold"))

    def on_effect_shown(self, message: EffectShown) -> None:
        np = self._current()
        if np is None or np.id != message.note_id or self._kept(np) != message.keys:
            return  # the reader moved on or changed the keys: this effect is not theirs any more
        t = self._line_text(np) if message.error is None else Text()
        if message.error:
            t.append(message.error, style="bold red")
        else:
            self.shown_effect[np.id] = message.keys
            t = self._line_text(np)
            eff = message.effect
            if eff.gold_before is not None:
                b, a = eff.gold_before, eff.gold_after
                t.append(f"gold: hit {b['hit']} -> {a['hit']}, on a right note {b['hit_right']} -> {a['hit_right']}\n")
            else:
                t.append("no gold.tsv: a new hit is a claim nobody has checked, not a success\n", style="dim")
            t.append(f"miss log: {eff.misses_asked} question(s) asked again\n")
            # The risky part first: hits on a note the text leg did not put first.
            t.append(f"{len(eff.hit_elsewhere)} now a hit where the text leg disagrees (read these first)\n",
                     style="bold" if eff.hit_elsewhere else "")
            for h in eff.hit_elsewhere[:5]:
                t.append(f"  {one_line(h['question'])} -> {one_line(h['note'] or '')} "
                         f"(text leg: {one_line(h['text_first'] or 'nothing')})\n")
            t.append(f"{len(eff.hit_agreeing)} now a hit where the text leg agrees\n")
            for h in eff.hit_agreeing[:5]:
                t.append(f"  {one_line(h['question'])} -> {one_line(h['note'] or '')}\n")
            for c in eff.owner_changes[:5]:
                t.append(f"owner changes: {one_line(c['question'])}: {c['from']} -> {c['to']}\n")
            if self.shown_effect.get(np.id) == self._kept(np):
                t.append("w writes this label under the note's title", style="bold")
        self.query_one("#labels-effect", Static).update(t)

    def action_write(self) -> None:
        np = self._current()
        if np is None:
            return
        if self.shown_effect.get(np.id) != self._kept(np):
            self.query_one("#labels-effect", Static).update(
                self._line_text(np) + Text("\nnot written: press x first to see what these keys change", style="bold"))
            return
        self._write(self._edited(np))

    @work(thread=True, exclusive=True, exit_on_error=False, group="labels-write", description="write a label")
    def _write(self, np) -> None:
        from engine.review.labelcli import write

        # merge=True: a thin label gets the kept keys appended; nothing is ever replaced.
        try:
            written, refused = write([np], [], merge=True, reviewed=True)  # a person kept these keys: no unread mark
        except OSError as e:
            self.post_message(LabelWritten(np.id, [], [f"{np.id}: not written: {e.strerror or e}"]))
            return
        if written:
            self.app.memory.refresh()  # the next question sees the new label
        self.post_message(LabelWritten(np.id, written, refused))

    def on_label_written(self, message: LabelWritten) -> None:
        t = Text()
        if message.written:
            t.append(f"wrote {one_line(message.note_id)}", style="bold")
        for r in message.refused:
            t.append(f"refused: {one_line(r)}\n", style="bold red")
        self.query_one("#labels-effect", Static).update(t)
