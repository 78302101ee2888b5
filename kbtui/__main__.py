"""`kbtui PATH`: the reading room (kbtui/app.py parses the options and runs it)."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from .app import run

    return run(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())
