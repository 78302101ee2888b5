"""Round 7c: Ctrl-C while kb imports its modules at start-up printed a Python traceback and
ended by the signal (exit -2): it exits 130 with no traceback, as a Ctrl-C during a verb
does, from both `python -m engine.cli` and the `kb` console entry.

A real SIGINT, sent by the process to itself the moment a chosen module starts importing
(an import finder placed first), in a fresh interpreter of its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CTRL_C_ON_IMPORT = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal (a background job ignores it)

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == interrupted_at:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

interrupted_at, entry, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.meta_path.insert(0, CtrlC())
sys.argv = ["kb", *argv]
if entry == "module":  # python -m engine.cli
    import runpy
    runpy.run_module("engine.cli", run_name="__main__", alter_sys=True)
else:  # the console script pip writes for kb = "engine.cli:main"
    from engine.cli import main
    sys.exit(main())
"""

# A module imported at each stage of start-up: the package's own imports, a verb's module
# (a common route parsed without argparse), argparse for any other form, the engine a verb runs.
STAGES = [
    ("engine.errors", ["route", "protein", "examples/demo"]),
    ("engine.cli.route", ["route", "protein", "examples/demo"]),
    ("argparse", ["route", "--help"]),
    ("engine.memory", ["route", "protein", "examples/demo"]),
]


@pytest.mark.parametrize("entry", ["module", "console"])
@pytest.mark.parametrize("module, argv", STAGES, ids=[m for m, _ in STAGES])
def test_ctrl_c_while_kb_starts_exits_130_without_a_traceback(entry, module, argv):
    r = subprocess.run([sys.executable, "-c", CTRL_C_ON_IMPORT, module, entry, *argv], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 130, (r.returncode, r.stderr)
