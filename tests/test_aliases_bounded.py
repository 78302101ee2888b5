"""kb-aliases.txt a repository carries is bounded work: one alias line calling in 100,000
words, a hundred times over (79 MB), cost one `kb route` 29 s and 1.08 GB; twenty lines of
5,000 words, 1.6 s against 0.3. A canonical of more words than an alias needs is a problem at
its line (kb check says where), a question's expansion adds a bounded number of words, and a
file far larger than 100,000 aliases is not read (docs/hardening.md, round 8)."""

from __future__ import annotations

from engine.notes.aliases import Alias, expand, read_aliases

from conftest import copy_demo, run_kb


def test_a_canonical_of_thousands_of_words_is_a_problem_at_its_line(tmp_path):
    path = tmp_path / "kb-aliases.txt"
    words = " ".join(f"word{i}" for i in range(5000))
    path.write_text(f"deploy = checklist\ndeploy = {words}\n", encoding="utf-8")
    aliases, problems = read_aliases(path)
    assert [a.line for a in aliases] == [1]
    assert [n for n, _ in problems] == [2] and "words" in problems[0][1]


def test_an_expansion_adds_a_bounded_number_of_words():
    many = [Alias(("deploy",), tuple(f"w{k}x{i}" for i in range(30)), k) for k in range(1000)]
    segments = expand(["deploy", "checklist"], many)
    assert segments[0] == ["deploy", "checklist"]  # the question's own words, always whole
    assert sum(map(len, segments[1:])) <= 1000


def test_a_huge_aliases_file_is_not_read_and_says_so(tmp_path):
    demo = copy_demo(tmp_path / "demo")
    line = "deploy = " + " ".join(f"w{i}x" for i in range(20)) + "\n"
    with open(demo / "kb-aliases.txt", "w", encoding="utf-8") as f:
        for _ in range((40 << 20) // len(line)):
            f.write(line)
    aliases, problems = read_aliases(demo / "kb-aliases.txt")
    assert aliases == [] and [n for n, _ in problems] == [0] and "bytes" in problems[0][1]
    r = run_kb("check", str(demo))
    assert "kb-aliases.txt" in r.stdout + r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
