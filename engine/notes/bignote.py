"""A note too large to hold whole, read in two passes of bounded memory.

The ordinary path (read the bytes, decode, `parse_note`, `chunk_sections`) holds a note
several times over: bytes, text, lines, sections, chunks; about five times its size, a
quarter of a gigabyte for a 50 MB note. Above STREAM_ABOVE_BYTES the indexer reads the file
twice instead: once for its hash and its head (title, label, purpose, date, links), once for
its chunks, which go to the index as they are cut. Memory is then bounded by READ_BLOCK and
one window, not by the file.

The head and the chunks are the ones the ordinary path makes, with two differences, both
for text no person writes: a line longer than LINE_CAP characters is prose (never a heading,
a label, a fence or a date), and links are found line by line. A file edited between the two
passes is indexed as the second pass saw it; its new stat makes the next update read it again.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from hashlib import blake2b
from .chunking import _CUT_SLACK, CHUNK_CHARS, CHUNK_OVERLAP, Chunk
from ..clean import LINE_BREAKS
from .links import FENCE, WIKI
from .notefiles import open_note
from .note import (
    _DATE,
    _HEADING,
    _LABEL,
    _MD_LINK,
    _PURPOSE,
    Note,
    front_matter_state,
    front_matter_title,
    heading_text,
    setext_level,
    setext_text,
    species_of,
    split_keys,
)
from .proposal import marked_keys, unread_of

STREAM_ABOVE_BYTES = 4 * 1024 * 1024  # below this, holding the note whole costs ~20 MB at most
READ_BLOCK = 1 << 20
LINE_CAP = 1 << 20  # a longer line is prose here, read in pieces of this size


@dataclass(frozen=True)
class Scan:
    """Pass one: the problem that stops indexing, or the hash and the note's head."""

    problem: str | None
    hash: str | None = None
    note: Note | None = None  # sections empty: the chunks come from `chunks()`
    raw_title: str = ""  # the title as found ('' when the note has no heading): heading paths
    label_lines: frozenset[int] = frozenset()  # 0-based lines left out of the text
    front: int = 0  # lines of front matter at the top: not text
    setext: dict[int, tuple[int, str]] = field(default_factory=dict)  # underlined heading lines: (level, text)


def scan(root: Path, rel: str, st: os.stat_result | None, max_bytes: int, block: int = READ_BLOCK) -> Scan:
    """Hash, check and read the head of a large note, holding one block at a time."""
    if st is not None and st.st_size > max_bytes:
        return Scan(f"{rel}: too large to index ({st.st_size:,} bytes; limit {max_bytes:,})")
    h = blake2b(digest_size=8)  # as notefiles.content_hash
    head = _Head()
    state = {"nonblank": False}

    def feed_bytes(raw: bytes) -> None:
        h.update(raw)
        if not state["nonblank"] and raw.strip():
            state["nonblank"] = True

    try:
        with open_note(root / rel) as f:
            opening = f.read(8192)
        if b"\x00" in opening:
            return Scan(f"{rel}: binary, not markdown (NUL byte)")
        for seg in _segments(root / rel, block, feed_bytes):
            head.take(*seg)
        head.finish()
    except _Refused as r:
        return Scan(f"{rel}: {r.why}")
    except FileNotFoundError:
        return Scan(f"{rel}: vanished before it could be read")
    except PermissionError:
        return Scan(f"{rel}: cannot read (permission denied)")
    except IsADirectoryError:
        return Scan(f"{rel}: is a directory")
    except OSError as e:
        return Scan(f"{rel}: cannot read ({e.strerror})")
    if not state["nonblank"]:
        return Scan(f"{rel}: empty file")
    note = head.note(rel)
    # The mark under the title's label is no text, as parse_note leaves it out (its line is the label's 1-based line).
    left_out = head.label_lines | ({note.label_line} if note.label_under_title and note.label_line in head.marks else set())
    return Scan(None, h.hexdigest(), note, head.raw_title(), frozenset(left_out), head.front or 0, head.setext)


def chunks(root: Path, rel: str, s: Scan, block: int = READ_BLOCK) -> Iterator[Chunk]:
    """Pass two: the note's chunks in order, cut as the text streams past."""
    stack: list[tuple[int, str]] = []
    in_fence = False
    start = s.front
    win = _Windows()

    def path() -> str:
        return " > ".join(t for _, t in stack) or s.raw_title

    def emit(pieces: list[str]) -> Iterator[Chunk]:
        for p in pieces:
            yield Chunk(heading_path=path(), text=p, line=start + 1)

    try:
        for i, piece, first, last in _segments(root / rel, block, None):
            if i < s.front:
                continue  # front matter: data, not text
            if first and last:
                if FENCE.match(piece):
                    in_fence = not in_fence
                m = None if in_fence else _HEADING.match(piece)
                heading = (len(m.group(1)), heading_text(m)) if m else s.setext.get(i)
                if heading:
                    yield from emit(win.finish())
                    win = _Windows()
                    start = i
                    while stack and stack[-1][0] >= heading[0]:
                        stack.pop()
                    stack.append(heading)
                    continue
                if i in s.label_lines or i - 1 in s.setext:  # a label, an underline
                    continue
            yield from emit(win.feed(piece, new_line=first))
        yield from emit(win.finish())
    except (OSError, UnicodeDecodeError, _Refused):
        return  # gone or changed since pass one: its new stat brings it back next update


class _Refused(Exception):
    def __init__(self, why: str):
        self.why = why


_BREAKS = frozenset(LINE_BREAKS)  # where str.splitlines() cuts


def _segments(full: Path, block: int, on_bytes) -> Iterator[tuple[int, str, bool, bool]]:
    """(line number, text, starts the line, ends the line) as str.splitlines() cuts the text.

    A line up to LINE_CAP comes whole (both flags set); a longer one in LINE_CAP pieces.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    lineno = 0
    carry = ""  # the unfinished line
    started = False  # part of the unfinished line was already given out
    skip_lf = False  # the last line ended in "\r": a "\n" right after it is the same break
    at_start = True  # a leading byte-order mark is not text
    offset = 0
    with open_note(full) as f:
        while True:
            raw = f.read(block)
            final = not raw
            if raw and on_bytes is not None:
                on_bytes(raw)
            pending = decoder.getstate()[0]
            try:
                text = decoder.decode(raw, final=final)
            except UnicodeDecodeError as e:
                bad = e.object[e.start] if e.start < len(e.object) else 0
                raise _Refused(f"not UTF-8 (byte 0x{bad:02x} at offset {offset - len(pending) + e.start})") from None
            offset += len(raw)
            if at_start and text:
                text = text.lstrip("\ufeff")
                at_start = not text
            if skip_lf and text:
                if text.startswith("\n"):
                    text = text[1:]
                skip_lf = False
            if text:
                parts = (carry + text).splitlines(keepends=True)
                carry = ""
                for n, part in enumerate(parts):
                    end = part[-1]
                    if end not in _BREAKS:  # only the last part can lack a break: unfinished
                        carry = part
                        break
                    cut = 2 if end == "\n" and part.endswith("\r\n") else 1
                    if end == "\r" and n == len(parts) - 1:
                        skip_lf = True  # a "\n" may open the next block
                    yield lineno, part[:-cut], not started, True
                    lineno += 1
                    started = False
                while len(carry) > LINE_CAP:
                    yield lineno, carry[:LINE_CAP], not started, False
                    carry = carry[LINE_CAP:]
                    started = True
            if final:
                break
    if carry or started:
        yield lineno, carry, not started, True


class _Head:
    """parse_note's reading of the title, the label, the purpose, the date and the links."""

    def __init__(self) -> None:
        self.in_fence = False
        self.front: int | None = None  # lines of front matter, once the first lines tell (0: none)
        self.held: list[tuple[int, str, bool, bool]] = []  # the lines read while they do not yet
        self.front_title = ""
        self.plain: tuple[int, str] | None = None  # the last line that may be a heading's text
        self.setext: dict[int, tuple[int, str]] = {}  # every underlined heading: line -> (level, text)
        self.title: tuple[str, int] | None = None  # the first level-one heading
        self.first_heading: tuple[str, int] | None = None
        self.prose_at: int | None = None  # the first non-blank line that is no heading
        self.under: dict[int, tuple[int, tuple[str, ...]] | None] = {}  # heading line -> label under it
        self.waiting: list[int] = []  # headings whose next non-blank line is not yet seen
        self.long_nonblank = False
        self.label_lines: set[int] = set()
        self.marks: dict[int, tuple[str, ...]] = {}  # line -> the keys kb label's mark under a label names
        self.first_label: int | None = None
        self.purpose = ""
        self.date: str | None = None
        self.md: list[str] = []
        self.wiki: list[str] = []

    def take(self, i: int, text: str, first: bool, last: bool) -> None:
        self._links(text)
        if first and last:
            self._facts(i, text)
        if self.front is None:  # the top of the note: front matter or not, held until it tells
            self.held.append((i, text, first, last))
            whole = all(f and lst for _, _, f, lst in self.held)  # a long line is no YAML
            state = front_matter_state([t for _, t, _, _ in self.held]) if whole else 0
            if state is not None:
                self._settle(state)
            return
        self._structure(i, text, first, last)

    def finish(self) -> None:
        """The end of the note: lines still held were no front matter (it never closed)."""
        if self.front is None:
            self._settle(0)

    def _settle(self, front: int) -> None:
        self.front, held, self.held = front, self.held, []
        self.front_title = front_matter_title(t for _, t, _, _ in held[1:front])
        for line in held[front:]:
            self._structure(*line)

    def _structure(self, i: int, text: str, first: bool, last: bool) -> None:
        """Fences and headings (`#` and underlined), below the front matter."""
        if self.prose_at is None and text.strip() and not (first and last and _HEADING.match(text)):
            self.prose_at = i  # an underlined heading's text counts here, and opens the note
        if not (first and last):  # a long line: prose, but it may end a heading's wait
            self.plain = None
            self.long_nonblank = self.long_nonblank or bool(text.strip())
            if last:
                self._resolve(i, None if self.long_nonblank else "")
                self.long_nonblank = False
            return
        self._resolve(i, text)
        if FENCE.match(text):
            self.in_fence = not self.in_fence
            return
        if self.in_fence:
            return
        m = _HEADING.match(text)
        if m:
            self._heading(i, len(m.group(1)), heading_text(m))
            return
        level = setext_level(text) if self.plain and self.plain[0] == i - 1 else 0
        above = setext_text(self.plain[1]) if level else None
        if above is not None:
            self.setext[i - 1] = (level, above)
            self._heading(i - 1, level, above)  # waits from here: the underline is no label
            self.plain = None
            return
        self.plain = (i, text)

    def _heading(self, i: int, level: int, text: str) -> None:
        if self.title is not None:
            return
        if level == 1:
            self.title = (text, i)
            self.waiting.append(i)
        elif self.first_heading is None and (self.prose_at is None or self.prose_at >= i):
            self.first_heading = (text, i)  # only a heading that opens the note (parse_note)
            self.waiting.append(i)

    def _facts(self, i: int, text: str) -> None:
        """The label, purpose and date lines, read on every line as parse_note does."""
        if i - 1 in self.label_lines:
            marked = marked_keys(text)
            if marked is not None:
                self.marks[i] = marked
        if _LABEL.match(text):
            self.label_lines.add(i)
            if self.first_label is None:
                self.first_label = i
        elif not self.purpose:
            pm = _PURPOSE.match(text)
            if pm:
                self.purpose = pm.group(2).strip().strip("*").strip()
        if self.date is None:
            dm = _DATE.match(text)
            if dm:
                self.date = dm.group(2)

    def _resolve(self, i: int, text: str | None) -> None:
        """The first non-blank line after a heading settles whether a label stands under it."""
        if not self.waiting or (text is not None and not text.strip()):
            return
        m = _LABEL.match(text) if text is not None else None
        for h in self.waiting:
            if h < i:
                self.under[h] = (i, split_keys(m.group(2))) if m else None
        self.waiting = [h for h in self.waiting if h >= i]

    def _links(self, text: str) -> None:
        if "[" not in text:
            return
        for m in _MD_LINK.finditer(text):
            t = m.group(1)
            if "://" in t or t.startswith(("mailto:", "#")):
                continue
            self.md.append(t.split("#", 1)[0])
        self.wiki.extend(m.group(1).strip() for m in WIKI.finditer(text))

    def raw_title(self) -> str:
        t = self.title or self.first_heading
        return t[0] if t else ""

    def note(self, rel: str) -> Note:
        t = self.title or self.first_heading
        title, title_line = (t[0], t[1]) if t else ("", None)
        label_line, under, keys = None, False, ()
        if title_line is not None and self.under.get(title_line):
            label_line, keys = self.under[title_line]
            under = True
        if label_line is None:
            label_line = self.first_label
        problems = ("the Search for: line has no keys",) if under and not keys else ()
        links = tuple(dict.fromkeys(t for t in self.md + self.wiki if t))
        return Note(
            relpath=rel,
            title=title or self.front_title or PurePosixPath(rel).stem,
            keys=keys,
            purpose=self.purpose,
            is_entry=under and bool(keys),
            label_line=None if label_line is None else label_line + 1,
            label_under_title=under,
            title_line=None if title_line is None else title_line + 1,
            sections=(),
            links=links,
            date=self.date,
            species=species_of(rel),
            problems=problems,
            unread=unread_of(keys, self.marks.get(label_line + 1)) if under else (),
        )


class _Windows:
    """chunking.windows() over a section that arrives in pieces: the same cuts, one window held."""

    def __init__(self) -> None:
        self.buf = ""  # the text from the current window's start, trailing space held back
        self.behind = ""  # the CHUNK_CHARS characters before it: the last window starts there
        self.more: list[str] = []
        self.more_len = 0
        self.ws = ""  # trailing whitespace, kept until more text follows (the body is stripped)
        self.started = False  # leading whitespace dropped, and some text seen
        self.cut = False
        self.lines = 0

    def feed(self, s: str, *, new_line: bool) -> list[str]:
        if new_line:
            if self.lines:
                s = "\n" + s
            self.lines += 1
        if not self.started:
            s = s.lstrip()
            if not s:
                return []
            self.started = True
        core = s.rstrip()
        if not core:
            self.ws += s
            return []
        self.more.append(self.ws + core)
        self.more_len += len(self.ws) + len(core)
        self.ws = s[len(core):]
        if len(self.buf) + self.more_len > CHUNK_CHARS:
            return self._cuts()
        return []

    def _cuts(self) -> list[str]:
        buf = self.buf + "".join(self.more)
        self.more, self.more_len = [], 0
        out = []
        pos = 0
        while len(buf) - pos > CHUNK_CHARS:  # the text runs past this window: cut it
            end = pos + CHUNK_CHARS
            blank = buf.rfind("\n\n", end - _CUT_SLACK, end)
            if blank > pos + CHUNK_OVERLAP:
                end = blank
            piece = buf[pos:end].strip()
            if piece:
                out.append(piece)
            self.cut = True
            pos = max(end - CHUNK_OVERLAP, pos + 1)
        if pos:
            self.behind = (self.behind + buf[:pos])[-CHUNK_CHARS:]
        self.buf = buf[pos:]
        return out

    def finish(self) -> list[str]:
        out = self._cuts()
        if not self.started:
            return out
        if not self.cut:
            return out + ([self.buf] if self.buf.strip() else [])
        # A full last window, as chunking.windows() makes it: the section's last CHUNK_CHARS.
        piece = (self.behind + self.buf)[-CHUNK_CHARS:].strip()
        return out + ([piece] if piece else [])
