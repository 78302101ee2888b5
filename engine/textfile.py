"""Reading the text files a person writes for kb (fleet.txt, agent.txt, gold.tsv,
kb-aliases.txt, kb-misses.txt, the constitution files): one reader, so they all agree.

A leading UTF-8 byte-order mark is accepted and dropped: Windows editors write one, and left
in place it became part of the first key (`\\ufeffname`), the first question, or an unreadable
first miss whose count then restarted.
"""

from __future__ import annotations

import os
from pathlib import Path

BOM = "\ufeff"


def read_text(path: str | os.PathLike[str], *, errors: str = "strict") -> str:
    """The file's text as UTF-8, without a leading BOM. Raises what open()/decode raise."""
    text = Path(path).read_text(encoding="utf-8", errors=errors)
    return text[1:] if text.startswith(BOM) else text
