"""`kb boot`: the prompt hook's verb (a row of engine/cli's verb table).

It runs on every prompt a person types, so this module imports what routing one message
needs and no more.
"""

from __future__ import annotations

import sys

from ..review.boot import brief, parse_request
from ..clean import shown
from ..rank.covered import OPTION, OPTION_HELP
from ..errors import KbError
from ..memory import Memory
from . import MISSES_HELP, add_no_record


def add_boot(subparsers) -> None:
    bt = subparsers.add_parser(
        "boot", help="route a message on stdin and print the owning agent's constitution (for a prompt hook)",
        epilog=MISSES_HELP,
    )
    # The one PATH that does not default to `.` at once: a hook's envelope names its cwd first.
    bt.add_argument("path", nargs="?", metavar="PATH", help="a base or a fleet root (default: the hook's cwd, else .)")
    bt.add_argument("--session", metavar="ID", help="print the constitution only when this session's agent changes")
    bt.add_argument("--text", action="store_true", help="stdin is the message itself, never a JSON envelope")
    bt.add_argument(OPTION, action="store_true", help=OPTION_HELP)
    add_no_record(bt)
    bt.set_defaults(func=cmd_boot)


def cmd_boot(args) -> int:
    # Exit 2 from a prompt hook blocks the person's message in some hosts, so a refusal here
    # is exit 1 (shown, not blocking): the conversation goes on without an identity.
    try:
        req = parse_request(sys.stdin.read(), text_only=args.text)
        mem = Memory([args.path or req.cwd or "."], coverage_rule=args.coverage_rule or None,
                     record_misses=not args.no_record)
        b = brief(mem, req, session=args.session)
    except KbError as e:
        print(f"kb boot: {shown(str(e))}", file=sys.stderr)
        return 1
    if b.text:
        print(b.text)
    return 0
