"""`kb model import` on a checkpoint generated here: the graph is fused, matches numpy, and bad
checkpoints are refused naming the file and what is wrong."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.stages.rerank import RerankUnavailable
from kbtools.checkpoint import BertGeometry, load_weights, read_config, reference_logits
from kbtools.importer import IMPORT_TOLERANCE, import_checkpoint
from engine.stages.rerank.model import CrossEncoder
from kbtools.safetensors import read_safetensors, write_safetensors
from kbtools.synth import CORPUS, TINY, train_wordpiece, write_checkpoint


@pytest.fixture(scope="module")
def tok():
    return train_wordpiece([CORPUS], vocab_size=300)


@pytest.mark.parametrize("fuse", [False, True])
def test_import_matches_the_numpy_reference(tmp_path, tok, fuse):
    src = write_checkpoint(tmp_path / "src", TINY, tok, seed=3)
    rep = import_checkpoint(src, tmp_path / "out", int8=True, fuse=fuse)
    assert rep.max_abs_diff <= IMPORT_TOLERANCE
    if fuse:  # onnxruntime's offline transformer fusions fired: one Attention per layer, GELU and LayerNorm fused
        assert rep.fused.get("Attention") == TINY["num_hidden_layers"]
        assert rep.fused.get("BiasGelu") == TINY["num_hidden_layers"] and rep.fused.get("SkipLayerNormalization")
    else:
        assert rep.fused == {}
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"model.onnx", "model_int8.onnx", "tokenizer.json", "config.json"}
    cfg_out = json.loads((tmp_path / "out/config.json").read_text())
    assert cfg_out["kb_model_id"] == "kb-test/tiny-cross-encoder" and cfg_out["kb_graph"] == ("fused" if fuse else "plain")
    # A fresh batch of real tokenised pairs of unequal length, through the stage's own loader.
    ce = CrossEncoder(tmp_path / "out")
    q = ce.question_ids("when is a restore rehearsed")
    pairs = ce.pairs(q, [CORPUS[:200], CORPUS[300:900], "backups"])
    got = np.array(ce.score(pairs))
    n = max(len(p) for p in pairs)
    ids, types, mask = (np.zeros((3, n), dtype=np.int64) for _ in range(3))
    for i, p in enumerate(pairs):
        ids[i, : len(p)], types[i, : len(p)], mask[i, : len(p)] = p.ids, p.type_ids, 1
    cfg = read_config(src / "config.json")
    geo = BertGeometry.from_config(cfg, "config.json")
    want = reference_logits(load_weights(src / "model.safetensors", geo), geo, ids, mask, types)[:, 0]
    assert np.abs(got - want).max() <= 1e-4
    assert rep.int8_max_abs_diff is not None and rep.int8_max_abs_diff < 1.0  # a different rounding, same model
    # The head stays fp32 in the int8 file: its matmuls are not quantized.
    import onnx

    q = onnx.load(str(tmp_path / "out/model_int8.onnx"))
    head_ops = {n.op_type for n in q.graph.node if any(i.startswith(("bert.pooler.", "classifier.")) for i in n.input)}
    assert head_ops and not any("Integer" in op or "Quant" in op for op in head_ops)
    assert any(n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul", "QAttention") for n in q.graph.node)


def test_safetensors_round_trip_and_bf16(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
    write_safetensors(tmp_path / "t.safetensors", {"a": a, "i": np.array([3, -4], dtype=np.int64)})
    back = read_safetensors(tmp_path / "t.safetensors")
    assert np.array_equal(back["a"], a) and back["i"].tolist() == [3, -4]
    # BF16 is the top half of a float32: widening must be exact.
    raw = (np.array([1.5, -2.0], dtype=np.float32).view(np.uint32) >> 16).astype("<u2").tobytes()
    head = json.dumps({"b": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    (tmp_path / "b.safetensors").write_bytes(len(head).to_bytes(8, "little") + head + raw)
    assert read_safetensors(tmp_path / "b.safetensors")["b"].tolist() == [1.5, -2.0]


def test_missing_weights_are_refused_by_name(tmp_path, tok):
    src = write_checkpoint(tmp_path / "src", TINY, tok)
    (src / "model.safetensors").unlink()
    with pytest.raises(RerankUnavailable) as e:
        import_checkpoint(src, tmp_path / "out")
    assert "model.safetensors" in str(e.value) and e.value.reason == "model-missing"
    assert not (tmp_path / "out" / "model.onnx").exists()


def test_wrong_shape_names_the_tensor(tmp_path, tok):
    src = write_checkpoint(tmp_path / "src", TINY, tok)
    w = read_safetensors(src / "model.safetensors")
    w = {k: np.array(v) for k, v in w.items()}
    w["bert.pooler.dense.bias"] = np.zeros(7, dtype=np.float32)
    write_safetensors(src / "model.safetensors", w)
    with pytest.raises(RerankUnavailable, match=r"bert\.pooler\.dense\.bias has shape \[7\]"):
        import_checkpoint(src, tmp_path / "out")


def test_unsupported_geometry_is_refused(tmp_path, tok):
    src = write_checkpoint(tmp_path / "src", TINY, tok)
    cfg = json.loads((src / "config.json").read_text())
    cfg["hidden_act"] = "relu"
    (src / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(RerankUnavailable, match="hidden_act is 'relu'"):
        import_checkpoint(src, tmp_path / "out")
    (src / "config.json").write_text("{not json")
    with pytest.raises(RerankUnavailable, match="config.json.*not readable JSON"):
        import_checkpoint(src, tmp_path / "out")


def test_vocab_only_checkpoint_gets_a_tokenizer(tmp_path, tok):
    src = write_checkpoint(tmp_path / "src", TINY, tok)
    vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    (src / "vocab.txt").write_text("\n".join(t for t, _ in vocab) + "\n")
    (src / "tokenizer.json").unlink()
    import_checkpoint(src, tmp_path / "out")
    ce = CrossEncoder(tmp_path / "out")
    (pair,) = ce.pairs(ce.question_ids("deploy checklist"), ["backups run nightly"])
    assert pair.ids[0] == tok.token_to_id("[CLS]") and pair.ids[-1] == tok.token_to_id("[SEP]")
    assert tok.token_to_id("[UNK]") not in pair.ids


def test_fuse_without_sympy_is_one_line_naming_the_cure(tmp_path, tok):
    """sympy is hidden from a real `kb model import --fuse` process (sys.modules entry None makes
    its import fail, as on a machine without it): one line, the cure, no traceback, nothing written."""
    import subprocess
    import sys

    from conftest import REPO

    src = write_checkpoint(tmp_path / "src", TINY, tok, seed=3)
    code = ("import sys; sys.modules['sympy'] = None; from engine.cli import main; "
            f"sys.exit(main(['model', 'import', {str(src)!r}, {str(tmp_path / 'out')!r}, '--fuse']))")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "sympy" in lines[0] and "pip install -e '.[model]'" in lines[0]
    assert not (tmp_path / "out" / "model.onnx").exists()
