"""`kb boot`: the owner's constitution for a host to inject, once per agent per session."""

from __future__ import annotations

import json
import os

from _who import COVERED, GOLD_FIRST, UNCOVERED, configure, example_command
from conftest import kb_here, run_kb

from engine.review.boot import session_file


def test_echo_a_question_into_kb_boot_text_prints_yarons_constitution(demo):
    p = run_kb("boot", str(demo), "--text", stdin=COVERED + "\n")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith("VESTA: this message is for yaron (Yaron), chosen by the fold (verdict hit).")
    assert "## yaron/agent.txt" in out and "## yaron/index.md" in out
    for line in (demo / "yaron" / "agent.txt").read_text().splitlines():
        assert line in out.splitlines()
    assert "# Yaron: the nutrition desk" in out.splitlines()
    assert "zed/agent.txt" not in out and "Steve" not in out.split("## yaron/agent.txt")[0]


def test_one_session_prints_the_constitution_once_until_the_agent_changes(demo):
    first = kb_here("boot", str(demo), "--session", "s-1", "--text", stdin=COVERED)
    again = kb_here("boot", str(demo), "--session", "s-1", "--text", stdin=COVERED)
    assert first.returncode == again.returncode == 0
    assert "## yaron/index.md" in first.stdout
    assert again.stdout == ""
    assert (demo / ".kb" / "sessions" / "s-1").read_text() == "yaron\n"
    switched = kb_here("boot", str(demo), "--session", "s-1", "--text", stdin=GOLD_FIRST)
    assert "## zed/agent.txt" in switched.stdout and "yaron/agent.txt" not in switched.stdout
    other = kb_here("boot", str(demo), "--session", "s-2", "--text", stdin=GOLD_FIRST)
    assert "## zed/agent.txt" in other.stdout  # another session has its own memory
    without = kb_here("boot", str(demo), "--text", stdin=COVERED)
    assert "## yaron/index.md" in without.stdout  # no session: printed every time


def test_a_hook_envelope_gives_the_prompt_the_session_and_the_fleet(demo, tmp_path):
    env = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": COVERED, "session_id": "abc",
                      "cwd": str(demo)})
    p = run_kb("boot", stdin=env, cwd=tmp_path)  # no PATH: the envelope's cwd is the fleet
    assert p.returncode == 0, p.stderr
    assert "## yaron/index.md" in p.stdout
    assert run_kb("boot", stdin=env, cwd=tmp_path).stdout == ""  # session abc remembered
    # --text reads the same bytes as the message itself: no envelope, so no session is remembered.
    for _ in range(2):
        as_text = run_kb("boot", str(demo), "--text", stdin=env)
        assert "## yaron/index.md" in as_text.stdout


def test_no_identity_on_nothing(demo):
    p = kb_here("boot", str(demo), "--session", "s", "--text", stdin="me conta uma piada")
    assert p.returncode == 0
    assert p.stdout.strip() == ("VESTA: no agent is handed over: nothing in this fleet's notes matched the message, "
                                "so no agent can be said to own it.")
    assert not (demo / ".kb" / "sessions" / "s").exists()


def test_no_identity_below_min_entries_to_route(tmp_path):
    base = tmp_path / "solo"
    (base / "knowledge").mkdir(parents=True)
    (base / "agent.txt").write_text("name = Solo\nrole = one note\nends = everything else\n")
    (base / "knowledge" / "protein.md").write_text("# Protein\n\n**Search for:** `protein`, `meal`\n\nEat it.\n")
    p = kb_here("boot", str(base), "--text", stdin=COVERED)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ("VESTA: no agent is handed over: the fleet has 1 entry, below 2, and one note has "
                                "no ruler.")
    assert "Solo" not in p.stdout


def test_no_identity_in_a_plain_folder_says_labels_are_missing(tmp_path):
    # A stranger's first notes have no labels at all: "0 entries, below 2, and one note has no
    # ruler" named no note and no way forward.
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "protein.md").write_text("# Protein\n\nEat protein with every meal.\n")
    (notes / "sleep.md").write_text("# Sleep\n\nNo screens before bed.\n")
    p = kb_here("boot", str(notes), "--text", stdin="how much protein per meal")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ("VESTA: no agent is handed over: no note here has a Search for: line yet, so "
                                "no agent can be said to own a message (kb label PATH proposes labels).")


def test_no_identity_when_the_classifier_says_uncovered(demo):
    configure(demo, example_command())
    p = kb_here("boot", str(demo), "--text", stdin=UNCOVERED)
    assert p.stdout.startswith("VESTA: nothing in this fleet covers acao bolsa comprar")
    assert "agent.txt" not in p.stdout
    covered = kb_here("boot", str(demo), "--text", stdin=COVERED)
    assert covered.stdout.startswith("VESTA: this message is for yaron (Yaron), chosen by the classifier")


def test_a_session_id_is_never_a_path(demo):
    root = demo
    for hostile in ("../../etc/passwd", "a/b", "..", "x" * 500):
        f = session_file(root, hostile)
        assert f.parent == root / ".kb" / "sessions" and f.name not in ("..", ".")
    assert session_file(root, "a/b") != session_file(root, "a_b")  # flattened ids do not collide
    p = kb_here("boot", str(demo), "--session", "../../escape", "--text", stdin=COVERED)
    assert p.returncode == 0
    assert not (demo.parent / "escape").exists()
    assert len(os.listdir(demo / ".kb" / "sessions")) == 1


def test_a_bad_path_is_one_line_and_does_not_block_the_host(tmp_path):
    p = run_kb("boot", str(tmp_path / "nowhere"), "--text", stdin=COVERED)
    assert p.returncode == 1  # a hook's exit 2 would block the person's message
    assert p.stderr.strip() == f"kb boot: {tmp_path / 'nowhere'}: no such file or directory"
    assert p.stdout == ""
