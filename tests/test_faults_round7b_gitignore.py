"""git's own exclude file belongs to the user: kb adds its lines at the end and changes no
byte of what was there. It was read as UTF-8 with errors replaced and written back whole, so
a pattern in another encoding (a Latin-1 file name) became U+FFFD and stopped matching, and
a byte-order mark was dropped. Real git, real `kb index` in a fresh process."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import run_kb

NOTE = "# Tea\n\nSearch for: green tea\n\nGreen tea is steeped at 80 degrees.\n"


def _vault_in_repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    assert subprocess.run(["git", "init", "-q", str(repo)]).returncode == 0
    vault = repo / "notes"
    vault.mkdir()
    (vault / "tea.md").write_text(NOTE)
    return repo, vault


def test_the_exclude_file_keeps_every_byte_the_user_wrote(tmp_path):
    repo, vault = _vault_in_repo(tmp_path)
    exclude = repo / ".git" / "info" / "exclude"
    before = b"\xef\xbb\xbf# mine\r\ncaf\xe9.log\r\nbuild/"  # BOM, CRLF, Latin-1, no final newline
    exclude.write_bytes(before)
    r = run_kb("index", str(vault))
    assert r.returncode == 0, r.stderr
    after = exclude.read_bytes()
    assert after.startswith(before + b"\n"), after
    assert after[len(before):].decode().split() == [".kb/"]
    # git still reads the user's Latin-1 pattern, and now kb's
    (repo / "caf\xe9.log".encode("latin-1").decode("utf-8", "surrogateescape")).write_bytes(b"x")
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True).stdout
    assert b"caf" not in status and b".kb" not in status, status
