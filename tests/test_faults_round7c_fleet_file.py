"""Round 7c: a fleet.txt that is not UTF-8 (a manifest saved in Latin-1) was read with its bad
bytes replaced, silently: the fleet's name became 'Caf\ufffd'. It is refused in one line naming
the file and what is wrong, as other bad inputs are, by every verb that reads the fleet."""

from __future__ import annotations

import pytest

from tests.conftest import copy_demo, run_kb


@pytest.mark.parametrize("verb", [["index"], ["route", "protein"], ["fleet"]], ids=lambda v: v[0])
def test_a_fleet_file_not_utf8_is_one_line_naming_it(tmp_path, verb):
    demo = copy_demo(tmp_path / "demo")
    manifest = demo / "fleet.txt"
    manifest.write_bytes(b"name = Caf\xe9\nrole = a fleet\n")
    r = run_kb(*verb, str(demo))
    assert r.returncode != 0, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(manifest) in lines[0] and "not UTF-8" in lines[0] and "0xe9" in lines[0], lines[0]
    assert manifest.read_bytes() == b"name = Caf\xe9\nrole = a fleet\n"  # never modified


def test_a_fleet_file_in_utf8_with_a_bom_still_reads(tmp_path):
    demo = copy_demo(tmp_path / "demo")
    (demo / "fleet.txt").write_bytes("\ufeffname = Café\n".encode())
    r = run_kb("fleet", str(demo))
    assert r.returncode == 0, r.stderr
    assert "Café" in r.stdout
