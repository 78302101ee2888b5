"""kb check: every base graded, each finding at its file and line, and the exit status."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import kb_here, run_kb

from engine import Memory
from engine.review.check import Finding, check, summary
from engine.notes.fleet import discover

KEYS_30 = ", ".join(f"`assunto {chr(97 + i)}{chr(97 + i)}`" for i in range(26)) + ", `xa`, `xb`, `xc`"  # 29 keys


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, body in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            p.write_bytes(body)
        else:
            p.write_text(body, encoding="utf-8")
    return root


def _codes(findings: list[Finding]) -> list[tuple[str, str, int]]:
    return [(f.code, f.where.rsplit(":", 1)[0] if f.line else f.where, f.line) for f in findings]


PROBE = {
    "agent.txt": "name = Probe\nrole = a fixture\nends = where the fixture ends\n",
    # a thin line: five keys
    "knowledge/thin.md": "# Thin\n\n**Search for:** `sono`, `dormir`, `insonia`, `cochilo`, `cansaco`\n\nProse.\n",
    # thirty keys, one of them `nao contestar`, and a link to a note that does not exist
    "knowledge/rules.md": (
        "# Rules of the house\n\n"
        f"**Search for:** `nao contestar`, {KEYS_30}\n\n"
        "**Exists to:** hold the rules\n\n"
        "See [the thin note](thin.md) and [[thin]], and [the missing one](missing-note.md).\n"
    ),
    # no keys at all
    "knowledge/keyless.md": "# Keyless\n\nJust prose, no label.\n",
}


def test_the_fixture_base_gets_exactly_its_four_findings(tmp_path):
    base = _write(tmp_path / "probe", PROBE)
    findings = check(base)
    assert _codes(findings) == [
        ("E02", "probe/knowledge/keyless.md", 1),
        ("W07", "probe/knowledge/rules.md", 3),
        ("E01", "probe/knowledge/rules.md", 7),
        ("W06", "probe/knowledge/thin.md", 3),
    ]
    by = {f.code: f for f in findings}
    assert "`nao contestar`" in by["W07"].message and "`contestar`" in by["W07"].message
    assert "5 terms" in by["W06"].message and "30" in by["W06"].message
    assert "missing-note.md" in by["E01"].message
    assert [f.severity for f in findings] == ["error", "warning", "error", "warning"]
    assert by["E01"].file == str(base / "knowledge/rules.md")
    assert summary(findings) == (2, 2)


def test_the_cli_names_file_and_line_and_exits_non_zero_on_errors(tmp_path):
    base = _write(tmp_path / "probe", PROBE)
    r = run_kb("check", str(base))
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("probe/knowledge/keyless.md:1: E02 error: no `Search for:` line")
    # The text search does reach it (kb route lists it): what it cannot be is a HIT.
    assert "no question can reach" not in lines[0] and "HIT" in lines[0]
    assert lines[1].startswith("probe/knowledge/rules.md:3: W07 warning: unsearchable key `nao contestar`")
    assert lines[2].startswith("probe/knowledge/rules.md:7: E01 error: broken link `missing-note.md`")
    assert lines[3].startswith("probe/knowledge/thin.md:3: W06 warning: thin keyword line: 5 terms")
    assert lines[-1] == f"kb check: 1 base under {base}: 2 errors, 2 warnings"
    j = json.loads(kb_here("check", str(base), "--json").stdout)
    assert (j["errors"], j["warnings"]) == (2, 2)
    assert j["findings"][2] == {
        "code": "E01", "severity": "error", "base": "probe", "path": "knowledge/rules.md", "line": 7,
        "message": j["findings"][2]["message"], "file": str(base / "knowledge/rules.md"),
    }


def test_warnings_alone_pass_and_fail_only_under_strict(tmp_path):
    files = dict(PROBE)
    del files["knowledge/keyless.md"]
    files["knowledge/rules.md"] = files["knowledge/rules.md"].replace(" and [the missing one](missing-note.md)", "")
    base = _write(tmp_path / "probe", files)
    assert {f.code for f in check(base)} == {"W06", "W07"}
    assert kb_here("check", str(base)).returncode == 0
    assert kb_here("check", str(base), "--strict").returncode == 1
    (base / "knowledge/thin.md").unlink()
    (base / "knowledge/rules.md").write_text(f"# Rules\n\n**Search for:** `proibido contestar`, {KEYS_30}\n")
    r = kb_here("check", str(base), "--strict")
    assert r.returncode == 0 and r.stdout.strip().endswith(": clean")


def test_the_demo_has_no_errors_and_no_thin_line(demo):
    r = kb_here("check", str(demo))
    assert r.returncode == 0, r.stdout + r.stderr
    assert " E0" not in r.stdout and "W06" not in r.stdout
    findings = check(demo)
    assert not [f for f in findings if f.is_error or f.code == "W06"]
    # The demo is written to its own standard: no finding at all, warnings included.
    assert findings == []
    assert r.stdout.strip().endswith(": clean")


def test_label_placement_empty_labels_and_repeats(tmp_path):
    base = _write(tmp_path / "probe", {
        "agent.txt": "name = Probe\n",
        "late.md": "# Late label\n\nSome prose first.\n\nSearch for: `late`\n",
        "empty-label.md": "# Empty\n\nSearch for:\n\nProse.\n",
        "twice.md": f"# Twice\n\nBuscar por: `Deploy`, `deploy`, {KEYS_30}\n",
        "stop.md": f"# Stop\n\n- **Search for:** `the`, {KEYS_30}\n",
    })
    assert _codes(check(base)) == [
        ("E04", "probe/empty-label.md", 3),
        ("E03", "probe/late.md", 5),
        ("W07", "probe/stop.md", 3),
        ("W02", "probe/twice.md", 3),
    ]
    msgs = {f.code: f.message for f in check(base)}
    assert "not directly under the title (line 1)" in msgs["E03"]
    assert "`deploy`" in msgs["W02"] and "`Deploy`" in msgs["W02"]
    assert "only of stopwords" in msgs["W07"]


def test_e02_e03_e04_are_exactly_what_the_index_counts_unreachable(tmp_path):
    fleet = tmp_path / "fleet"
    _write(fleet, {
        "a/agent.txt": "name = A\n",
        "a/ok.md": f"# Ok\n\nSearch for: {KEYS_30}\n",
        "a/none.md": "# None\n\nprose\n",
        "a/late.md": "# Late\n\nprose\n\nSearch for: `x`\n",
        "a/empty.md": "# Empty\n\nSearch for:\n",
        "a/map.md": "# Map\n\n- [ok](ok.md)\n",  # a map is for people: not an entry, not a finding
        "b/agent.txt": "name = B\n",
        "b/deep/x.md": "no title, no label\n",
    })
    a = Memory(fleet).ask("anything", record_miss=False)
    linter = {f"{f.base}/{f.path}" for f in check(fleet) if f.code in ("E02", "E03", "E04")}
    assert linter == set(a.unreachable) == {"a/none.md", "a/late.md", "a/empty.md", "b/deep/x.md"}


def test_unreadable_and_empty_notes_are_the_ones_the_index_skips(tmp_path):
    base = _write(tmp_path / "probe", {
        "agent.txt": "name = Probe\n",
        "ok.md": f"# Ok\n\nSearch for: {KEYS_30}\n",
        "latin1.md": "# Caf\xe9\n\nSearch for: `cafe`\n".encode("latin-1"),
        "binary.md": b"# Bin\n\x00\x01\x02",
        "blank.md": "\n\n",
    })
    findings = check(base)
    assert _codes(findings) == [
        ("E05", "probe/binary.md", 0), ("W03", "probe/blank.md", 0), ("E05", "probe/latin1.md", 0),
    ]
    assert "not UTF-8" in findings[2].message
    skipped = Memory(base).ask("x", record_miss=False).skipped
    assert {s.split(":", 1)[0] for s in skipped} == {"probe/binary.md", "probe/blank.md", "probe/latin1.md"}


def test_links_relative_rooted_wiki_across_bases_code_and_templates(tmp_path):
    fleet = tmp_path / "fleet"
    label = f"Search for: {KEYS_30}\n"
    _write(fleet, {
        "a/agent.txt": "name = A\n",
        "a/assets/diagram.png": b"\x89PNG",
        "a/knowledge/one.md": (
            f"# One\n\n{label}\n"
            "[two](two.md) [two, no ext](two) [up](../skills/s.md#part) [rooted](/knowledge/two.md)\n"  # 5: ok
            "[img](../assets/diagram.png) [web](https://example.com/x.md) [anchor](#one) [[two]] [[b/other]]\n"  # 6: ok
            "`[not a link](nowhere.md)` and\n"  # 7: inline code is an example
            "```\n[[nowhere]]\n```\n"  # 8-10: fenced code too
            "[gone](gone.md) and [[no-such-note]]\n"  # 11: two broken
            "[other base](../../b/other.md) [other base gone](../../b/gone.md)\n"  # 12: one broken
        ),
        "a/knowledge/two.md": f"# Two\n\n{label}",
        "a/skills/s.md": f"# S\n\n{label}",
        "a/templates/t.md": f"# T\n\n{label}\n[[placeholder-name]]\n",  # placeholders are exempt
        "b/agent.txt": "name = B\n",
        "b/other.md": f"# Other\n\n{label}",
    })
    e01 = [(f.path, f.line, f.message) for f in check(fleet) if f.code == "E01"]
    assert [(p, n) for p, n, _ in e01] == [("knowledge/one.md", 11), ("knowledge/one.md", 11), ("knowledge/one.md", 12)]
    assert "`gone.md`" in e01[0][2] and "[[no-such-note]]" in e01[1][2] and "`../../b/gone.md`" in e01[2][2]


def test_a_base_without_agent_txt(tmp_path):
    fleet = tmp_path / "fleet"
    _write(fleet, {
        "a/agent.txt": "name = A\n",
        "a/n.md": f"# N\n\nSearch for: {KEYS_30}\n",
        "b/index.md": f"# B\n\nSearch for: {KEYS_30}\n",
    })
    assert _codes(check(fleet)) == [("W01", "b/agent.txt", 0)]
    assert "name, role or where it stops" in check(fleet)[0].message


def test_alias_lines_not_in_force_or_reaching_nothing(demo):
    (demo / "kb-aliases.txt").write_text(
        "# ok\nroll back = rollback\nno equals here\nthe = of\nzzz = qqqq\n"
    )
    got = [(f.code, f.base, f.path, f.line) for f in check(demo) if f.path == "kb-aliases.txt"]
    assert got == [("E06", "", "kb-aliases.txt", 3), ("E06", "", "kb-aliases.txt", 4), ("W04", "", "kb-aliases.txt", 5)]
    assert kb_here("check", str(demo)).returncode == 1
    assert "kb-aliases.txt:3: E06 error: not `alias = canonical`" in kb_here("check", str(demo)).stdout


def test_check_takes_a_memory_a_fleet_or_paths_and_writes_nothing(demo):
    before = {p: p.stat().st_mtime_ns for p in demo.rglob("*")}
    by_path = check(demo)
    assert check(str(demo)) == by_path == check(discover([demo])) == check([demo])
    assert {p: p.stat().st_mtime_ns for p in demo.rglob("*")} == before  # not even an index
    assert not (demo / "zed" / ".kb").exists()
    assert check(Memory(demo)) == by_path


def test_a_bad_path_is_one_line(tmp_path):
    r = run_kb("check", str(tmp_path / "nope"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"kb: {tmp_path / 'nope'}: no such file or directory\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads through permissions")
def test_an_unreadable_note_is_an_error_not_a_crash(tmp_path):
    base = _write(tmp_path / "probe", {"agent.txt": "name = P\n", "n.md": "# N\n"})
    os.chmod(base / "n.md", 0)
    try:
        assert _codes(check(base)) == [("E05", "probe/n.md", 0)]
    finally:
        os.chmod(base / "n.md", 0o644)


def test_a_hostile_megabyte_line_is_read_in_one_pass(tmp_path):
    # Each of these made a bracket pattern rescan the rest of the line from every `[`.
    lines = ["[" * 1_000_000, "[a](" * 250_000, "[[x" * 330_000, "`[" * 500_000, "[" + "]: " * 300_000]
    base = _write(tmp_path / "probe", {"agent.txt": "name = P\n", "n.md": f"# N\n\nSearch for: {KEYS_30}\n\n"
                                       + "\n".join(lines) + "\n"})
    t0 = time.perf_counter()
    findings = check(base)
    assert time.perf_counter() - t0 < 10, "quadratic: a linter must not hang on one long line"
    assert [f.code for f in findings] == []
