"""The one error type a user sees: a single line naming the file and what is wrong."""

from __future__ import annotations


class KbError(Exception):
    """A refusal the CLI prints as one line, exiting non-zero. Never a traceback."""

    exit_code = 2
