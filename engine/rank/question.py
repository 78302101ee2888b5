"""How long a question kb reads: the first MAX_QUESTION_CHARS characters, and it says so.

A question is a sentence or a paragraph. A pasted megabyte (a whole log, a file's contents
sent as the question over MCP) cost ~18 s of scoring and a miss-log line as long as itself,
and no ranking is better for it: past a few thousand characters every key of the fleet has
matched already. So the question is cut before any work, at the last space before the limit
(a word is not split, unless there is no space to cut at), and the answer carries the
original length so every surface can say what was read.
"""

from __future__ import annotations

MAX_QUESTION_CHARS = 4000


def cut_question(question: str) -> tuple[str, int]:
    """The part of `question` that is read, and its original length (0 when it was not cut)."""
    if len(question) <= MAX_QUESTION_CHARS:
        return question, 0
    head = question[:MAX_QUESTION_CHARS]
    space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    if space > MAX_QUESTION_CHARS // 2:
        head = head[:space]
    return head, len(question)
