"""Fault suite, hardening of what kb writes and reads beside the notes (issue 13, items 5 and 14).

Item 5: a symlink planted in a fleet never makes kb delete, create or copy a file outside it.
Item 14: `kb misses` proposes through the keys' trigram index (the same proposals as the full
scan it replaced), and a question over the stated length is cut, and the answer says so.
"""

from __future__ import annotations

import json
import random

import pytest

from _faults import NOTHING_Q
from conftest import run_kb
from engine import Memory
from engine.review import missreview
from engine.review.misses import MissEntry, render_log
from engine.rank.normalize import terms, words
from engine.rank.question import MAX_QUESTION_CHARS
from engine.rank.suggest import SUGGEST_MIN_DICE, dice


# -- item 14: the proposal step, indexed, proposes what the full scan proposed ---------------


def _full_scan_propose(memory, question, q_terms, matched, files, n):
    """The proposal step as it was before the trigram index: every span against every key of
    every near file. Kept here as the reference the indexed step must equal."""
    spans = missreview._spans(q_terms, matched)
    if not spans:
        return None

    def similarity(span, kt):
        joined = dice("".join(span), "".join(kt))
        each = sum(max(dice(s, w) for w in kt) for s in span) / len(span)
        return max(joined, each)

    best = None
    for f in files:
        if not f.keys:
            continue
        for order, key in enumerate(f.keys):
            kt = terms(key)
            if not kt:
                continue
            for span in spans:
                if span == kt:
                    continue
                sim = similarity(span, kt)
                rank = (sim, len(span), -order)
                if sim >= SUGGEST_MIN_DICE and (best is None or rank > best[0]):
                    best = (rank, span, key, f)
        if best is not None:
            break
    if best is not None:
        (sim, _, _), span, key, f = best
        return missreview._proved(memory, question, " ".join(span), " ".join(words(key)), f, "spelling", sim, n)
    for f in files:
        if not f.keys:
            continue
        held = missreview._words_in_text(memory, f, q_terms)
        run = missreview._longest_run(q_terms, lambda t: t in held and t not in matched)
        if not run:
            continue
        return missreview._proved(memory, question, " ".join(run), " ".join(words(f.keys[0])), f, "text", 0.0, n)
    return None


def _generated_log(memory, count: int, seed: int) -> list[MissEntry]:
    """Questions built from the fleet's own key words, misspelt, run together, split and mixed
    with words it does not hold: the shapes a real miss log has, in every proposal branch."""
    rng = random.Random(seed)
    vocab = sorted({w for k in memory.snapshot().catalogue.keys_as_written() for w in words(k) if len(w) > 2})
    noise = ["zorbly", "quux", "frobnicate", "como", "what", "the", "de", "voor", "snarf", "kettle"]

    def mangle(w: str) -> str:
        r = rng.random()
        if r < 0.3 and len(w) > 4:
            i = rng.randrange(1, len(w) - 1)
            return w[:i] + w[i + 1:]  # a letter dropped
        if r < 0.45 and len(w) > 5:
            i = rng.randrange(2, len(w) - 2)
            return w[:i] + " " + w[i:]  # split in two
        return w

    out, seen = [], set()
    while len(out) < count:
        parts = [mangle(rng.choice(vocab)) if rng.random() < 0.6 else rng.choice(noise)
                 for _ in range(rng.randint(1, 6))]
        q = " ".join(parts)
        if q in seen:
            continue
        seen.add(q)
        out.append(MissEntry(rng.randint(1, 9), "2026-11-01", "2026-11-20", q, ""))
    return out


def test_indexed_proposals_equal_the_full_scan_on_a_generated_log(demo, monkeypatch):
    mem = Memory(demo)
    log = demo / "kb-misses.txt"
    log.write_text(render_log(_generated_log(mem, 400, seed=13)), encoding="utf-8")
    indexed = missreview.review_misses(mem).to_json()
    monkeypatch.setattr(missreview, "_propose", _full_scan_propose)
    reference = missreview.review_misses(mem).to_json()
    assert len(indexed["entries"]) == 400
    proposals = [e["proposal"] for e in reference["entries"]]
    # The log reaches both branches, so the comparison is not between two empty lists.
    assert sum(1 for p in proposals if p and p["basis"] == "spelling") >= 20
    assert sum(1 for p in proposals if p is None) >= 20
    assert indexed == reference
    # Where the prose offered nothing, the near files are those carrying the offered keys, in
    # catalogue order: what the walk over every key found, now looked up by key.
    cat = mem.snapshot().catalogue
    fallback = 0
    for e in reference["entries"]:
        a = mem.ask(e["question"], record_miss=False, with_passages=False, top=1, classify=False)
        if a.text:
            continue
        fallback += 1
        walked: list[str] = []
        for key, entry in cat.vocabulary_keys():
            if " ".join(key.split()) in set(a.suggestions) and entry.id not in walked and len(walked) < 3:
                walked.append(entry.id)
        assert [f["id"] for f in e["near"]] == walked, e["question"]
    assert fallback >= 5


# -- item 14: a question over the stated length is cut, and the answer says so ---------------


def _long_question(chars: int) -> str:
    rng = random.Random(5)
    ws = ["deploy", "rollback", "protein", "canary", "budget", "cache", "the", "of"]
    out, n = [], 0
    while n < chars:
        w = rng.choice(ws) + str(rng.randint(0, 99999))
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:chars]


def test_a_question_over_the_limit_is_cut_and_the_answer_says_so(indexed_demo):
    q = _long_question(200_000)
    a = Memory(indexed_demo).ask(q, record_miss=False)
    assert len(a.question) <= MAX_QUESTION_CHARS
    assert q.startswith(a.question)
    j = a.to_json()
    assert j["question_cut"] == {"chars": len(q), "read": len(a.question)}
    short = Memory(indexed_demo).ask("how much protein per meal", record_miss=False)
    assert "question_cut" not in short.to_json()


def test_kb_route_prints_the_cut_in_one_line_and_logs_the_cut_question(demo):
    q = NOTHING_Q + " " + _long_question(60_000)  # under the kernel's one-argument limit
    r = run_kb("route", q, str(demo))
    assert r.returncode == 0, r.stderr
    cut = [line for line in r.stdout.splitlines() if line.startswith("cut:")]
    assert cut == [f"cut:      the question has {len(q):,} characters; only the first "
                   f"{MAX_QUESTION_CHARS:,} or fewer were read"], r.stdout
    assert "Traceback" not in r.stderr
    logged = (demo / "kb-misses.txt").read_text(encoding="utf-8")
    assert max(len(line) for line in logged.splitlines()) < MAX_QUESTION_CHARS + 100


# -- item 5: no links followed for files kb writes ---------------------------------------------


def _listing(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _foreign_db(path):
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, owner TEXT)")
    con.execute("INSERT INTO accounts (owner) VALUES ('another program')")
    con.commit()
    con.close()


def test_a_kb_folder_linked_elsewhere_is_never_written_nor_deleted_there(demo, tmp_path):
    other = tmp_path / "other-program"
    other.mkdir()
    _foreign_db(other / "index.db")
    before = _listing(other)
    (demo / "zed" / ".kb").symlink_to(other, target_is_directory=True)
    for args in (("route", "quem decide se um deploy pode ir pra producao", str(demo)), ("index", str(demo)),
                 ("route", "how much protein per meal", str(demo), "--purpose", "documents")):
        r = run_kb(*args)
        # `kb index` fails for the base it could not write, as for any unwritable index.
        assert r.returncode == (1 if args[0] == "index" else 0), r.stderr
        assert "Traceback" not in r.stderr
        assert _listing(other) == before, args  # not deleted, not replaced, nothing added
        said = [line for line in (r.stdout + r.stderr).splitlines() if "symbolic link" in line]
        assert said and all(str(demo / "zed" / ".kb") in line for line in said), r.stdout + r.stderr
    assert (demo / "zed" / ".kb").is_symlink()
    # The other bases are indexed as before, and zed's notes are still answered (from memory).
    r = run_kb("route", "quem decide se um deploy pode ir pra producao", str(demo), "--json")
    assert json.loads(r.stdout)["verdict"] == "hit"


def test_a_miss_log_lock_linked_outside_is_not_created(demo, tmp_path):
    target = tmp_path / "nologin"
    (demo / ".kb").mkdir(exist_ok=True)  # the lock is kb's own: inside .kb/ (issue 28)
    (demo / ".kb" / ".kb-misses.txt.lock").symlink_to(target)
    r = run_kb("route", NOTHING_Q, str(demo))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert not target.exists() and (demo / ".kb" / ".kb-misses.txt.lock").is_symlink()
    miss = [line for line in r.stdout.splitlines() if "symbolic link" in line]
    assert len(miss) == 1 and ".kb-misses.txt.lock" in miss[0], r.stdout


def test_a_kb_folder_linked_outside_carries_no_miss_log_there(tmp_path):
    # A plain folder's log lives in its .kb/ (issue 28): a .kb planted as a link is refused by name.
    notes, elsewhere = tmp_path / "notes", tmp_path / "elsewhere"
    notes.mkdir()
    elsewhere.mkdir()
    (notes / "a.md").write_text("# A\n\nSpades and rakes.\n")
    (notes / ".kb").symlink_to(elsewhere)
    r = run_kb("route", NOTHING_Q, str(notes), "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    miss = json.loads(r.stdout)["miss"]
    assert not miss["recorded"] and str(notes / ".kb") in miss["error"], miss
    assert not list(elsewhere.glob("*kb-misses*"))


def test_a_miss_log_linked_outside_is_neither_read_nor_copied(demo, tmp_path):
    outside = tmp_path / "someone-elses.txt"
    outside.write_text("7\t2026-01-01\t2026-01-02\tmy private question about my salary\n", encoding="utf-8")
    before = outside.read_bytes()
    (demo / "kb-misses.txt").symlink_to(outside)
    r = run_kb("route", NOTHING_Q, str(demo))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert (demo / "kb-misses.txt").is_symlink() and outside.read_bytes() == before
    assert len([line for line in r.stdout.splitlines() if "symbolic link" in line]) == 1, r.stdout
    r = run_kb("misses", str(demo))
    assert r.returncode != 0 and "salary" not in r.stdout + r.stderr
    assert r.stderr.strip().count("\n") == 0 and "symbolic link" in r.stderr and "Traceback" not in r.stderr


def test_a_gitignore_linked_outside_is_not_copied_into_the_work_tree(demo, tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(demo)], check=True)
    outside = tmp_path / "private-ignore"
    outside.write_text("secret-project-name/\n", encoding="utf-8")
    (demo / ".gitignore").unlink(missing_ok=True)  # the demo's own, replaced by the planted link
    (demo / ".gitignore").symlink_to(outside)
    r = run_kb("route", NOTHING_Q, str(demo))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert (demo / ".gitignore").is_symlink() and outside.read_text() == "secret-project-name/\n"
    # kb writes its ignore rules to .git/info/exclude only, so the linked file is read, never
    # rewritten, and the private log that does land is ignored by git all the same.
    assert (demo / "kb-misses.txt").exists()
    ignored = subprocess.run(["git", "-C", str(demo), "check-ignore", "-q", "kb-misses.txt"])
    assert ignored.returncode == 0
    assert "secret-project-name" not in (demo / ".git" / "info" / "exclude").read_text()


def test_a_megabyte_question_over_mcp_is_cut_and_the_answer_says_so(demo):
    pytest.importorskip("mcp")
    from test_serve import _json, _talk

    q = _long_question(1_200_000)

    async def script(c):
        return _json(await c.call_tool("kb_route", {"question": q}))

    route = _talk([demo], script)
    assert route["question_cut"] == {"chars": len(q), "read": len(route["question"])}
    assert len(route["question"]) <= MAX_QUESTION_CHARS and q.startswith(route["question"])


def test_a_fleet_kb_folder_linked_elsewhere_gets_no_session_memory(demo, tmp_path):
    other = tmp_path / "other-program"
    other.mkdir()
    (demo / ".kb").symlink_to(other, target_is_directory=True)
    r = run_kb("boot", str(demo), "--session", "s-1", "--text", stdin="how much protein per meal\n")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert list(other.iterdir()) == []  # no sessions/ folder made through the link
    assert r.stdout.strip()  # the briefing is still handed over; only its memory is lost
