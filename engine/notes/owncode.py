"""How kb starts a Python process of its own: this interpreter, running this copy's code.

`python -m module` puts the working directory first on sys.path, ahead of the installed
package and of PYTHONPATH: run from a folder holding an `engine/` or `kbtui/` package or a
`Stemmer.py` (a checkout of another version; /tmp, where anyone can make one), the child
imported that code instead, and ran it. `-c` puts the working directory first too, as "",
which the command replaces by this copy's folder before it imports anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The folder holding engine/ and kbtui/.
_ROOT = str(Path(__file__).resolve().parents[2])


def python_running(module: str, call: str = "main") -> list[str]:
    """argv that runs `module.call()` of this copy (its return value the exit status); any
    arguments added after it are the child's sys.argv[1:]."""
    return [sys.executable, "-c",
            f"import sys; sys.path[0] = {_ROOT!r}; from {module} import {call}; sys.exit({call}())"]
