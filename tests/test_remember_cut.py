"""`kb remember` / `kb_remember` measure a claim as a question is read (issue 29 item 11).

The whole claim was one full-text query, its time growing with its square (2.1 MB: 139 s)
where `kb_route` on the same text answered in 0.2 s. Now its first MAX_QUESTION_CHARS are
measured, and the answer says so; a note written keeps the whole claim.
"""

from __future__ import annotations

import json

from conftest import run_kb

from engine import Memory
from engine.rank.question import MAX_QUESTION_CHARS

WORDS = "deploy production rollback protein meal sleep training release window canary".split()


def _claim(chars: int) -> str:
    return " ".join(f"{WORDS[i % len(WORDS)]}{i}" for i in range(chars // 8))[:chars]


def test_a_long_claim_is_cut_and_says_so(demo):
    claim = _claim(300_000)
    r = Memory([demo]).remember(claim)
    assert len(r.claim) <= MAX_QUESTION_CHARS and claim.startswith(r.claim)
    assert r.to_json()["claim_cut"] == {"chars": len(claim), "read": len(r.claim)}
    assert len(r.terms) <= MAX_QUESTION_CHARS // 2


def test_kb_remember_prints_the_cut(demo):
    claim = _claim(100_000)  # under what one argument may hold (128 KB)
    out = run_kb("remember", claim, str(demo))
    assert out.returncode == 0, out.stderr
    assert f"cut:       the claim has {len(claim):,} characters; only the first {MAX_QUESTION_CHARS:,}" in out.stdout
    data = json.loads(run_kb("remember", claim, str(demo), "--json").stdout)
    assert data["claim_cut"]["chars"] == len(claim)


def test_a_short_claim_is_not_cut(demo):
    r = Memory([demo]).remember("For a 70 kg person that is about 25 to 30 grams per meal")
    assert r.claim_chars == 0 and "claim_cut" not in r.to_json()


def test_a_written_note_keeps_the_whole_claim(demo):
    claim = _claim(6_000)
    r = Memory([demo]).remember(claim, "yaron/knowledge/long.md", write=True, keys=["long claim"])
    assert r.written == "yaron/knowledge/long.md" and r.claim_chars == len(claim)
    assert claim.strip() in (demo / "yaron" / "knowledge" / "long.md").read_text()
