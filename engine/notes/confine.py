"""A path named by a caller, resolved inside the bases or refused by name.

`kb serve` answers other people's runtimes, and `kb remember --write` creates files, so a
path from outside is resolved the way the filesystem will resolve it (`..`, symlinks,
absolute paths) before it is trusted. A path that lands outside every base is refused with
its own spelling in the message, so the caller can see which argument was wrong.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterable

from ..clean import as_text
from ..errors import KbError
from .fleet import Base


class OutsideBases(KbError):
    """A path that resolves outside every base this process was given."""


@dataclass(frozen=True)
class Inside:
    base: Base
    rel: str  # posix path relative to the base root; "" for the root itself
    path: Path  # the resolved absolute path

    @property
    def id(self) -> str:
        return f"{self.base.name}/{self.rel}" if self.rel else self.base.name


def confine(bases: Iterable[Base], raw: str | os.PathLike[str]) -> Inside:
    """Where `raw` lands, if that is inside one of `bases`; else OutsideBases naming `raw`.

    A relative path whose first part is a base's name is read from that base
    (`zed/knowledge/x.md`, the ids every answer prints); any other relative path is read
    from the working directory, as a shell would.
    """
    bases = tuple(bases)
    shown = os.fspath(raw)
    names = ", ".join(as_text(b.name) for b in bases)
    if not shown.strip() or "\x00" in shown:
        raise OutsideBases(f"{shown!r}: not a path; name a base or a note inside one ({names})")
    p = Path(shown).expanduser()
    if not p.is_absolute():
        parts = PurePosixPath(shown.replace(os.sep, "/")).parts
        # A base's name as kb serve spells it too (clean.as_text: escaped when it is not UTF-8),
        # read from the base's own folder.
        match = next((b for b in bases if parts[0] in (b.name, as_text(b.name))), None)
        p = match.root.joinpath(*parts[1:]) if match is not None else Path.cwd() / p
    real = Path(os.path.realpath(p))
    for b in bases:
        root = Path(os.path.realpath(b.root))
        if real == root or root in real.parents:
            rel = real.relative_to(root).as_posix() if real != root else ""
            return Inside(base=b, rel=rel, path=real)
    raise OutsideBases(f"{shown}: outside the bases this was started with ({names}); refused")
