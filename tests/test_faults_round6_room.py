"""Round 6: the reading room served to a browser. `kbtui --serve` starts one process per
visitor with a shell command it builds; that command is run here, in a real shell."""

from __future__ import annotations

import subprocess

from kbtui.app import visitor_command


def test_a_visitor_process_never_imports_kbtui_or_engine_from_the_working_directory(tmp_path):
    # The command was `python -m kbtui ...`, and `-m` puts the working directory first on
    # sys.path: `kbtui --serve` run from a folder holding a `kbtui/` or `engine/` package (a
    # checkout of another version, /tmp where anyone can make one) gave every visitor that code.
    marker = tmp_path / "RAN"
    for package in ("kbtui", "engine"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(f"open({str(marker)!r}, 'a').write({package!r})\n")
    command = visitor_command(["--serve", "--port", "9", "--help"])
    assert "--serve" not in command and "--port" not in command
    done = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "The reading room for a fleet of agents" in done.stdout
    assert not marker.exists(), f"the visitor ran {marker.read_text()} from the working directory"
