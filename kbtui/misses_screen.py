"""The misses screen: kb-misses.txt read back, most asked first, each question re-asked of
today's index (engine/review/missreview: what it gets now, the files it nearly reached, an alias
line proved before anyone writes it). Enter asks a question again on the main screen; p shows
the notes nearest a question and a number picks the one that answers it, which writes the
question as a key there (the only way a logged question becomes a key: a person's choice)."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.binding import Binding
from textual.widgets import DataTable

from engine.review.misses import misses_path
from engine.review.missreview import review_misses

from .clean import name_line, one_line
from .messages import AliasEffectShown, AliasWritten, MissesLoaded
from .table_screen import TableScreen


class MissesScreen(TableScreen):
    NAME, TITLE = "misses", "Misses"
    COLUMNS = (("count", "count", 5), ("first seen", "first", 10), ("last seen", "last", 10), ("question", "question", None))
    BINDINGS = [
        Binding("r", "reload", "Reload", id="misses.reload"),
        Binding("a", "apply_alias", "Apply alias", id="misses.apply"),
        Binding("p", "pick", "Pick its note", id="misses.pick"),
        *[Binding(str(n), f"pick_row({n})", show=False, id=f"misses.pick{n}") for n in range(1, 6)],
    ]

    def load(self) -> None:
        self.entries: list = []
        self._alias_asked: str | None = None  # the alias line whose effect is being worked out
        self._alias_shown: str | None = None  # the alias line whose effect is on screen: a second `a` writes it
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
        title = self.title_text()
        total = sum(r.entry.count for r in message.entries)
        n = len(message.entries)
        title.append(f"  {n} question{'s' if n != 1 else ''}, asked {total} time{'s' if total != 1 else ''}",
                     style="bold")
        title.append("  kb-misses.txt, most asked first; private, git-ignored", style="dim")
        self.set_title(title)
        self.fill([
            (str(i), [Text(str(r.entry.count), style="bold", justify="right"), Text(r.entry.first_seen),
                      Text(r.entry.last_seen), Text(one_line(r.entry.question), no_wrap=True)])
            for i, r in enumerate(message.entries)
        ])
        detail = self.detail
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

    def action_apply_alias(self) -> None:
        """First a: which logged questions the proposed line turns into hits. Second a: write it."""
        row = self.query_one(DataTable).cursor_row
        if not self.entries or row is None or getattr(self.entries[row], "proposal", None) is None:
            return
        line = self.entries[row].proposal.line
        if self._alias_shown == line:
            self._alias_shown = None
            self._apply_alias(line)
        else:
            # Armed only when the effect is painted (on_alias_effect_shown): a second `a`
            # before that, or after a failed effect, asks again instead of writing unseen.
            self._alias_asked, self._alias_shown = line, None
            self._alias_effect(line, [r.entry.question for r in self.entries])

    @work(thread=True, exclusive=True, exit_on_error=False, group="misses-alias", description="alias effect")
    def _alias_effect(self, line: str, questions: list[str]) -> None:
        from engine.review.aliasapply import alias_effect

        try:
            effects = alias_effect(self.app.memory, line, questions)
        except OSError as e:
            self.post_message(AliasEffectShown(line, [], f"cannot work out the effect: {e.strerror or e}"))
            return
        self.post_message(AliasEffectShown(line, effects))

    def on_alias_effect_shown(self, message: AliasEffectShown) -> None:
        if message.line != self._alias_asked:
            return  # another row's line was asked for since: its own message will come
        t = Text()
        t.append(one_line(message.line) + "\n", style="bold")
        if message.error:
            t.append(one_line(message.error), style="bold red")
            self.detail.update(t)
            return
        self._alias_shown = message.line
        hits = [e for e in message.effects if e.verdict_with == "hit" and e.verdict_before != "hit"]
        t.append(f"turns {len(hits)} of {len(message.effects)} logged question(s) into hits:\n")
        for e in hits[:8]:
            t.append(f"  {one_line(e.question)} -> {one_line(e.top_with or '')}\n")
        t.append("a again writes it to kb-aliases.txt, only if it is true", style="bold")
        self.detail.update(t)

    @work(thread=True, exclusive=True, exit_on_error=False, group="misses-alias", description="write alias")
    def _apply_alias(self, line: str) -> None:
        from engine.review.aliasapply import append_alias
        from engine.errors import os_error_line

        try:
            wrote = append_alias(self.app.memory.fleet.aliases_path, line)
        except OSError as e:  # "file: reason", not "[Errno 13] ...: 'file'"
            self.post_message(AliasWritten(line, False, os_error_line(e)))
            return
        self.post_message(AliasWritten(line, wrote))

    def on_alias_written(self, message: AliasWritten) -> None:
        if message.error:
            self.detail.update(Text(f"not written: {one_line(message.error)}", style="bold red"))
        elif message.wrote:
            self.detail.update(Text(f"wrote {one_line(message.line)} to kb-aliases.txt", style="bold"))
        else:
            self.detail.update(Text("that line is in kb-aliases.txt already", style="bold"))

    # -- a person picks the note that answers a logged question (issue 26: never the text
    # leg's first row on its own); the question becomes a key there, nothing else changes.

    def action_pick(self) -> None:
        row = self.query_one(DataTable).cursor_row
        if not self.entries or row is None:
            return
        question = self.entries[row].entry.question
        a = self.app.memory.ask(question, record_miss=False, with_passages=False, top=5, classify=False)
        rows = [r.id for r in a.results[:5]]
        self._picking = (question, rows)
        t = Text()
        t.append(one_line(question) + "\n", style="bold")
        if not rows:
            t.append("no note comes near it: nothing to pick", style="dim")
        for n, rid in enumerate(rows, start=1):
            t.append(f"  {n}. {name_line(rid)}\n")
        if rows:
            t.append("type the number of the note that answers it: the question becomes a key there", style="bold")
        self.detail.update(t)

    def action_pick_row(self, n: int) -> None:
        picking = getattr(self, "_picking", None)
        if not picking or not 1 <= n <= len(picking[1]):
            return
        self._picking = None
        self._write_picked_key(picking[0], picking[1][n - 1])

    @work(thread=True, exclusive=True, exit_on_error=False, group="misses-pick", description="pick a note")
    def _write_picked_key(self, question: str, note_id: str) -> None:
        from engine.errors import KbError
        from engine.review.labelcli import attach_question

        try:
            done = attach_question(self.app.memory.fleet, note_id, question)
        except (KbError, OSError) as e:
            self.app.call_from_thread(self.detail.update, Text(f"not written: {one_line(str(e))}", style="bold red"))
            return
        if done.written:
            self.app.memory.refresh()  # the next question sees the new key
        t = Text(f"wrote {one_line(question)!r} as a key of {one_line(note_id)}" if done.written
                 else "not written: " + one_line("; ".join(done.refused + done.skipped)),
                 style="bold" if done.written else "bold red")
        self.app.call_from_thread(self.detail.update, t)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # The detail pane is repainted: an alias effect no longer on screen no longer arms `a`.
        self._alias_asked = self._alias_shown = None
        self._picking = None
        if event.row_key is not None and self.entries:
            self.detail.update(self._detail(int(event.row_key.value)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key is not None and self.entries:
            self.app.ask(self.entries[int(event.row_key.value)].entry.question)
