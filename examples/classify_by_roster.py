#!/usr/bin/env python3
"""An example classifier for `classifier =` in fleet.txt: no model, the same answer every time.

kb writes a dossier on stdin (the roster, the message, up to five evidence lines, the
per-agent table) and reads four lines back on stdout. A real fleet would put a model here;
this one decides from the dossier alone, so the contract can be run and tested anywhere:

  covered    an evidence line matched two or more words, or one word that is also in its
             agent's role line: the notes and the role agree, so that agent owns it.
  adjacent   no such line, but the message shares a word with some agent's role, or some
             note matched a word: that agent is the nearest, and answering is a stretch.
  uncovered  no evidence and no role word: nobody here, and nobody near.

Standalone on purpose (stdlib only, imports nothing from kb): a classifier is any process.
"""

from __future__ import annotations

import re
import sys
import unicodedata

# Words too common to say anything about a subject, in both languages the demo is asked in.
STOP = set(
    "the and for with how what who when where why which that this from into about does your you are can "
    "will should would much many some any not but its his her their there here have has had was were been "
    "also only just more most very each every other than then them they one two per "
    "que quem como qual quais quando onde por para pra com sem uma uns umas dos das nos nas pelo pela "
    "ele ela eles elas seu sua seus suas isso esse essa este esta muito mais menos ser ter foi sao devo "
    "pode posso faco fazer".split()
)


def ordered_words(text: str) -> list[str]:
    folded = "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))
    return list(dict.fromkeys(w for w in re.split(r"[\W_]+", folded) if len(w) > 2 and w not in STOP))


def words(text: str) -> set[str]:
    return set(ordered_words(text))


def stem_match(a: set[str], b: set[str]) -> set[str]:
    """Words of `a` found in `b`, allowing a plural or a short suffix (meal/meals)."""
    out = set()
    for w in a:
        for v in b:
            if w == v or (min(len(w), len(v)) >= 4 and (w.startswith(v) or v.startswith(w)) and abs(len(w) - len(v)) <= 2):
                out.add(w)
    return out


def read_dossier(text: str):
    roles: dict[str, str] = {}
    message = ""
    evidence: list[tuple[str, float, list[str]]] = []
    section = None
    for line in text.splitlines():
        if line.startswith("ROSTER"):
            section = "roster"
            continue
        if line.startswith("MESSAGE:"):
            section = "message"
            continue
        if line.startswith("EVIDENCE"):
            section = "evidence"
            continue
        if line and not line.startswith(" "):
            section = None
            continue
        body = line.strip()
        if section == "roster" and body and not body.startswith("stops:"):
            name, _, role = body.partition(":")
            roles[name.strip()] = role.strip()
        elif section == "message" and body:
            message = body
        elif section == "evidence":
            m = re.match(r"^([^/\s]+)/.+?\s{2}score\s+([\d.]+)\s{2}matched:\s*(.*)$", body)
            if m:
                matched = [] if m.group(3) == "text only" else [w.strip() for w in m.group(3).split(",") if w.strip()]
                evidence.append((m.group(1), float(m.group(2)), matched))
    return roles, message, evidence


def decide(roles: dict[str, str], message: str, evidence) -> tuple[str, str, str, str]:
    asked = words(message)
    subject = " ".join(ordered_words(message)[:5]) or "an empty message"
    role_hits = {name: stem_match(asked, words(role)) for name, role in roles.items()}
    for agent, score, matched in evidence:  # best first, as kb wrote them
        if agent not in roles:
            continue
        matched_words = set().union(*(words(m) for m in matched)) if matched else set()
        if len(matched) >= 2 or stem_match(matched_words, words(roles[agent])):
            return (subject, f"{agent}'s notes matched {', '.join(matched)} and the role agrees.", "covered", agent)
    near = sorted(roles, key=lambda a: (-len(role_hits[a]), a))
    if near and role_hits[near[0]]:
        a = near[0]
        return (subject, f"only {a}'s role mentions {', '.join(sorted(role_hits[a]))}; no note says more.",
                "adjacent", a)
    for agent, _score, matched in evidence:
        if agent in roles:
            return (subject, f"one word ({', '.join(matched) or 'text'}) matched {agent}'s notes, and no role "
                    "names the subject.", "adjacent", agent)
    return (subject, "No note matched it and no agent's role names it.", "uncovered", "none")


def main() -> int:
    roles, message, evidence = read_dossier(sys.stdin.read())
    subject, reason, coverage, owner = decide(roles, message, evidence)
    print(f"SUBJECT: {subject}")
    print(f"REASON: {reason}")
    print(f"COVERAGE: {coverage}")
    print(f"OWNER: {owner}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
