"""`kb index`, `kb route` and `kb eval` as a user runs them, in fresh processes."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import time

import pytest

from conftest import REPO, kb_here, run_kb

from engine.notes.notefiles import RACY_NS


def test_eval_on_the_demo_prints_the_seed_blocks(demo):
    r = kb_here("eval", str(demo / "gold.tsv"), str(demo), "--asks", "100")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "gold:     13 questions, 10 answerable" in out
    assert "indexed:  11 entries across 3 agents" in out
    assert "  file agent kw    score  marg verdict question" in out
    assert "  ok   ok    ok     33.7  4.50 hit    quem decide se um deploy pode ir pra producao" in out
    assert "FILE   fused   10/10  (100%)" in out
    assert "keyword 10/10  (100%)" in out
    assert "AGENT  routes  10/10  (100%)" in out
    assert "always-yaron   4/10  (40%)" in out
    assert "routing beats the fixed choice by +6 questions" in out
    assert "demoted 0/10 correct answers to a guess" in out
    assert "refused 3, hedged 0, answered 0" in out
    assert "SPEED" in out and "us per question fused" in out


def test_route_prints_the_keyword_ranking(demo):
    r = kb_here("route", "quem decide se um deploy pode ir pra producao", str(demo))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "question: quem decide se um deploy pode ir pra producao"
    assert lines[1] == "indexed:  11 entries across 3 agents, 0 aliases"
    assert "   1.  33.69  zed/knowledge/deploy-checklist.md" in lines
    assert "      matched: deploy, producao" in lines
    assert "   2.   7.49  steve/knowledge/hooks-that-hold.md" in lines
    assert "      matched: decide" in lines


def test_route_hybrid_names_agent_and_provenance(demo):
    r = kb_here("route", "quem decide se um deploy pode ir pra producao", str(demo), "--hybrid")
    assert r.returncode == 0, r.stderr
    first = next(line for line in r.stdout.splitlines() if line.startswith("  0."))
    assert "zed" in first and "knowledge/deploy-checklist.md" in first and "keywords #1 + text #" in first


def test_route_json_carries_the_gate(demo):
    r = kb_here("route", "quem decide se um deploy pode ir pra producao", str(demo), "--json")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 1
    a = json.loads(r.stdout)
    assert a["verdict"] == "hit"
    assert a["gate"]["served"] is True and round(a["gate"]["floor"], 3) == 6.916
    assert a["gate"]["ranked_by_text_only"] is False
    assert a["keyword_top"] == "zed/knowledge/deploy-checklist.md"
    assert a["agent"]["name"] == "zed" and a["agent"]["margin"] == 4.5 and a["agent"]["contenders"] == 2
    assert a["confidence"] == {"agreement": 2, "keyword_score": 33.692439, "margin": 4.5}
    assert a["indexed"] == {"agents": 3, "aliases": 0, "entries": 11}
    for key in ("unreachable", "skipped", "index_was_rebuilt", "suggestions", "miss", "question"):
        assert key in a
    top = a["results"][0]
    assert top["base"] == "zed" and top["path"] == "knowledge/deploy-checklist.md"
    for key in ("title", "purpose", "score", "keyword_score", "why", "matched", "passages"):
        assert key in top
    assert set(top["passages"][0]) == {"heading_path", "text", "excerpt"}


def test_a_question_nobody_covers_is_nothing_with_no_results(demo):
    r = kb_here("route", "quanto custa um satelite geoestacionario", str(demo), "--json")
    a = json.loads(r.stdout)
    assert a["verdict"] == "nothing" and a["gate"]["served"] is False
    assert a["results"] == [] and a["agent"]["name"] is None and a["agent"]["margin"] is None
    assert a["miss"]["recorded"] is True  # a loss, recorded once, in one place


def test_index_reports_what_it_did(demo):
    r = kb_here("index", str(demo))
    assert r.returncode == 0, r.stderr
    assert "zed: 4 files, 4 entries" in r.stdout and "4 added" in r.stdout
    again = kb_here("index", str(demo))
    assert "4 unchanged, 0 added, 0 changed, 0 removed" in again.stdout
    (demo / "zed" / "knowledge" / "loose-notes.md").write_text("# Loose notes\n\nNo label here.\n")
    (demo / "steve" / "knowledge" / "posting-cadence.md").unlink()
    third = kb_here("index", str(demo))
    assert "1 added" in third.stdout and "1 removed" in third.stdout
    assert "reached by full text only, never a HIT until labelled" in third.stdout and "zed/knowledge/loose-notes.md" not in third.stdout
    assert "knowledge/loose-notes.md" in third.stdout


def test_a_stale_index_is_brought_up_to_date_and_the_answer_says_so(demo):
    kb_here("index", str(demo))
    note = demo / "yaron" / "knowledge" / "protein-basics.md"
    note.write_text(note.read_text().replace("`whey`,", "`whey`, `quinoa`,"))
    a = json.loads(kb_here("route", "quinoa", str(demo), "--json").stdout)
    assert a["keyword_top"] == "yaron/knowledge/protein-basics.md"
    plain = kb_here("route", "quinoa", str(demo)).stdout
    assert "re-indexed" not in plain  # already up to date on this second run


def test_the_engine_never_imports_the_ui():
    code = (
        "import importlib, pkgutil, sys, engine\n"
        "for m in pkgutil.walk_packages(engine.__path__, 'engine.'):\n"
        "    if m.name.endswith(('.bench', 'bench', '.__main__')) or '.bench' in m.name: continue\n"
        "    importlib.import_module(m.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'kbtui') or n == 'rich.console')\n"
        "print(bad)\n"
        "assert not bad, bad\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def test_kb_route_starts_without_heavy_modules():
    code = (
        "import sys; from engine import cli, memory\n"
        "heavy = [m for m in ('onnxruntime', 'tokenizers', 'watchfiles', 'mcp', 'textual', 'numpy') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


# What a plain `kb route` / `kb boot` must not import: the optional stages (imported where
# they run), what only a refusal, a claim or a miss needs, and every other verb's modules.
# A prompt hook runs these on every message, and each module is milliseconds of its start.
NOT_FOR_A_PLAIN_ROUTE = (
    "engine.stages.purpose.stage", "engine.stages.purpose.reading", "engine.stages.purpose.facts", "engine.stages.purpose.signals",
    "engine.stages.purpose.stamp", "engine.stages.purpose.weights", "engine.stages.purpose.errors", "engine.stages.rerank.reading", "engine.stages.rerank.stage", "engine.stages.rerank.model",
    "engine.stages.rerank.rule", "engine.stages.classifier", "engine.stages.dossier", "engine.notes.roster", "engine.index.resident",
    "engine.review.remember", "engine.review.misses", "engine.rank.suggest", "engine.index.spelling_cache", "engine.review.labelcli", "engine.review.label",
    "engine.review.evaluate", "engine.review.missreview", "engine.review.check", "engine.serve.mcp", "engine.cli.who",
    "engine.review.labeltext", "engine.review.labelstats", "engine.review.labeleffect", "engine.review.missspelling",
    "engine.cli.misses", "engine.cli.bench", "engine.cli.grade",
    # hashlib and OpenSSL are imported: a cache is read only once its HMAC-SHA256 holds
    # (engine/index/sealedfile.py; ~2.5 ms of import, docs/decisions.md "What kb trusts")
)
# What a route over an index already up to date must not import: the writer (parsing and
# chunking notes), imported when a base is written.
THE_WRITER = ("engine.notes.note", "engine.notes.chunking", "engine.notes.bignote", "engine.index.prepared")
# ... nor `dataclasses` (with inspect, dis, ast, tokenize): the types a route or boot builds are
# records (engine/shared/record.py, docs/decisions.md "Records on the one-shot path"); the writer's are dataclasses.
NO_DATACLASSES = ("dataclasses", "inspect", "dis", "ast", "tokenize")
_IMPORTED_BY_A_RUN = (
    "import json, sys\n"
    "from engine.cli import main\n"
    "code = main()\n"
    "sys.stdout.flush()\n"
    "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def _run_recording_imports(demo, verb: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`kb route` or `kb boot` of the seed's protein question in a fresh process, and the
    modules it imported."""
    question = "how much protein per meal"
    args = ["route", question, str(demo), "--json"] if verb == "route" else ["boot", "--text", str(demo)]
    r = subprocess.run([sys.executable, "-c", _IMPORTED_BY_A_RUN, *args], cwd=REPO, capture_output=True, text=True,
                       timeout=120, input=question if verb == "boot" else None)
    assert r.returncode == 0, r.stderr
    return r, set(json.loads(r.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("verb", ["route", "boot"])
def test_a_plain_route_does_not_import_the_optional_stages(demo, verb):
    r, imported = _run_recording_imports(demo, verb)
    if verb == "route":
        assert json.loads(r.stdout)["verdict"] == "hit"  # the plain path: served, no refusal
    else:
        assert "VESTA: this message is for" in r.stdout
    assert "engine.memory" in imported  # the run really answered
    unwanted = sorted(m for m in NOT_FOR_A_PLAIN_ROUTE if m in imported)
    assert not unwanted, f"`kb {verb}` imported {unwanted}: import them where they run"


@pytest.mark.parametrize("verb", ["route", "boot"])
def test_a_route_over_an_index_up_to_date_does_not_import_the_writer(demo, verb):
    time.sleep(RACY_NS / 1e9 + 0.2)  # no note young: none is re-read to be sure of it
    assert kb_here("index", str(demo)).returncode == 0
    r, imported = _run_recording_imports(demo, verb)
    if verb == "route":
        assert json.loads(r.stdout)["verdict"] == "hit"
    assert "engine.index.indexupdate" in imported  # the stale check ran
    unwanted = sorted(m for m in THE_WRITER + NO_DATACLASSES if m in imported)
    assert not unwanted, f"`kb {verb}` over an index up to date imported {unwanted}"


def test_a_route_that_writes_nothing_imports_no_tempfile(demo):
    """tempfile (with random, and shutil's bz2 and lzma) is imported where a file is written.
    Checked without site (`-S`): this machine's site imports tempfile for every interpreter.
    (shutil itself comes with argparse, whose help formatter asks it the terminal's width.)"""
    time.sleep(RACY_NS / 1e9 + 0.2)
    assert kb_here("index", str(demo)).returncode == 0
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(site.getsitepackages()))  # Stemmer, without .pth files
    args = [sys.executable, "-S", "-c", _IMPORTED_BY_A_RUN, "route", "how much protein per meal", str(demo), "--json"]
    for _ in range(2):  # the first may keep what it derived (the opening cache); the second writes nothing
        r = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["verdict"] == "hit"
    imported = set(json.loads(r.stderr.strip().splitlines()[-1]))
    assert "engine.memory" in imported and "Stemmer" in imported  # the real route, stemmed
    unwanted = sorted(m for m in ("tempfile", "random") if m in imported)
    assert not unwanted, f"a route that wrote nothing imported {unwanted}"


def test_threads_asking_at_once_get_the_same_answers(indexed_demo):
    from concurrent.futures import ThreadPoolExecutor

    from engine import Memory

    mem = Memory(indexed_demo)
    questions = [line.split("\t")[0] for line in (indexed_demo / "gold.tsv").read_text().splitlines()
                 if line and not line.startswith("#")]
    expected = {q: mem.ask(q, record_miss=False) for q in questions}

    def ask(q):
        a = mem.ask(q, record_miss=False)
        return q, a.verdict, a.keyword_top, [r.id for r in a.results]

    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(ask, questions * 20))
    for q, verdict, top, ids in got:
        assert verdict == expected[q].verdict and top == expected[q].keyword_top
        assert ids == [r.id for r in expected[q].results]


def test_a_nothing_in_text_shows_the_text_legs_rows_that_json_lists(demo):
    # The seed's reply on a miss (the refusal, then what the base holds that looks like the
    # question) comes first; the text scorer's rows, which --json and the room's reading list
    # carry, follow under a line saying no label vouches for them.
    question = "how do I roll back"
    a = json.loads(kb_here("route", question, str(demo), "--json").stdout)
    assert a["verdict"] == "nothing" and a["results"]  # the premise: the text leg found passages
    lines = kb_here("route", question, str(demo)).stdout.splitlines()
    assert "  nothing matched. Either the base does not cover it, or the" in lines
    assert "    backup do banco, database backup, parar o scroll, stop the scroll" in lines
    lead = lines.index("  the text scorer alone found these; no label vouches for them:")
    assert lead > lines.index("  and never finds a translation.")
    rows = [line.split()[2] for line in lines[lead + 1:] if line.startswith("  0.")]
    assert rows == [r["path"] for r in a["results"]][:5]
    assert "knowledge/deploy-checklist.md" in rows  # the note whose section is "Rolling back"


def test_eval_reads_an_answer_key_given_as_a_pipe(demo, tmp_path):
    # `kb eval <(grep ... gold.tsv) FLEET`: a key the person names may be a pipe. The room
    # refuses a FIFO where it expects its gold.tsv (test_faults_round6_room.py); the verb
    # must not, or process substitution stops working.
    import threading

    fifo = tmp_path / "gold.fifo"
    os.mkfifo(fifo)
    key = (demo / "gold.tsv").read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as w:
            w.write(key)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    r = run_kb("eval", str(fifo), str(demo), "--no-speed", timeout=120)
    writer.join(timeout=5)
    assert r.returncode == 0, r.stderr
    assert "gold:     13 questions, 10 answerable" in r.stdout
