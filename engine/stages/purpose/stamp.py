"""The fusion stamp: `<base>/.kb/fusion-stamp.json`, the constants a base's pages were ordered by.

The first fused query against a base writes it; every later one checks it. A build whose
constants differ refuses by name, listing every differing field as a dotted path
(`conversation.weights.recency`, `normalization.graph.maxHops`), rather than silently
serving pages that differ from the ones the base served before. `restamp` is the one cure,
and running it says in as many words that future pages differ from past ones.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from engine.notes.atomic import write_atomic
from engine.notes.nofollow import make_dirs, refuse_links
from engine.notes.textfile import read_regular_text
from engine.stages.purpose.errors import FusionStampMismatch
from engine.stages.purpose.links import CONTENTS_NAMES
from engine.stages.purpose.signals import CLOCK_QUANTUM_MS, FRONTIER_CAP, HOP1, MAX_HOPS
from engine.stages.purpose.stage import INFERRED_ANCHORS
from engine.stages.purpose.weights import PURPOSES, SCALE, WEIGHT_TOTAL

STAMP_NAME = "fusion-stamp.json"
STAMP_VERSION = 1
# Receipt fields: when and by what the stamp was written. Never compared.
_RECEIPT_KEYS = frozenset({"stampedAtMs"})
_lock = threading.Lock()  # one writer at a time inside a process; os.replace handles the rest


def build_stamp() -> dict[str, Any]:
    """This build's fusion constants, as the stamp records them."""
    stamp: dict[str, Any] = {
        "version": STAMP_VERSION,
        "textSource": "rrf",
        "scale": SCALE,
        "weightTotal": WEIGHT_TOTAL,
        "normalization": {
            "text": "rrf / pool max, floored",
            "graph": {
                "hop1": HOP1,
                "maxHops": MAX_HOPS,
                "frontierCap": FRONTIER_CAP,
                "inferredAnchors": INFERRED_ANCHORS,
                "contentsIgnored": sorted(CONTENTS_NAMES),
            },
            "recency": {"shape": "shift-linear", "clockQuantumMs": CLOCK_QUANTUM_MS},
            "boost": "sum, clamped",
        },
    }
    for p in PURPOSES.values():
        stamp[p.name] = {"weights": p.weights.as_dict(), "halfLifeMs": p.half_life_ms}
    return stamp


def stamp_path(base_dir: str | os.PathLike[str]) -> Path:
    return Path(base_dir) / ".kb" / STAMP_NAME


def diff_stamps(stored: Any, current: Any, prefix: str = "") -> list[str]:
    """Every dotted path where `stored` and `current` differ (present in one only counts)."""
    if isinstance(stored, dict) and isinstance(current, dict):
        out: list[str] = []
        for k in sorted(set(stored) | set(current)):
            if not prefix and k in _RECEIPT_KEYS:
                continue
            path = f"{prefix}.{k}" if prefix else str(k)
            if k not in stored or k not in current:
                out.append(path)
            else:
                out.extend(diff_stamps(stored[k], current[k], path))
        return out
    if stored != current or type(stored) is not type(current):
        return [prefix or "(stamp)"]
    return []


def _write(path: Path, stamp: dict[str, Any]) -> dict[str, Any]:
    receipt = {**stamp, "stampedAtMs": int(time.time() * 1000)}
    make_dirs(path.parent, below=path.parent.parent)  # `.kb` is never reached through a link
    refuse_links(path, below=path.parent.parent)
    write_atomic(path, json.dumps(receipt, indent=2, sort_keys=True) + "\n")
    return receipt


def check_stamp(base_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Write the stamp when the base has none; otherwise refuse on any disagreement.
    Returns the stamp in force. Raises FusionStampMismatch naming every differing field."""
    path = stamp_path(base_dir)
    current = build_stamp()
    with _lock:
        try:
            stored = json.loads(read_regular_text(path))  # a FIFO there is unreadable, not waited on
        except FileNotFoundError:
            return _write(path, current)
        except (OSError, ValueError):
            # Unreadable or not JSON: a stamp nobody can read cannot vouch for past pages.
            raise FusionStampMismatch(str(path), ("(unreadable stamp)",)) from None
    fields = diff_stamps(stored, current) if isinstance(stored, dict) else ["(stamp)"]
    if fields:
        raise FusionStampMismatch(str(path), tuple(fields))
    return stored


def restamp(base_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Stamp the base with this build's constants, whatever it held. Returns the stamp written."""
    with _lock:
        return _write(stamp_path(base_dir), build_stamp())
