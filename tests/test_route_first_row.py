"""One first row (issue 26): the plain `kb route` and its --json name the same note to open.

On a command reference, "how do I extract a tar.gz archive" put the keyword pick (tar.md) as
row 1 of the text while --json's results[0] was the fused top (atool.md). Row 1 is the
labels' pick, `keyword_top` in JSON; when the fused list starts elsewhere the text says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import DEMO, REPO, run_kb

Q = "how do I extract a tar.gz archive"
NOTES = {
    "tar.md": "# tar\n\nSearch for: tar, tar archive, extract a tar file\n\n> Archiving utility.\n\n"
              "- Create an archive from files: `tar cf target.tar file1 file2`\n",
    "atool.md": "# atool\n\nSearch for: atool, archive\n\n> Manage archives of various formats.\n\n"
                "- Extract a tar.gz archive into the current directory: `atool --extract archive.tar.gz`\n"
                "- Extract an archive of any format: `atool --extract archive`\n",
    "unpack.md": "# unpack\n\nSearch for: unpack\n\n> Extract files from a gz or tar.gz archive.\n\n- Unpack: `unpack file`\n",
    "ls.md": "# ls\n\nSearch for: list files, ls\n\n> List directory contents.\n",
}


@pytest.fixture
def pages(tmp_path: Path) -> Path:
    base = tmp_path / "pages"
    base.mkdir()
    for name, text in NOTES.items():
        (base / name).write_text(text, encoding="utf-8")
    return base


def _row_one(text: str) -> str:
    return next(line.split()[2] for line in text.splitlines() if line.startswith("   1. "))


def test_text_row_one_is_json_keyword_top_and_the_fused_top_is_named(pages):
    plain = run_kb("route", Q, str(pages))
    out = json.loads(run_kb("route", Q, str(pages), "--json").stdout)
    assert plain.returncode == 0, plain.stderr
    assert _row_one(plain.stdout) == out["keyword_top"] == "pages/tar.md"
    fused = out["results"][0]
    assert f"{fused['agent']}/{fused['path']}" == "pages/atool.md"  # the fusion's, not the labels'
    assert "fused:    pages/atool.md is row 1 of the reading list (--hybrid, --json results[0])" in plain.stdout
    assert "row 1 is the note to open (--json keyword_top)" in plain.stdout


def test_no_fused_line_when_both_lists_start_with_the_same_note(demo):
    plain = run_kb("route", "how much protein per meal", str(demo))
    assert plain.returncode == 0 and "fused:" not in plain.stdout and "rows:" not in plain.stdout


def test_the_readme_json_example_is_what_kb_route_says():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    said = " ".join(readme.split())
    assert "The note to open is `keyword_top`** (when `gate.served` is true)" in said
    command = re.search(r'For `kb route "([^"]+)" examples/demo --json`', readme)
    example = json.loads(re.search(r"```json\n(.*?)```", readme, re.S).group(1))
    out = json.loads(run_kb("route", command.group(1), str(DEMO), "--json").stdout)

    def subset(shown, real):
        if isinstance(shown, dict):
            return all(subset(v, real[k]) for k, v in shown.items())
        if isinstance(shown, list):
            return all(subset(v, r) for v, r in zip(shown, real))
        return shown == real

    assert subset(example, out), out
    plain = run_kb("route", command.group(1), str(DEMO))
    assert _row_one(plain.stdout) == example["keyword_top"]
