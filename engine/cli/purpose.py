"""The purpose fusion's pieces of the `kb` command line (rows of engine/cli's verb table).

    kb route QUESTION PATH --purpose NAME [--near PATH ...] [--boost FIELD=VALUE:AMOUNT ...]
    kb fusion restamp PATH

`add_route_options(route_parser)` adds the three options to `kb route`; `route_kwargs(args)`
turns them into Memory.ask's keywords; `add_fusion(subparsers)` adds `kb fusion restamp`;
`explain(fusion)` is the "why this row" lines a text surface prints under a row.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..notes.fleet import discover
from ..stages.purpose import PURPOSE_NAMES
from . import add_paths

if TYPE_CHECKING:
    import argparse  # annotations only

# The stage itself is imported by the handler that runs it: `kb route` parses these options
# on every prompt of a hook and fuses for a purpose rarely.


def add_route_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("purpose fusion (re-orders the reading list only)")
    g.add_argument(
        "--purpose",
        metavar="NAME",
        help=f"order the reading list for a purpose: {', '.join(PURPOSE_NAMES)}",
    )
    g.add_argument(
        "--near",
        metavar="PATH",
        action="append",
        help="an anchor note (a file path or base/path); repeatable; graph proximity is measured from these",
    )
    g.add_argument(
        "--boost",
        metavar="FIELD=VALUE:AMOUNT",
        action="append",
        help="add AMOUNT (0 to 1) of the boost range to rows whose FIELD equals VALUE "
        "(agent, base, species, path, title, id); repeatable; summed, then clamped",
    )


def route_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Memory.ask keywords from `kb route`'s options; empty when none was given, so the
    plain route is byte-identical to one without the stage."""
    out: dict[str, Any] = {}
    if getattr(args, "purpose", None) is not None:
        out["purpose"] = args.purpose
    if getattr(args, "near", None):
        out["near"] = list(args.near)
    if getattr(args, "boost", None):
        out["boosts"] = list(args.boost)
    return out


def add_fusion(subparsers: Any) -> argparse.ArgumentParser:
    """Add `kb fusion restamp PATH` to a subparsers object; returns the `fusion` parser."""
    fusion = subparsers.add_parser("fusion", help="the purpose fusion's per-base stamp")
    sub = fusion.add_subparsers(dest="fusion_command", metavar="COMMAND", required=True)
    rs = sub.add_parser(
        "restamp",
        help="stamp each base with this build's fusion weights (future pages will differ from past ones)",
    )
    add_paths(rs, many=False)
    rs.add_argument("--json", action="store_true", help="print the stamps written as JSON")
    rs.set_defaults(func=cmd_restamp)
    return fusion


def cmd_restamp(args: argparse.Namespace) -> int:
    """Restamp every base under args.path; prints one receipt line per base (or JSON)."""
    from ..stages.purpose.stamp import restamp, stamp_path

    fleet = discover([args.path])
    receipts = {b.name: restamp(b.root) for b in fleet.bases}
    if getattr(args, "json", False):
        print(json.dumps(receipts, indent=2, sort_keys=True))
    else:
        for b in fleet.bases:
            print(f"restamped {stamp_path(b.root)}: this base's fused pages now follow this build's weights")
    return 0


def explain(fusion: dict[str, Any]) -> list[str]:
    """A row's four contributions as lines that visibly add up to its fused score."""
    lines = [f"purpose {fusion['purpose']}" + (f", {fusion['anchor']} anchor" if fusion.get("anchor") else "")]
    total = 0
    for name, c in fusion["contributions"].items():
        total += c["contribution"]
        raw = "-" if c["raw"] is None else c["raw"]
        lines.append(
            f"  {name:<8} raw {raw!s:<22} -> {c['normalized']:>9,} x {c['weight']:>5,} = {c['contribution']:>15,}"
        )
    lines.append(f"  {'fused':<8} {'':<26} {'':>9}   {'':>5}   {total:>15,}")
    return lines
