"""`kb misses --json`: the report as one line of JSON, each near file's part encoded once.

Most of the line is the near files (10 MB of a 10,000-entry review's 14 MB): every entry lists
up to three of the fleet's files with all their keys, and a long log names the same few files
thousands of times. So the report is encoded with every near list left empty, and each list
is then put in from parts encoded once per (file, text rank). The result is the line
`json_line(report.to_json())` gives, byte for byte (tests/test_misses_cli.py compares them).

Why splitting on `"near": []` is safe: inside a JSON string every `"` is escaped, so the
text `"near": []` occurs only where the key is, once per entry; a count that differs (never
expected) falls back to encoding the whole report.
"""

from __future__ import annotations

from .render import json_line

_EMPTY_NEAR = '"near": []'


def report_json_line(report) -> str:
    """json_line(report.to_json()), written with each near file's part encoded once."""
    pieces = json_line(report.to_json(near=False)).split(_EMPTY_NEAR)
    if len(pieces) != len(report.reviews) + 1:
        return json_line(report.to_json())
    parts: dict = {}
    out = [pieces[0]]
    for review, after in zip(report.reviews, pieces[1:]):
        out.append('"near": [' + ", ".join([_part(f, parts) for f in review.near]) + "]")
        out.append(after)
    return "".join(out)


def _part(f, parts: dict) -> str:
    """One near file's JSON, kept per (base, path, rank) and checked against the rest of it."""
    key = (f.base, f.path, f.text_rank)
    got = parts.get(key)
    if got is None or got[0] != (f.keys, f.label_line, f.is_entry):
        got = parts[key] = ((f.keys, f.label_line, f.is_entry), json_line(f.to_json()))
    return got[1]
