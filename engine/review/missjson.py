"""`kb misses --json`: the report as one line of JSON, written by hand in the encoder's shape.

`json_line(report.to_json())` built a dict per entry (nested: its verdict, its proposal) and
had the encoder sort every one of their keys again: 10,000 entries made ~50,000 dicts for one
line. An entry has a few fixed shapes, so each is written here as the encoder writes it (keys
sorted, `", "` and `": "` between, strings by the encoder's own C escaper, floats by `repr`),
and only its strings and numbers are encoded. Most of the line is the near files (10 MB of a
10,000-entry review's 14 MB), and a long log names the same few files thousands of times:
each file's part is encoded once per (file, text rank). The result is the line
`json_line(report.to_json())` gives, byte for byte (tests/test_misses_cli.py compares them,
also for questions of quotes, controls, bidi and lone surrogates).

A value of a type these shapes do not expect (a subclass, say) is handed to `json.dumps`
with the options json_line uses: the same text, only slower.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring

from ..clean import json_safe
from ..render import json_line

_EMPTY_ENTRIES = '{"entries": []'  # "entries" sorts first of the report's keys


def report_json_line(report) -> str:
    """json_line(report.to_json()), each entry written in its fixed shape."""
    outer = json_line(report.to_json(entries=False))
    if not outer.startswith(_EMPTY_ENTRIES):  # never expected: the keys are the report's own
        return json_line(report.to_json())
    parts: dict = {}
    entries = ", ".join([_entry(r, parts) for r in report.reviews])
    # json_safe rewrites characters one by one, so the line made safe whole is its parts made safe.
    return "".join(['{"entries": [', json_safe(entries), "]", outer[len(_EMPTY_ENTRIES):]])


def _entry(review, parts: dict) -> str:
    e = review.entry
    p = review.proposal
    proposal = "null" if p is None else (
        f'{{"alias": {_v(p.alias)}, "basis": {_v(p.basis)}, "canonical": {_v(p.canonical)}, '
        f'"file": {_v(p.file)}, "line": {_v(p.line)}, "similarity": {_v(round(p.similarity, 4))}, '
        f'"with_it": {{"keyword_score": {_v(round(p.score_with_it, 6))}, '
        f'"keyword_top": {_v(p.top_with_it)}, "verdict": {_v(p.verdict_with_it)}}}}}'
    )
    looked_like = [w.strip() for w in e.looked_like.split(",") if w.strip()]
    return (
        f'{{"advice": {_list(review.advice)}, "count": {_v(e.count)}, "first_seen": {_v(e.first_seen)}, '
        f'"last_seen": {_v(e.last_seen)}, "looked_like": {_list(looked_like)}, '
        f'"near": [{", ".join([_part(f, parts) for f in review.near])}], '
        f'"now": {{"keyword_top": {_v(review.top_now)}, "verdict": {_v(review.verdict_now)}}}, '
        f'"proposal": {proposal}, "question": {_v(e.question)}}}'
    )


def _list(items) -> str:
    return "[" + ", ".join([_v(x) for x in items]) + "]"


def _v(x) -> str:
    """One value as the encoder writes it (ensure_ascii=False): by exact type, the rest by it."""
    t = type(x)
    if t is str:
        return encode_basestring(x)
    if x is None:
        return "null"
    if t is int:
        return int.__repr__(x)
    if t is float and x - x == 0.0:  # finite (inf - inf and nan - nan are nan): the encoder's repr
        return float.__repr__(x)
    return json.dumps(x, ensure_ascii=False, sort_keys=True)  # bool, NaN, a subclass: its own words


def _part(f, parts: dict) -> str:
    """One near file's JSON, kept per (base, path, rank) and checked against the rest of it."""
    key = (f.base, f.path, f.text_rank)
    got = parts.get(key)
    if got is None or got[0] != (f.keys, f.label_line, f.is_entry):
        got = parts[key] = ((f.keys, f.label_line, f.is_entry), json.dumps(f.to_json(), ensure_ascii=False, sort_keys=True))
    return got[1]
