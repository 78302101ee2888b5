"""Issue 28, the command line's half: what a new user tripped on in the first hour.

The miss log stays out of a plain folder's notes and `--no-record` writes nothing (item 2);
`--top` says its limit (3); `kb check` folds repeated warnings and passes a plain folder
with nothing broken (5); the README's room command installs no test extra (6); `--version`
on both commands and in the MCP greeting (7); PATH defaults to `.` for every verb (14).
Real processes throughout: what is tested is what a person types.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, kb_here, run_kb

README = (REPO / "README.md").read_text(encoding="utf-8")
UNANSWERED = "what is the airspeed of an unladen swallow"


def _version() -> str:
    from importlib.metadata import version

    return version("kbtui")


def _plain(root: Path) -> Path:
    root.mkdir()
    for i in range(3):
        (root / f"topic-{i}.md").write_text(f"# Topic {i}\n\nNotes on gardening tool number {i}: spades and rakes.\n")
    return root


def _outside_kb(root: Path) -> set[str]:
    """Every file under `root` that is not inside a `.kb/` folder, relative."""
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if ".kb" not in p.relative_to(root).parts}


# -- item 7: --version -------------------------------------------------------------------


def test_kb_version_prints_the_package_version():
    r = run_kb("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"kb {_version()}"


def test_kbtui_version_prints_the_package_version():
    r = subprocess.run([sys.executable, "-m", "kbtui", "--version"], cwd=REPO, capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"kbtui {_version()}"


def test_the_mcp_greeting_carries_the_version(demo):
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
    p = subprocess.run([sys.executable, "-m", "engine.cli", "serve", str(demo)], cwd=REPO, capture_output=True,
                       text=True, timeout=60, input=json.dumps(hello) + "\n")
    reply = json.loads(p.stdout.splitlines()[0])
    assert reply["result"]["serverInfo"] == {**reply["result"]["serverInfo"], "name": "kb", "version": _version()}


# -- item 14: PATH defaults to . ------------------------------------------------------------


def _path_positionals():
    from test_docs import VERBS

    for verb, parser in VERBS:
        for a in parser._actions:
            if not a.option_strings and a.metavar == "PATH":
                yield verb, a


@pytest.mark.parametrize("verb, action", list(_path_positionals()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_verb_that_takes_a_path_defaults_it_to_the_working_directory(verb, action):
    assert action.nargs in ("?", "*"), f"{verb}: PATH is required"
    # kb boot's hook names its working directory in the envelope: that comes first, then `.`;
    # kb bench reads no PATH under --sweep or --from, and `.` otherwise (its handler says so).
    late = {"kb boot": None, "kb bench": None}
    assert action.default in (".", ["."]) or (verb in late and action.default == late[verb]), verb
    assert "default: ." in action.help or "else ." in action.help, verb
    row = re.search(rf"^\| `{re.escape(verb)} [^`]*`", README, re.MULTILINE)
    assert row and "[PATH" in row.group(0), f"README's verb table shows {verb}'s PATH as required"


def test_route_in_the_notes_folder_needs_no_path(demo):
    r = run_kb("route", "how much protein per meal", "--json", cwd=demo, env={"PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["agent"]["name"] == "yaron"


# -- item 2: the miss log ---------------------------------------------------------------------


def test_a_plain_folder_gets_no_file_beside_its_notes(tmp_path):
    root = _plain(tmp_path / "notes")
    before = _outside_kb(root)
    r = kb_here("route", UNANSWERED, str(root), "--json")
    assert r.returncode == 0, r.stderr
    miss = json.loads(r.stdout)["miss"]
    assert miss["recorded"] and miss["path"] == str(root / ".kb" / "kb-misses.txt")
    assert _outside_kb(root) == before
    assert stat.S_IMODE(os.stat(root / ".kb" / "kb-misses.txt").st_mode) == 0o600
    listed = kb_here("misses", str(root), "--json")
    assert UNANSWERED in listed.stdout


def test_a_fleet_keeps_its_log_beside_fleet_txt_and_its_lock_inside_kb(demo):
    r = kb_here("route", UNANSWERED, str(demo), "--json")
    assert json.loads(r.stdout)["miss"]["path"] == str(demo / "kb-misses.txt")  # seed 000: beside the manifest
    assert (demo / "kb-misses.txt").is_file()
    assert not (demo / ".kb-misses.txt.lock").exists()
    assert (demo / ".kb" / ".kb-misses.txt.lock").exists()


def test_an_old_log_beside_a_plain_folders_notes_is_still_read(tmp_path):
    root = _plain(tmp_path / "notes")
    (root / "kb-misses.txt").write_text("7\t2026-01-01\t2026-01-02\thow do I sharpen a spade\n    looked like: spades\n")
    r = kb_here("misses", str(root), "--json")
    assert r.returncode == 0, r.stderr
    assert "how do I sharpen a spade" in r.stdout
    kb_here("route", UNANSWERED, str(root))  # recorded where the person's log already is: one log, not two
    assert UNANSWERED in (root / "kb-misses.txt").read_text()
    assert not (root / ".kb" / "kb-misses.txt").exists()


@pytest.mark.parametrize("verb", ["route", "boot"])
def test_no_record_writes_no_log(tmp_path, verb):
    root = _plain(tmp_path / "notes")
    args = ("route", UNANSWERED, str(root), "--no-record") if verb == "route" else ("boot", str(root), "--text", "--no-record")
    r = run_kb(*args, stdin=UNANSWERED)
    assert r.returncode == 0, r.stderr
    assert not list(root.rglob("*kb-misses*"))


def test_no_record_is_on_serve_and_the_room_and_the_variable_is_named():
    for verb in ("route", "boot", "serve"):
        h = kb_here(verb, "--help").stdout
        assert "--no-record" in h, verb
    assert "KB_MISSES_PATH" in kb_here("--help").stdout
    assert "KB_MISSES_PATH" in kb_here("route", "--help").stdout
    from kbtui.app import parse_args

    assert parse_args(["x", "--no-record"]).no_record is True
    assert "KB_MISSES_PATH" in README and "--no-record" in README


def test_serve_no_record_writes_no_log(tmp_path):
    root = _plain(tmp_path / "notes")
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "kb_route", "arguments": {"question": UNANSWERED}}},
    ]
    p = subprocess.run([sys.executable, "-m", "engine.cli", "serve", str(root), "--no-record"], cwd=REPO,
                       capture_output=True, text=True, timeout=60, input="".join(json.dumps(m) + "\n" for m in msgs))
    assert [json.loads(line)["id"] for line in p.stdout.splitlines()] == [1, 2], p.stderr
    assert not list(root.rglob("*kb-misses*"))


# -- item 3: --top's limit --------------------------------------------------------------------


def test_top_past_what_the_candidates_hold_is_said_in_help_on_stderr_and_in_json(demo):
    # No limit below the pool (the text leg's 50 and every label matched); past it, said.
    from engine.memory import RANK_CANDIDATE_POOL as POOL

    assert f"the text leg's {POOL} best" in " ".join(kb_here("route", "--help").stdout.split())
    r = kb_here("route", "how much protein per meal", str(demo), "--top", "80", "--json")
    rows = len(json.loads(r.stdout)["results"])
    assert 0 < rows < 80 and json.loads(r.stdout)["top_limit"] == {"asked": 80, "rows": rows}
    plain = kb_here("route", "how much protein per meal", str(demo), "--top", "80")
    assert "protein-basics.md" in plain.stdout  # the answer itself, the note beside it
    assert plain.stderr.strip() == (f"kb route: --top 80: {rows} rows in the reading list, all this question's "
                                    f"candidates hold (the text leg's {POOL} best and every label matched)")
    quiet = kb_here("route", "how much protein per meal", str(demo), "--json")  # the default asks nothing past it
    assert quiet.stderr == "" and "top_limit" not in json.loads(quiet.stdout)


def test_top_has_no_limit_below_the_candidates(tmp_path):
    # 60 notes all matching: the reading list holds more than the text leg's 50 (labels fused in).
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(60):
        (root / f"n{i}.md").write_text(f"# Spade {i}\nSearch for: spade, garden spade {i}\n\nA spade for digging.\n")
    j = json.loads(kb_here("route", "spade", str(root), "--top", "100", "--json").stdout)
    assert len(j["results"]) == 60 and j["top_limit"] == {"asked": 100, "rows": 60}


def test_mcp_says_the_top_limit_and_does_not_stop_at_50(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(60):
        (root / f"n{i}.md").write_text(f"# Spade {i}\nSearch for: spade, garden spade {i}\n\nA spade for digging.\n")
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "kb_route", "arguments": {"question": "spade", "top": 100}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "kb_retrieve", "arguments": {"question": "spade", "top": 100}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
    ]
    p = subprocess.run([sys.executable, "-m", "engine.cli", "serve", str(root)], cwd=REPO, capture_output=True,
                       text=True, timeout=60, input="".join(json.dumps(m) + "\n" for m in msgs))
    replies = {r["id"]: r for r in map(json.loads, p.stdout.splitlines())}
    for i in (2, 3):
        body = json.loads(replies[i]["result"]["content"][0]["text"])
        assert len(body["results"]) == 60 and body["top_limit"] == {"asked": 100, "rows": 60}
    described = {t["name"]: t["description"] for t in replies[4]["result"]["tools"]}
    assert "top_limit" in described["kb_route"] and "top_limit" in described["kb_retrieve"]


# -- item 5: kb check --------------------------------------------------------------------------


def test_a_plain_folder_with_nothing_broken_passes_check(tmp_path):
    root = _plain(tmp_path / "notes")
    r = kb_here("check", str(root))
    assert r.returncode == 0, r.stdout
    assert "W01" not in r.stdout and " error:" not in r.stdout
    assert "3 of 3 notes have no Search for: line" in r.stdout  # still said, as the next step


def test_thin_lines_fold_into_one_line_per_base(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    for i in range(40):
        (root / f"n{i}.md").write_text(f"# Note {i}\nSearch for: spade {i}, rake {i}\n\nText.\n")
    r = kb_here("check", str(root))
    lines = r.stdout.splitlines()
    assert r.returncode == 0, r.stdout
    assert sum("W06" in line for line in lines) == 1, r.stdout
    assert "40 notes have a thin keyword line" in r.stdout and "kb check --all" in r.stdout
    every = kb_here("check", str(root), "--all").stdout.splitlines()
    assert sum("W06" in line for line in every) == 40


# -- item 6: what the README installs ------------------------------------------------------------


def test_the_room_command_installs_no_test_extra_and_ci_still_finds_the_test_line():
    room = [line for line in README.splitlines() if "&& kbtui examples/demo" in line]
    assert room and room[0].startswith("python3 -m pip install -e . &&"), room
    test = [line for line in README.splitlines() if re.match(r"^python3 -m pip install .*&& python3 -m pytest", line)]
    assert test and "'.[test]'" in test[0]  # .ci/run greps this line and runs it
    assert re.search(r"\d+ MB", README) and re.search(r"\d+ s\b", README)  # size and time said
    # .ci/run's own reading of the README, run as it runs it
    ci = (REPO / ".ci" / "run").read_text()
    grep = re.search(r'test_command="\$\((grep .*?)\)"', ci).group(1)
    read = subprocess.run(["bash", "-c", grep], cwd=REPO, capture_output=True, text=True, timeout=30).stdout.strip()
    assert read == "python3 -m pip install -e '.[test]' && python3 -m pytest -n 2 --dist loadgroup", read


def test_the_room_needs_no_test_extra_to_import():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    for extra in ("pytest", "hypothesis", "matplotlib", "bm25s", "sympy"):
        assert extra not in core
