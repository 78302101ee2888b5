"""The engine's sentences to a person, in one place, so every surface says a thing one way.

`kb`'s text (engine/render.py) and the reading room (kbtui) both word a refusal, its
look-alike keys and the miss log from here; a change of wording is a change to this file.
Sentences that belong to one check or one refusal stay beside it (they name its file and
its cure); what is here is what more than one surface says.
"""

from __future__ import annotations

# The refusal: nothing the labels hold matched. `kb route` prints it over two lines.
NOTHING_HEAD = "nothing matched."
NOTHING_LINES = (
    f"{NOTHING_HEAD} Either the base does not cover it, or the",
    "Search for lines do not carry the words a real question uses.",
)
NOTHING_WHY = " ".join(NOTHING_LINES)[len(NOTHING_HEAD) + 1:]  # the refusal without its head

# What the base knows that is spelled like the question, and the limit of that.
SUGGEST_LEAD = "the base does know these, and they look like words you used:"
LIMIT_NOTE = (
    "that is spelling and not meaning, so it finds a typo or a cognate",
    "and never finds a translation.",
)
NOTHING_OFFERED = "nothing in the base is spelled like these words, so nothing is offered."

# The miss log.
MISS_RECORDED = "recorded in kb-misses.txt"
MISS_NOT_YET = "not logged yet: press Enter to record this miss in kb-misses.txt"
MISS_UNWRITTEN = "the log could not be written"  # when the error itself says nothing

# The index.
INDEX_REBUILT = "the index was damaged, or not written by kb on this machine, and has been rebuilt from the notes"
# An index another version of kb wrote (an upgrade changed the schema) is rebuilt too; it is
# not damage, and saying so would alarm every user on every upgrade.
INDEX_REBUILT_VERSION = "the index was written by another version of kb and has been rebuilt from the notes"
