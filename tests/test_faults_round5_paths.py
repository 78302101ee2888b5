"""Round 5 faults in the paths a verb is given: a base that is itself a symbolic link loop.
Real parts: links made in tmp, the real `kb` in a subprocess."""

from __future__ import annotations

import os

import pytest

from _faults import kb


@pytest.mark.parametrize("verb", [("index",), ("route", "deploy"), ("check",)])
def test_a_base_that_is_a_link_loop_is_named_as_one(tmp_path, verb):
    loop = tmp_path / "loop"
    os.symlink("loop", loop)  # points at itself
    r = kb(*verb, str(loop), ok=False)
    assert r.returncode != 0
    line = r.stderr.strip()
    assert len(line.splitlines()) == 1 and str(loop) in line, line
    # It exists: "no such file or directory" sent the reader looking for a typo.
    assert "no such file" not in line and "symbolic links" in line, line
