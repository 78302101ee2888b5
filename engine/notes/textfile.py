"""Reading the text files a person writes for kb (fleet.txt, agent.txt, gold.tsv,
kb-aliases.txt, kb-misses.txt, the constitution files): one reader, so they all agree.

Where one line ends: at "\n" alone (a "\r" before it is a Windows ending, dropped), in
kb-aliases.txt and kb-misses.txt. str.splitlines() also ends a line at U+2028, U+2029,
NEL, a form feed and more, which text pasted from a web page carries inside a question: it
cut the question or the alias in two and put every later line at the wrong number.

A leading UTF-8 byte-order mark is accepted and dropped: Windows editors write one, and left
in place it became part of the first key (`\\ufeffname`), the first question, or an unreadable
first miss whose count then restarted.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from pathlib import Path

BOM = "\ufeff"


def read_text(path: str | os.PathLike[str], *, errors: str = "strict") -> str:
    """The file's text as UTF-8, without a leading BOM. Raises what open()/decode raise."""
    text = Path(path).read_text(encoding="utf-8", errors=errors)
    return text[1:] if text.startswith(BOM) else text


def open_regular(path: str | os.PathLike[str]) -> io.BufferedReader:
    """A file opened for reading that another program may have replaced or planted: a FIFO's
    open and read would wait for a writer forever, so it is opened without waiting, and
    anything but a regular file raises OSError (EINVAL, "not a regular file")."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        f.close()
        raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
    return f


class TooLarge(ValueError):
    """A file longer than its reader reads (a manifest a repository padded)."""


def read_regular_text(path: str | os.PathLike[str], *, errors: str = "strict", max_bytes: int | None = None) -> str:
    """read_text for a file another program may have planted (a `.gitignore`, a `.git` file),
    through open_regular: a FIFO is refused, not waited on. `max_bytes`: TooLarge past it,
    read no further than one byte beyond."""
    with open_regular(path) as f:
        raw = f.read() if max_bytes is None else f.read(max_bytes + 1)
        if max_bytes is not None and len(raw) > max_bytes:
            raise TooLarge(f"larger than {max_bytes:,} bytes")
        text = raw.decode("utf-8", errors=errors)
    return text[1:] if text.startswith(BOM) else text


def text_lines(text: str) -> list[str]:
    """The file's lines as an editor numbers them: split at "\n", each without its "\r\n"."""
    lines = text.split("\n")
    if lines[-1] == "":  # the last line's own ending is no line after it
        lines.pop()
    return [line.removesuffix("\r") for line in lines]
