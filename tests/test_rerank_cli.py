"""The rerank stage's verbs through `kb` itself: import, route --rerank, restamp, refusals."""

from __future__ import annotations

import json

import pytest
from conftest import copy_demo

from engine.cli import main
from engine.stages.rerank.stage import clear_caches, forget_slow_host
from kbtools.synth import CORPUS, TINY, train_wordpiece, write_checkpoint

Q = "quem decide se um deploy pode ir pra producao"


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    copy_demo(root / "demo")
    tok = train_wordpiece([CORPUS], vocab_size=300)
    write_checkpoint(root / "src-a", TINY, tok, seed=0, name="kb-test/a")
    write_checkpoint(root / "src-b", TINY, tok, seed=5, name="kb-test/b")
    return root


@pytest.fixture(autouse=True)
def _cold(monkeypatch):
    monkeypatch.delenv("KB_RERANK_MODEL", raising=False)
    forget_slow_host()
    clear_caches()


def test_import_route_restamp(work, capsys):
    assert main(["model", "import", str(work / "src-a"), str(work / "a"), "--int8"]) == 0
    out = capsys.readouterr().out
    assert "imported kb-test/a" in out and "plain graph" in out and "int8 written" in out
    assert main(["model", "import", str(work / "src-b"), str(work / "b"), "--fuse"]) == 0
    assert "fused Attention 2" in capsys.readouterr().out

    assert main(["route", Q, str(work / "demo"), "--json", "--top", "3"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["route", Q, str(work / "demo"), "--json", "--top", "3", "--rerank", "--rerank-model", str(work / "a")]) == 0
    rr = json.loads(capsys.readouterr().out)
    assert (rr["verdict"], rr["agent"]["name"], rr["keyword_top"]) == (plain["verdict"], plain["agent"]["name"], plain["keyword_top"])
    assert rr["stages"]["rerank"]["model"] == "kb-test/a" and all("rerank_score" in r for r in rr["results"])
    assert "stages" not in plain or "rerank" not in plain["stages"]

    assert main(["route", Q, str(work / "demo"), "--top", "3", "--rerank", "--rerank-model", str(work / "a")]) == 0
    text = capsys.readouterr().out
    assert "rerank" in text and "kb-test/a fp32: top" in text and "cached" in text

    # Another model on a stamped fleet: one line naming the stamp and the cure, non-zero exit.
    code = main(["route", Q, str(work / "demo"), "--rerank", "--rerank-model", str(work / "b")])
    err = capsys.readouterr().err
    assert code != 0 and "rerank-stamp.json" in err and "kb rerank restamp" in err and len(err.strip().splitlines()) == 1
    assert main(["rerank", "restamp", str(work / "demo"), "--rerank-model", str(work / "b")]) == 0
    assert "restamped" in capsys.readouterr().out
    assert main(["route", Q, str(work / "demo"), "--json", "--rerank", "--rerank-model", str(work / "b")]) == 0
    assert json.loads(capsys.readouterr().out)["stages"]["rerank"]["model"] == "kb-test/b"


def test_refusals_are_one_line(work, capsys):
    code = main(["route", Q, str(work / "demo"), "--rerank-model", str(work / "a")])
    err = capsys.readouterr().err
    assert code != 0 and "without --rerank" in err
    code = main(["route", Q, str(work / "demo"), "--rerank"])
    err = capsys.readouterr().err
    assert code != 0 and "KB_RERANK_MODEL" in err and len(err.strip().splitlines()) == 1
    code = main(["model", "import", str(work / "nowhere"), str(work / "x")])
    err = capsys.readouterr().err
    assert code != 0 and "nowhere" in err and "is not a directory" in err
    if not (work / "b").is_dir():  # when this test runs alone
        assert main(["model", "import", str(work / "src-b"), str(work / "b")]) == 0
    code = main(["route", Q, str(work / "demo"), "--rerank", "--rerank-model", str(work / "b"), "--rerank-precision", "int8"])
    err = capsys.readouterr().err
    assert code != 0 and "model_int8.onnx" in err and "--int8" in err
