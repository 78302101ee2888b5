"""`kb boot`: route a message before the model reads it, and hand over the owner's constitution.

A host with a prompt hook (Claude Code's UserPromptSubmit, say) runs this before the model
sees the message and injects whatever it prints. So the model is handed an identity it did
not choose, rather than reading a file that asks it to choose one. A host without hooks
pipes the message in: `echo "$msg" | kb boot FLEET --text`.

The constitution is the agent's `agent.txt` and `index.md`. It is printed only when the
routed agent changes within a session (remembered under `.kb/sessions/`), because printing
it on every message would spend the context window on repetition. No identity is handed
over below MIN_ENTRIES_TO_ROUTE (one note has no ruler), on `nothing`, or when the
classifier says `uncovered`: silently answering from the wrong base is worse than saying
the fleet does not cover it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from hashlib import sha256
from ..notes.atomic import write_atomic
from ..notes.nofollow import make_dirs, refuse_links
from ..stages.coverage import coverage_line
from ..notes.fleet import Base
from ..rank.gate import MIN_ENTRIES_TO_ROUTE
from ..shared.record import record
from ..render import printable_block
from ..notes.textfile import read_regular_text

if TYPE_CHECKING:
    from ..answer import Answer
    from ..memory import Memory

SESSIONS_DIR = Path(".kb") / "sessions"
CONSTITUTION_FILES = ("agent.txt", "index.md")
ENVELOPE_KEYS = ("prompt", "session_id", "cwd", "hook_event_name")
_SAFE = re.compile(r"[^A-Za-z0-9_-]")


@record
class BootRequest:
    """What a prompt hook hands `kb boot`."""

    prompt: str
    session: str | None  # None: no memory, the constitution is printed every time
    cwd: str | None  # the host's working directory, the fleet when no PATH was named


@record
class Briefing:
    """What `kb boot` hands back for the host to inject."""

    agent: str | None  # the agent handed over, or None
    constitution: bool  # True when the constitution is in `text`
    text: str  # what the host injects; may be empty (same agent as last time)
    why: str  # one line: what was decided and why


def parse_request(stdin: str, *, text_only: bool = False) -> BootRequest:
    """A hook's JSON envelope, or the message itself.

    A message that is a JSON object with a `prompt`, `session_id`, `cwd` or
    `hook_event_name` key is read as an envelope; `--text` (text_only) skips that test,
    for an adapter that never speaks JSON and might be asked about a pasted payload.
    """
    if not text_only and stdin.lstrip().startswith("{"):
        try:
            env = json.loads(stdin)
        except ValueError:
            env = None
        if isinstance(env, dict) and any(k in env for k in ENVELOPE_KEYS):
            prompt = env.get("prompt")
            session = env.get("session_id")
            cwd = env.get("cwd")
            return BootRequest(
                prompt=prompt if isinstance(prompt, str) else "",
                session=session.strip() or None if isinstance(session, str) else None,
                cwd=cwd if isinstance(cwd, str) and cwd else None,
            )
    return BootRequest(prompt=stdin, session=None, cwd=None)


def session_file(root: Path, session: str) -> Path:
    """Where a session's last agent is kept. The id comes from outside, so it is never a path."""
    safe = _SAFE.sub("_", session)
    if len(safe) > 80 or safe != session:
        # Two ids that flatten to one name must not share a memory: add a digest of the real one.
        safe = safe[:60] + "-" + sha256(session.encode("utf-8", "replace")).hexdigest()[:16]
    return root / SESSIONS_DIR / safe


def constitution(base: Base) -> str:
    """The agent's own files, as they are, for a host to inject."""

    parts = []
    for name in CONSTITUTION_FILES:
        f = base.root / name
        try:
            # absent, a folder, or a FIFO (whose read would wait forever): not read, and a check
            # before the open would leave the FIFO a window (engine/notes/textfile.open_regular)
            text = read_regular_text(f, errors="replace")
        except OSError:
            continue
        # Control characters other than line breaks and tabs never reach the host.
        body = printable_block("\n".join(text.splitlines())).strip()
        parts.append(f"## {base.name}/{name}\n\n{body}")
    if not parts:
        parts.append(f"({base.name} has neither agent.txt nor index.md)")
    return "\n\n".join(parts)


def brief(memory: "Memory", req: BootRequest, *, session: str | None = None) -> Briefing:
    """Route one message; decide whether to hand over an identity, and whether to print it."""
    session = session or req.session
    question = req.prompt.strip()
    if not question:
        return Briefing(agent=None, constitution=False, text="", why="no message: nothing to route")
    answer = memory.ask(question, with_passages=False)
    refusal = _no_identity(answer)
    if refusal is not None:
        return Briefing(agent=None, constitution=False, text=refusal, why=refusal)
    owner = answer.agent.name
    assert owner is not None
    base = next(b for b in memory.bases if b.name == owner)
    remembered = None
    path = None
    if session:
        path = session_file(memory.fleet.root, session)
        try:
            remembered = read_regular_text(path).strip()  # a FIFO there is no memory, not a wait
        except (OSError, ValueError):
            remembered = None
    if remembered == owner:
        return Briefing(agent=owner, constitution=False, text="", why=f"{owner} again: its constitution is already in "
                        "this session")
    chooser = "the classifier" if answer.agent.chosen_by == "classifier" else "the fold"
    lines = [f"VESTA: this message is for {owner} ({base.display_name}), chosen by {chooser} "
             f"(verdict {answer.verdict}). Answer as this agent; its constitution follows."]
    line = coverage_line(answer.agent)
    if line:
        lines.append(line)
    elif answer.agent.note:  # a classifier is named and did not choose (not allowed, failed): say why
        lines.append(f"VESTA: the fold chose, because {answer.agent.note}")
    text = "\n".join(lines) + "\n\n" + constitution(base)
    if path is not None:
        try:
            make_dirs(path.parent, below=memory.fleet.root)  # `.kb` never through a link
            refuse_links(path, below=memory.fleet.root)
            write_atomic(path, owner + "\n")
        except OSError:
            pass  # losing the memory costs one repeated constitution; not worth failing a message
    return Briefing(agent=owner, constitution=True, text=text, why=f"{owner}: constitution handed over")


def _no_identity(answer: "Answer") -> str | None:
    """The line printed instead of an identity, or None when one is handed over."""
    if answer.indexed.entries == 0:
        # A plain folder's first run: "no ruler" would be true, but it names no way forward.
        return ("VESTA: no agent is handed over: no note here has a Search for: line yet, so no agent can be "
                "said to own a message (kb label PATH proposes labels).")
    if answer.indexed.entries < MIN_ENTRIES_TO_ROUTE:
        return (f"VESTA: no agent is handed over: the fleet has {answer.indexed.entries} "
                f"entr{'y' if answer.indexed.entries == 1 else 'ies'}, below {MIN_ENTRIES_TO_ROUTE}, and one note "
                "has no ruler.")
    if answer.agent.chosen_by == "classifier" and answer.agent.coverage == "uncovered":
        return coverage_line(answer.agent)
    if answer.verdict == "nothing":
        return ("VESTA: no agent is handed over: nothing in this fleet's notes matched the message, so no agent "
                "can be said to own it.")
    if answer.agent.name is None:
        return "VESTA: no agent is handed over: no agent scored on this message."
    return None
