"""kb label's options: the parser for engine/review/labelcli.py's verb (cli owns every parser)."""

from __future__ import annotations

from ..review.labelcli import cmd_label
from . import add_paths


def register(sub) -> None:
    lp = sub.add_parser(
        "label",
        help="propose Search for: lines for notes without a label (or a thin one), show the effect, write when asked",
    )
    add_paths(lp)
    lp.add_argument("--write", nargs="*", metavar="NOTE", default=None,
                    help="write the proposals (all of them, or only these notes: base/path or a file path)")
    lp.add_argument("--merge", action="store_true", help="add proposed keys to an existing (thin) label")
    lp.add_argument("--pick", action="store_true",
                    help="for each logged miss, show the notes ranked first and ask which one answers it; "
                         "only a question you pick a note for becomes a key there")
    lp.add_argument("--no-effect", action="store_true", help="skip working out the effect (faster on a big fleet)")
    lp.add_argument("--json", action="store_true", help="one line of JSON")
    lp.set_defaults(func=cmd_label)
