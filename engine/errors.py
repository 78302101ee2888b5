"""The one error type a user sees: a single line naming the file and what is wrong."""

from __future__ import annotations

import os

from .clean import shown


class KbError(Exception):
    """A refusal the CLI prints as one line, exiting non-zero. Never a traceback."""

    exit_code = 2


def os_error_line(e: OSError) -> str:
    """A file system failure as one line: the file, shown, then the reason."""
    name = e.filename
    where = f"{shown(os.fsdecode(name))}: " if isinstance(name, (str, bytes, os.PathLike)) and name else ""
    return f"{where}{e.strerror or e}"
