"""The store stamp: which cross-encoder ordered a base, at `<base>/.kb/rerank-stamp.json`.

The first rerank a base runs writes it; every later use checks it against the loaded model and
refuses a different one (model id, weights digest or precision) until `kb rerank restamp BASE`.
Nothing re-stamps on its own: a stamp that followed whichever model turned up would record nothing.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...notes.atomic import write_atomic
from ...notes.nofollow import make_dirs, refuse_links
from ...notes.textfile import read_regular_text
from .errors import RerankStampMismatch, RerankUnavailable
from .model import ModelInfo

STAMP_NAME = "rerank-stamp.json"
STAMP_VERSION = 1
# The fields that make two orders the same order; the date is provenance, not identity.
STAMP_FIELDS = ("model", "weights_sha256", "precision")


def stamp_path(base_dir: str | Path) -> Path:
    return Path(base_dir) / ".kb" / STAMP_NAME


def stamp_of(info: ModelInfo) -> dict[str, Any]:
    return {
        "version": STAMP_VERSION,
        "model": info.model_id,
        "weights_sha256": info.weights_sha256,
        "precision": info.precision,
        "stamped_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def read_stamp(path: Path) -> dict[str, Any] | None:
    """The stamp, or None when the base was never reranked; an unreadable stamp is refused."""
    try:
        raw = read_regular_text(path)  # a FIFO there is unreadable, not waited on
    except FileNotFoundError:
        return None
    except OSError as e:
        raise RerankUnavailable("stamp-unreadable", str(path), f"cannot read ({e.strerror})", f"kb rerank restamp {path.parent.parent}") from None
    except UnicodeDecodeError as e:  # not a stamp kb wrote: refused as one, never a traceback
        raise RerankUnavailable("stamp-unreadable", str(path), f"not UTF-8 ({e.reason})", f"kb rerank restamp {path.parent.parent}") from None
    try:
        data = json.loads(raw)
    except ValueError as e:
        raise RerankUnavailable("stamp-unreadable", str(path), f"not JSON ({e})", f"kb rerank restamp {path.parent.parent}") from None
    if not isinstance(data, dict) or any(f not in data for f in STAMP_FIELDS):
        raise RerankUnavailable("stamp-unreadable", str(path), f"lacks one of {list(STAMP_FIELDS)}", f"kb rerank restamp {path.parent.parent}")
    return data


def write_stamp(path: Path, info: ModelInfo) -> dict[str, Any]:
    stamp = stamp_of(info)
    try:
        make_dirs(path.parent, below=path.parent.parent)  # `.kb` is never reached through a link
    except FileNotFoundError:
        # The base was deleted or moved while this process ran: kb never makes it again
        # (engine/notes/nofollow.make_dirs), so the stage is refused, as for an unreadable stamp.
        raise RerankUnavailable("stamp-unwritable", str(path), "the base's folder is gone (deleted or moved)",
                                f"kb index {path.parent.parent}") from None
    refuse_links(path, below=path.parent.parent)
    write_atomic(path, json.dumps(stamp, indent=2, sort_keys=True) + "\n")
    return stamp


def check_stamp(path: Path, info: ModelInfo) -> dict[str, Any]:
    """The gate: stamp a never-reranked base, pass a matching one, refuse any other by field."""
    stored = read_stamp(path)
    if stored is None:
        return write_stamp(path, info)
    loaded = stamp_of(info)
    differ = [f for f in STAMP_FIELDS if stored.get(f) != loaded[f]]
    if differ:
        raise RerankStampMismatch(str(path), stored, loaded, differ)
    return stored
