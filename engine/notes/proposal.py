"""The mark `kb label --write` leaves under a label it wrote: which keys nobody has read yet.

Keys kb label proposes are drawn from the note's own title, headings and examples, the text
the text leg already reads, so alone they are not a second scorer (seed 000: "one scorer
reading one source twice look like two scorers agreeing"). Measured on notes nobody here
wrote, a HIT resting on them alone was right 23% of the time on a command reference
(docs/labels.md). So the keys a machine wrote carry this mark, on the line directly under
the `Search for:` line:

    Search for: create a symbolic link, ln
    <!-- kb label proposed, not yet reviewed: create a symbolic link, ln -->

An HTML comment: a renderer shows nothing, the seed's `Search for:` line stays exactly the
seed's format, and the text index skips the line as it skips the label. The gate reads it
(engine/rank/vouch.py): a HIT resting only on unread keys needs the text leg to put the same
note first, else it is a guess that says why. A person who has read the keys deletes the line
(or the keys they vouch for); the labels screen's `w` and a question a person picked for a
note (`--pick`, the misses screen) write no mark, because a person chose those keys.
"""

from __future__ import annotations

MARK_OPEN = "<!-- kb label proposed, not yet reviewed: "
MARK_CLOSE = " -->"
_OPEN, _HEAD, _CLOSE = "<!--", "kb label proposed, not yet reviewed:", "-->"


def mark_line(keys: list[str] | tuple[str, ...]) -> str:
    """The line written under a label for the machine's keys (no line ending)."""
    return MARK_OPEN + ", ".join(keys) + MARK_CLOSE


def marked_keys(line: str) -> tuple[str, ...] | None:
    """The keys a mark line names, as written; None when `line` is no mark."""
    # Cut with str methods, not a pattern: `\s*(.*?)\s*-->` backtracked in cubic time on a
    # hostile run of spaces (2,000 cost a build 9 s, 4,000 a minute); these cost linear time.
    s = line.strip()
    if len(s) < len(_OPEN) + len(_CLOSE) or not s.startswith(_OPEN) or not s.endswith(_CLOSE):
        return None
    inner = s[len(_OPEN):-len(_CLOSE)].lstrip()
    if inner[:len(_HEAD)].lower() != _HEAD:
        return None
    body = inner[len(_HEAD):]
    return tuple(k for k in (part.strip().strip("`").strip() for part in body.split(",")) if k)


def unread_of(keys: tuple[str, ...], marked: tuple[str, ...] | None) -> tuple[str, ...]:
    """The label's keys the mark names (case and spacing aside), in the label's order: a key
    the mark names that the label does not hold is nothing (a person deleted it)."""
    if not marked:
        return ()
    named = {" ".join(k.lower().split()) for k in marked}
    return tuple(k for k in keys if " ".join(k.lower().split()) in named)
