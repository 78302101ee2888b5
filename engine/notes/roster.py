"""The roster: who is in the fleet, what each agent does, and where it stops.

Read from `fleet.txt` (the fleet's `name`, `role`, and the `classifier` settings) and every
base's `agent.txt` (`name`, `role`, `ends`). The `ends` line matters more than the role to
anyone choosing an agent: a list of roles says what each agent does, only the edges say
what none of them does. The roster is what the classifier is handed and the only list of
names it may answer with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .fleet import FLEET_FILE, Fleet
from ..render import one_line

# "How the Catalogue Ranks": the classifier's budget when fleet.txt names none. A hook's own budget is 30 s,
# so a slower classifier would be cut off by its host anyway.
CLASSIFIER_TIMEOUT_MS_DEFAULT = 30_000
AGENT_FILE = "agent.txt"


@dataclass(frozen=True)
class Member:
    """One agent on the roster. `key` is the base's directory name, the name used everywhere."""

    key: str
    name: str  # agent.txt `name`, else the key
    role: str
    ends: str
    root: Path


@dataclass(frozen=True)
class Roster:
    name: str  # fleet.txt `name`, else the fleet root's directory name
    role: str
    members: tuple[Member, ...]
    classifier: str | None  # the command, as written in fleet.txt; None when not configured
    classifier_timeout_ms: int
    root: Path  # where fleet.txt is (or would be); relative classifier paths resolve here
    problems: tuple[str, ...]  # one line each: "<file>: what is wrong"

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(m.key for m in self.members)

    def resolve(self, said: str | None) -> Member | None:
        """The member a name refers to (its key or its agent.txt name, any case), or None.

        A name off the roster resolves to no one: every surface downstream treats an owner
        as real, so an invented agent must never become one.
        """
        if not said:
            return None
        want = said.strip().strip("`*\"'").strip().lower()
        for m in self.members:
            if want in (m.key.lower(), m.name.lower()):
                return m
        return None


def roster_of(fleet: Fleet) -> Roster:
    """The roster of a discovered fleet. Never raises: what is wrong is listed in `problems`."""
    problems: list[str] = []
    members = []
    for b in fleet.bases:
        card = b.agent
        agent_file = b.root / AGENT_FILE
        if not agent_file.is_file():
            problems.append(f"{_shown(agent_file)}: missing; the roster has no role or edge for {b.name}")
        else:
            for key in ("role", "ends"):
                if not card.get(key):
                    problems.append(f"{_shown(agent_file)}: no `{key} =` line; {_why_missing(key, b.name)}")
        members.append(
            Member(key=b.name, name=card.get("name") or b.name, role=card.get("role", ""), ends=card.get("ends", ""),
                   root=b.root)
        )
    settings = fleet.settings
    fleet_file = fleet.root / FLEET_FILE
    timeout = CLASSIFIER_TIMEOUT_MS_DEFAULT
    raw_timeout = settings.get("classifier_timeout_ms")
    if raw_timeout is not None:
        try:
            timeout = int(raw_timeout.replace("_", ""))
            if timeout <= 0:
                raise ValueError
        except ValueError:
            timeout = CLASSIFIER_TIMEOUT_MS_DEFAULT
            problems.append(
                f"{_shown(fleet_file)}: classifier_timeout_ms = {raw_timeout!r} is not a positive whole number "
                f"of milliseconds; using {CLASSIFIER_TIMEOUT_MS_DEFAULT}"
            )
    classifier = settings.get("classifier")
    if classifier is not None and not classifier.strip():
        problems.append(f"{_shown(fleet_file)}: `classifier =` names no command; the fold chooses")
        classifier = None
    return Roster(
        name=settings.get("name") or fleet.root.name,
        role=settings.get("role", ""),
        members=tuple(members),
        classifier=classifier,
        classifier_timeout_ms=timeout,
        root=fleet.root,
        problems=tuple(problems),
    )


def _why_missing(key: str, agent: str) -> str:
    if key == "ends":
        return f"nobody can tell where {agent} stops"
    return f"nobody can tell what {agent} does"


def _shown(p: Path) -> str:
    # The last two parts ("zed/agent.txt", "demo/fleet.txt") name the file without a long path.
    return "/".join(p.parts[-2:])


def render_roster(roster: Roster, counts: dict[str, tuple[int, int]] | None = None) -> str:
    """`kb fleet`: the roster as text. `counts` maps an agent to (entries, unreachable notes)."""

    lines = [f"fleet:      {one_line(roster.name)}"]
    if roster.role:
        lines.append(f"            {one_line(roster.role)}")
    if roster.classifier:
        lines.append(
            f"classifier: {one_line(roster.classifier)} (timeout {roster.classifier_timeout_ms} ms; "
            "the fold chooses when it fails)"
        )
    else:
        lines.append("classifier: none configured; the fold chooses the agent")
    lines.append(f"agents:     {len(roster.members)}")
    width = max((len(m.key) for m in roster.members), default=0)
    for m in roster.members:
        lines.append("")
        head = f"  {one_line(m.key):<{width}}  {one_line(m.name)}"
        if counts and m.key in counts:
            entries, unreachable = counts[m.key]
            head += f"  ({entries} entries" + (
                f", {unreachable} without a Search for: line, reached by text only" if unreachable else "") + ")"
        lines.append(head)
        pad = " " * (width + 4)
        lines.append(f"{pad}does:  {one_line(m.role) or '(no role = line)'}")
        lines.append(f"{pad}stops: {one_line(m.ends) or '(no ends = line)'}")
    if roster.problems:
        lines.append("")
        lines += [f"problem:    {one_line(p)}" for p in roster.problems]
    return "\n".join(lines)
