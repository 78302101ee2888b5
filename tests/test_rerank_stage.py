"""The stage end to end on a real (tiny) cross-encoder: imported through `kb model import`,
run through onnxruntime, its tokenizer a WordPiece trained here. Nothing is mocked."""

from __future__ import annotations

import dataclasses

import json

import pytest

from engine.answer import Passage, Result
from engine.stages.rerank import RerankBudgetExceeded, RerankCallerError, RerankStampMismatch, RerankUnavailable
from engine.stages.rerank.stage import clear_caches, forget_slow_host, get_stage, rerank_results, resolve_model_dir, restamp, warm
from kbtools.synth import CORPUS, build_tiny_model

QUESTION = "who decides whether a deploy may go to production"
SENTENCES = [s.strip() for s in CORPUS.replace("\n", " ").split(". ") if s.strip()]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {
        "a": build_tiny_model(root, seed=0, int8=True),
        "b": build_tiny_model(root, seed=1, name="kb-test/another-cross-encoder"),
    }


@pytest.fixture(autouse=True)
def _budget_no_loaded_host_misses(monkeypatch):
    # These tests are about what the stage does, not how fast: the default 300 ms refused a
    # stamp test at load 1-2 in CI (RerankBudgetExceeded). The budget's own rules are tested
    # with explicit budgets below and in test_rerank_rule.py, which keeps the 300.
    from engine.stages.rerank import rule

    monkeypatch.setattr(rule, "RERANK_DEFAULT_BUDGET_MS", 60_000)


@pytest.fixture(autouse=True)
def _bases_exist(tmp_path):
    # The stage stamps each base it reorders in <base>/.kb; a base is the person's folder and
    # kb never makes one (engine/notes/nofollow.make_dirs), so these tests' bases are made here.
    for name in ("zed", "int8", "c", "steve"):
        (tmp_path / name).mkdir()


@pytest.fixture(autouse=True)
def _fresh_memo():
    # Stages (and their caches) are per process: each test starts from cold caches and no memo.
    forget_slow_host()
    clear_caches()
    yield
    forget_slow_host()


def row(i: int, text: str, *, base: str = "zed", purpose: str = "", version: str | None = None) -> Result:
    return Result(
        base=base, path=f"knowledge/note-{i:03d}.md", title=f"note {i}", purpose=purpose, score=1.0 / (61 + i),
        keyword_score=0.0, keyword_rank=None, text_rank=i + 1, why=f"text #{i + 1}", matched=(), species="memory",
        passages=(Passage(heading_path="", text=text, excerpt=text[:40]),) if text else (),
        content_hash=f"h{i}" if version is None else version,
    )


def page(n: int) -> list[Result]:
    return [row(i, " ".join(SENTENCES[(i * 3 + j) % len(SENTENCES)] for j in range(1 + i % 3))) for i in range(n)]


def test_reranks_the_window_and_stamps_the_page(models, tmp_path):
    rows = page(40)
    # A budget no loaded host can miss: this test is about what the stage does, not how fast
    # (the default 300 ms refused it once at load 4 on a shared 2-core machine; the budget's
    # own rules are tested below and in test_rerank_rule).
    out = rerank_results(QUESTION, rows, 10, models["a"], {"zed": tmp_path / "zed"}, top_k=32, budget_ms=60_000)
    st = out.stamp
    assert st["k"] == 32 and st["pairs_scored"] == 32 and st["cache_misses"] == 32 and st["cache_hits"] == 0
    assert st["model"] == "kb-test/tiny-cross-encoder" and st["precision"] == "fp32" and st["budget_ms"] == 60_000
    assert st["sub_batches"] == 1 + 31 // 4 + (1 if 31 % 4 else 0)
    for key in ("ms", "per_pair_ms", "text_cap_tokens", "unscorable", "capped", "summaries"):
        assert key in st
    # The window is a permutation of the first 32; each carries its logit, descending outside the tie band.
    head = out.results[:32]
    assert {r.id for r in head} == {r.id for r in rows[:32]}
    scores = [r.rerank_score for r in head]
    assert all(s is not None for s in scores)
    assert all(a >= b - 1e-3 for a, b in zip(scores, scores[1:]))
    assert [r.id for r in head] != [r.id for r in rows[:32]]  # the model did move something
    # Rows past topK are untouched, in their own order, unscored.
    assert out.results[32:] == tuple(rows[32:])
    stamp = json.loads((tmp_path / "zed" / ".kb" / "rerank-stamp.json").read_text())
    assert stamp["model"] == "kb-test/tiny-cross-encoder" and stamp["precision"] == "fp32" and len(stamp["weights_sha256"]) == 64


def test_pair_alone_in_four_and_one_then_four_agree(models):
    stage = get_stage(models["a"])
    stage.warm()
    m = stage.model
    pairs = m.pairs(m.question_ids(QUESTION), [r.passages[0].text for r in page(5)])
    alone = [m.score([p])[0] for p in pairs]
    four = m.score(pairs[:4]) + m.score(pairs[4:])
    one_then_four = m.score(pairs[:1]) + m.score(pairs[1:])
    assert len({len(p) for p in pairs}) > 1  # padding is really exercised
    assert max(abs(a - b) for a, b in zip(alone, four)) <= 1e-5
    assert max(abs(a - b) for a, b in zip(alone, one_then_four)) <= 1e-5


def test_int8_scores_each_pair_on_its_own(models, tmp_path):
    stage = get_stage(models["a"], "int8")
    m = stage.model
    pairs = m.pairs(m.question_ids(QUESTION), [r.passages[0].text for r in page(6)])
    alone = [m.score([p])[0] for p in pairs]
    # Activation scales are per call, and the int8 path makes every call one pair: exact equality.
    assert m.score(pairs) == alone
    assert m.score(pairs[:1]) + m.score(pairs[1:5]) + m.score(pairs[5:]) == alone
    out = rerank_results(QUESTION, page(8), 4, models["a"], {"zed": tmp_path / "int8"}, precision="int8")
    assert out.stamp["precision"] == "int8"


def test_budget_refusal_carries_the_candidates_and_the_memo_refuses_at_once(models, tmp_path):
    rows = page(40)
    with pytest.raises(RerankBudgetExceeded) as e:
        rerank_results(QUESTION, rows, 10, models["a"], {"zed": tmp_path}, top_k=32, budget_ms=0.001)
    err = e.value
    assert err.candidates == tuple(rows)  # the fused order, for the caller to choose explicitly
    assert err.pairs_scored == 1 and err.k == 32 and err.budget_ms == 0.001 and not err.memo
    assert err.per_pair_ms > 0 and err.projected_ms > 0 and err.elapsed_ms > 0
    assert "budget_ms" in json.dumps(err.to_json())
    # The host is now known too slow for this store at this budget: refused with no model work.
    with pytest.raises(RerankBudgetExceeded) as e2:
        rerank_results(QUESTION, rows, 10, models["a"], {"zed": tmp_path}, top_k=32, budget_ms=0.001)
    assert e2.value.memo and e2.value.pairs_scored == 0 and e2.value.elapsed_ms == 0.0
    # A budget that fits gets the run: the memo decides whether, never what.
    out = rerank_results(QUESTION, rows, 10, models["a"], {"zed": tmp_path}, top_k=32, budget_ms=60_000)
    assert out.stamp["pairs_scored"] == 32


def test_stamp_refuses_a_second_model_until_restamped(models, tmp_path):
    base = tmp_path / "zed"
    rows = page(6)
    rerank_results(QUESTION, rows, 3, models["a"], {"zed": base})
    with pytest.raises(RerankStampMismatch) as e:
        rerank_results(QUESTION, rows, 3, models["b"], {"zed": base})
    assert set(e.value.fields) == {"model", "weights_sha256"}
    assert f"kb rerank restamp {base}" in str(e.value) and "rerank-stamp.json" in str(e.value)
    with pytest.raises(RerankStampMismatch) as e:
        rerank_results(QUESTION, rows, 3, models["a"], {"zed": base}, precision="int8")
    assert "precision" in e.value.fields
    st = restamp(base, models["b"])
    assert st["model"] == "kb-test/another-cross-encoder"
    out = rerank_results(QUESTION, rows, 3, models["b"], {"zed": base})
    assert out.stamp["model"] == "kb-test/another-cross-encoder"
    with pytest.raises(RerankStampMismatch):
        rerank_results(QUESTION, rows, 3, models["a"], {"zed": base})


def test_cache_returns_identical_scores_and_counts_hits(models, tmp_path):
    rows = page(12)
    first = rerank_results(QUESTION, rows, 5, models["a"], {"zed": tmp_path / "c"})
    again = rerank_results("  " + QUESTION.replace(" ", "   ") + "\n", rows, 5, models["a"], {"zed": tmp_path / "c"})
    assert again.stamp["cache_hits"] == 12 and again.stamp["cache_misses"] == 0 and again.stamp["pairs_scored"] == 0
    assert again.scores == first.scores and again.results == first.results
    # A row whose content changed is a different key; a row with no version is never cached.
    changed = [dataclasses.replace(rows[0], content_hash="new")] + rows[1:11] + [row(11, rows[11].passages[0].text, version="")]
    third = rerank_results(QUESTION, changed, 5, models["a"], {"zed": tmp_path / "c"})
    assert third.stamp["cache_misses"] == 2 and third.stamp["cache_hits"] == 10
    # Case is part of the question: no hit.
    assert rerank_results(QUESTION.upper(), rows, 5, models["a"], {"zed": tmp_path / "c"}).stamp["cache_hits"] == 0
    # Restamping drops the cache.
    restamp(tmp_path / "c", models["a"])
    assert rerank_results(QUESTION, rows, 5, models["a"], {"zed": tmp_path / "c"}).stamp["cache_hits"] == 0


def test_ties_keep_the_fused_order(models, tmp_path):
    same = SENTENCES[3]
    rows = [row(i, same) for i in range(6)]
    out = rerank_results(QUESTION, rows, 3, models["a"], {"zed": tmp_path})
    assert len(set(out.scores.values())) == 1
    assert [r.id for r in out.results] == [r.id for r in rows]


def test_unscorable_rows_follow_the_scored_and_are_counted(models, tmp_path):
    rows = page(6)
    rows[1] = row(1, "")
    out = rerank_results(QUESTION, rows, 3, models["a"], {"zed": tmp_path})
    assert out.stamp["unscorable"] == 1 and out.stamp["pairs_scored"] == 5
    assert out.results[5].id == rows[1].id and out.results[5].rerank_score is None


def test_summary_rule_and_the_token_cap(models, tmp_path):
    long_text = " ".join(SENTENCES) * 2
    rows = [row(0, long_text, purpose="decide whether a build may go to production"), row(1, SENTENCES[0])]
    out = rerank_results(QUESTION, rows, 2, models["a"], {"zed": tmp_path}, use_summary=True)
    assert out.stamp["summaries"] == 1 and out.stamp["capped"] == 0 and out.stamp["text_rule"] == "summary-then-passage"
    out = rerank_results(QUESTION, rows, 2, models["a"], {"zed": tmp_path})
    assert out.stamp["capped"] == 1 and out.stamp["summaries"] == 0
    m = get_stage(models["a"]).model
    q = m.question_ids(QUESTION)
    (pair,) = m.pairs(q, [long_text])
    assert pair.capped and len(pair) == len(q.ids) + 128 + 3


def test_rows_from_two_bases_stamp_both(models, tmp_path):
    rows = page(4) + [row(9, SENTENCES[1], base="steve")]
    rerank_results(QUESTION, rows, 3, models["a"], {"zed": tmp_path / "zed", "steve": tmp_path / "steve"})
    assert (tmp_path / "zed/.kb/rerank-stamp.json").is_file() and (tmp_path / "steve/.kb/rerank-stamp.json").is_file()
    with pytest.raises(RerankCallerError, match="steve"):
        rerank_results(QUESTION, rows, 3, models["a"], {"zed": tmp_path / "zed"})


def test_caller_errors_before_any_work(models, tmp_path):
    with pytest.raises(RerankCallerError, match="text question"):
        rerank_results("   ", page(3), 3, models["a"], {"zed": tmp_path})
    with pytest.raises(RerankCallerError, match="both"):
        rerank_results(QUESTION, page(3), 3, models["a"], {"zed": tmp_path}, top_k=3)
    assert not (tmp_path / ".kb").exists()


def test_missing_and_unreadable_models_are_refused_with_their_cure(models, tmp_path):
    with pytest.raises(RerankUnavailable) as e:
        warm(tmp_path / "nowhere")
    assert e.value.reason == "model-missing" and "kb model import" in str(e.value) and "nowhere" in str(e.value)
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in ("tokenizer.json", "config.json"):
        (broken / f).write_bytes((models["a"] / f).read_bytes())
    (broken / "model.onnx").write_bytes(b"not a model")
    with pytest.raises(RerankUnavailable) as e:
        warm(broken)
    assert e.value.reason == "model-unreadable" and "model.onnx" in str(e.value)
    (tmp_path / "stamped" / ".kb").mkdir(parents=True)
    (tmp_path / "stamped" / ".kb" / "rerank-stamp.json").write_text("{half")
    with pytest.raises(RerankUnavailable) as e:
        rerank_results(QUESTION, page(2), 2, models["a"], {"zed": tmp_path / "stamped"})
    assert e.value.reason == "stamp-unreadable" and "kb rerank restamp" in str(e.value)


def test_warm_pays_the_load_once(models):
    w = warm(models["b"], "fp32")
    assert w["model"] == "kb-test/another-cross-encoder" and w["load_ms"] >= 0
    assert warm(models["b"], "fp32")["paid_now"] is False


def test_model_dir_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("KB_RERANK_MODEL", raising=False)
    with pytest.raises(RerankUnavailable, match="rerank_model"):
        resolve_model_dir(None, {})
    assert resolve_model_dir(None, {"rerank_model": "/m/fleet"}).as_posix() == "/m/fleet"
    monkeypatch.setenv("KB_RERANK_MODEL", "/m/env")
    assert resolve_model_dir(None, {"rerank_model": "/m/fleet"}).as_posix() == "/m/env"
    assert resolve_model_dir("/m/arg", {"rerank_model": "/m/fleet"}).as_posix() == "/m/arg"


def test_summary_and_passage_are_different_cache_entries(models, tmp_path):
    rows = [row(i, SENTENCES[i], purpose=f"exists to answer question {i}") for i in range(4)]
    a = rerank_results(QUESTION, rows, 2, models["a"], {"zed": tmp_path})
    b = rerank_results(QUESTION, rows, 2, models["a"], {"zed": tmp_path}, use_summary=True)
    assert a.stamp["cache_misses"] == 4 and b.stamp["cache_misses"] == 4 and b.stamp["cache_hits"] == 0
    assert a.scores != b.scores
    c = rerank_results(QUESTION, rows, 2, models["a"], {"zed": tmp_path}, use_summary=True)
    assert c.stamp["cache_hits"] == 4 and c.scores == b.scores


def test_a_base_deleted_before_its_first_stamp_refuses_the_stage(models, tmp_path):
    # A base removed while the room or kb serve ran: the stage is refused in one line naming
    # the stamp it could not write, and the base folder is not made again.
    gone = tmp_path / "gone"
    with pytest.raises(RerankUnavailable) as refused:
        rerank_results(QUESTION, page(8), 4, models["a"], {"zed": gone})
    assert refused.value.reason == "stamp-unwritable" and "folder is gone" in str(refused.value)
    assert str(gone / ".kb" / "rerank-stamp.json") in str(refused.value)
    assert not gone.exists()
