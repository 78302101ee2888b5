"""Round 6b faults in `kb label` (engine/review/label.py): a title, heading or line of brackets with
no closing one, run through the real `kb label`, and the link reader checked against the
pattern it stands for."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from _faults import kb, tree_hash
from conftest import copy_demo
from engine.review.labeltext import links_a_local_note, link_texts, without_footnote_refs

# What the reader replaces: a link, an image or a reference as its text alone.
LINK_PATTERN = re.compile(r"!?\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])?")
# What the footnote reader drops: `[^1]`, a reference to a footnote.
FOOTNOTE_PATTERN = re.compile(r"\[\^[^\]\s]*\]")
# What makes a section a pointer to another note: a link to a local `.md`.
LOCAL_MD_PATTERN = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:)[^)\s]*\.md(?:#[^)\s]*)?\)", re.IGNORECASE)


def test_a_heading_of_200000_open_brackets_is_labelled_without_hanging(tmp_path):
    # The pattern scanned to the line's end from every `[` with no `]` after it: 200,000 of
    # them in a title were hours of `kb label` (and `[a](` repeated, its target, the same).
    fleet = copy_demo(tmp_path / "demo")
    note = fleet / "zed" / "knowledge" / "brackets.md"
    note.write_text("# Brackets " + "[" * 200_000 + "\n\nbrackets body about brackets\n\n"
                    + "[a](" * 50_000 + "\n\n" + "[^" * 100_000 + "\n")
    before = tree_hash(fleet)
    r = kb("label", str(fleet), timeout=120)
    assert "zed/knowledge/brackets.md" in r.stdout
    assert tree_hash(fleet) == before


# Sized for CI (conftest's profile draws the same examples every run): the alphabets are a few
# characters, so 1,000-2,000 texts of up to 40 cover their runs; the shapes that broke are
# named as examples, checked on every run whatever is drawn.
@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="[]()!ab \n", max_size=40))
@example("[" * 40)
@example("[a](" * 10)
@example("![a](b)[c][d]](")
@example("[a]\n(b)[[b]]")
def test_link_texts_reads_as_the_pattern_does(text):
    assert link_texts(text) == LINK_PATTERN.sub(r"\1", text)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="[]^ \tab\n", max_size=40))
@example("[^" * 20)
@example("[^a b][^\tb][^][^^a]")
def test_without_footnote_refs_reads_as_the_pattern_does(text):
    assert without_footnote_refs(text) == FOOTNOTE_PATTERN.sub("", text)


def test_a_line_of_100000_unclosed_local_links_under_a_heading_is_labelled_without_hanging(tmp_path):
    # The pointer check's pattern backtracked over every `.md` of the rest of the line from
    # every `](`: `](x.md` 80,000 times under a heading (a section that might point to a
    # note) was minutes of `kb label`.
    fleet = copy_demo(tmp_path / "demo")
    (fleet / "zed" / "knowledge" / "pointers.md").write_text(
        "# Pointers\n\npointers body about pointers\n\n## See also\n\n" + "](x.md" * 80_000 + "\n")
    r = kb("label", str(fleet), timeout=120)
    assert "zed/knowledge/pointers.md" in r.stdout


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="]()[ .mdMD#a:/h\t\u0130\u212a-+9", max_size=40))
@example("](x.md" * 6)
@example("](\u212a:x.md)")
@example("](\u0130:x.md)")
@example("](a9+-.h:x.md)](x.MD#a)")
@example("](9a:x.md)")
@example("](x.md#a b)")
@example("](.md)](a.mD#)")
def test_links_a_local_note_reads_as_the_pattern_does(text):
    assert links_a_local_note(text) == bool(LOCAL_MD_PATTERN.search(text))
