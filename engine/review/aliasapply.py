"""Applying a proposed alias line: which logged questions it turns into hits, then writing it.

The misses screen shows the first before it does the second. The line is appended to the
fleet's kb-aliases.txt atomically; a line already there is not written twice, and nothing
else in the file changes.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from ..notes.aliases import Alias
from ..notes.atomic import create_atomic, write_atomic
from ..clean import shown
from ..notes.nofollow import refuse_links
from ..notes.textfile import BOM, text_lines
from ..rank.gate import verdict_for
from ..rank.normalize import terms


@dataclass(frozen=True)
class AliasEffect:
    question: str
    verdict_before: str
    verdict_with: str
    top_with: str | None


def alias_effect(memory, line: str, questions: list[str]) -> list[AliasEffect]:
    """Each question's verdict without and with `alias = canonical` (keyword scorer only,
    which is what the verdict comes from)."""
    alias, _, canonical = line.partition("=")
    extra = Alias(tuple(terms(alias)), tuple(terms(canonical)), 0)
    n = memory.snapshot().catalogue.n
    out = []
    for q in questions:
        before = memory.keyword_only(q)
        after = memory.keyword_only(q, extra_aliases=(extra,))
        out.append(AliasEffect(
            q, verdict_for(before[0].score if before else 0.0, n),
            verdict_for(after[0].score if after else 0.0, n), after[0].id if after else None,
        ))
    return out


def append_alias(path: Path, line: str) -> bool:
    """Add `line` at the end of the aliases file; False when it is there already.

    The bytes already there stay as they are (a byte-order mark, CRLF endings: the new line
    takes the file's ending). The file is locked while it is read and replaced, so two
    reading rooms appending at once both land; one that finds the file replaced while it
    waited reads the new one. Every refusal is an OSError of one line naming the file.
    """
    if any(c in line for c in "\n\r\x00"):  # only these end a line there (engine/notes/textfile.text_lines)
        raise OSError(f"{shown(str(path))}: the alias line holds a line break or a NUL; not written")
    refuse_links(path)
    give_up = time.monotonic() + _PATIENCE_SECONDS
    while time.monotonic() < give_up:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                create_atomic(path, line + "\n")  # never over a file another writer just made
                return True
            except FileExistsError:
                continue
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read forever
                raise OSError(f"{shown(str(path))}: not a regular file; not written")
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                now = os.stat(path, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                continue  # replaced by another writer while this one waited: read the new file
            current = f.read()
            try:
                text = current.decode("utf-8")
            except UnicodeDecodeError as e:
                raise OSError(f"{shown(str(path))}: not UTF-8 (byte 0x{current[e.start]:02x} at offset "
                              f"{e.start}); not written") from None
            wanted = " ".join(line.split())
            if any(" ".join(x.split()) == wanted for x in text_lines(text.removeprefix(BOM))):
                return False
            if text.endswith("\n"):
                eol, sep = ("\r\n" if text.endswith("\r\n") else "\n"), ""
            else:  # a last line without its ending gets one, the file's
                eol = "\r\n" if "\r\n" in text else "\n"
                sep = eol if text else ""
            write_atomic(path, current + (sep + line + eol).encode("utf-8"))
            return True
    raise OSError(f"{shown(str(path))}: other writers kept replacing it for {_PATIENCE_SECONDS} s; not written")


# Each retry means another writer's line landed; only a file rewritten without pause for this
# long stops this one (a count of 50 retries gave up under four writers on a loaded machine).
_PATIENCE_SECONDS = 30
