"""`kb model import SRC DIR`: a Hugging Face BertForSequenceClassification checkpoint into the
cross-encoder layout this stage loads (model.onnx, tokenizer.json, config.json), without torch.

The graph is built with the `onnx` package (optionally fused offline by onnxruntime's
transformer optimizer) and refused unless onnxruntime's logits match a float64 numpy forward
pass to 1e-4.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.notes.atomic import write_atomic
from .checkpoint import BertGeometry, load_weights, read_config, reference_logits
from engine.stages.rerank.errors import RerankUnavailable

# The export must agree with the numpy reference this closely, on every logit of the probe.
IMPORT_TOLERANCE = 1e-4
MODEL_FILE = "model.onnx"
INT8_FILE = "model_int8.onnx"


@dataclass(frozen=True)
class ImportReport:
    model_id: str
    dir: str
    geometry: BertGeometry
    max_abs_diff: float  # fp32 export vs numpy float64 reference, on the probe batch
    fused: dict[str, int]  # fused operator counts from onnxruntime's offline optimizer (empty unless fuse=True)
    int8_max_abs_diff: float | None = None  # informational: int8 is a different rounding, not checked to 1e-4
    seconds: float = 0.0
    files: tuple[str, ...] = field(default_factory=tuple)


def _tokenizer_json(src: Path, cfg: dict[str, Any]) -> bytes:
    tj = src / "tokenizer.json"
    if tj.is_file():
        return tj.read_bytes()
    vocab = src / "vocab.txt"
    if not vocab.is_file():
        raise RerankUnavailable("model-missing", str(src), "has neither tokenizer.json nor vocab.txt", "copy the checkpoint's tokenizer files beside it")
    # A vocab-only checkpoint: rebuild the BERT WordPiece pipeline it was trained with.
    from tokenizers.implementations import BertWordPieceTokenizer

    lower = True
    tc = src / "tokenizer_config.json"
    if tc.is_file():
        try:
            lower = bool(json.loads(tc.read_text(encoding="utf-8")).get("do_lower_case", True))
        except ValueError:
            pass
    tok = BertWordPieceTokenizer(str(vocab), lowercase=lower)
    return tok._tokenizer.to_str().encode()


def probe_batch(geo: BertGeometry, seed: int = 0) -> dict[str, Any]:
    """Deterministic inputs with padding and both segments, so the mask and token types are exercised."""
    import numpy as np

    rng = np.random.default_rng(seed)
    S = min(24, geo.max_position)
    lengths = [S, max(3, S - 7), min(S, 6)]
    ids = np.zeros((len(lengths), S), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for b, n in enumerate(lengths):
        ids[b, :n] = rng.integers(0, geo.vocab_size, n)
        mask[b, :n] = 1
        types[b, n // 2 : n] = 1 if geo.type_vocab_size > 1 else 0
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def _run(path: str, feeds: dict[str, Any]) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return sess.run(["logits"], feeds)[0]


def _optimize(plain: str, geo: BertGeometry) -> tuple[Any, dict[str, int]]:
    """onnxruntime's offline BERT fusions; the plain graph is kept when the optimizer is absent."""
    import logging

    try:
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError:  # a minimal onnxruntime build: the plain graph still runs, unfused
        import onnx

        return onnx.load(plain), {}
    try:
        # The optimizer's symbolic shape inference needs sympy, which onnxruntime no longer
        # installs: asked for up front so its absence is one line, not a traceback mid-fusion.
        import sympy  # noqa: F401
    except ImportError:
        raise RerankUnavailable(
            "optimizer-unavailable", plain, "--fuse needs sympy for onnxruntime's shape inference, and it is not installed",
            "pip install -e '.[model]' (or drop --fuse: onnxruntime fuses the plain graph at load)",
        ) from None
    import onnx

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    opt = optimize_model(plain, model_type="bert", num_heads=geo.num_heads, hidden_size=geo.hidden_size, opt_level=0)
    stats = {k: int(v) for k, v in opt.get_fused_operator_statistics().items() if v}
    model = opt.model
    if any(n.domain == "com.microsoft" for n in model.graph.node) and not any(o.domain == "com.microsoft" for o in model.opset_import):
        # The fused ops live in onnxruntime's contrib domain; shape inference (and quantization) needs it declared.
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return model, stats


def quantize_int8(model_path: str | Path, out_path: str | Path) -> None:
    """Dynamic int8: int8 weights, and activations quantized at run time (uint8, per tensor).

    Per tensor means per call: the stage therefore runs int8 one pair per call, so a pair's
    activation scale is computed from that pair alone (see model.CrossEncoder.score). The head
    (pooler and classifier) stays fp32: one row per pair costs nothing, and it is the last
    projection before the score (measured: it narrows the fp32/int8 logit gap by ~20%).
    """
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(max(logging.getLogger().level, logging.ERROR))  # its pre-processing advice is noise here
    model = onnx.load(str(model_path), load_external_data=False)
    head = [n.name for n in model.graph.node if any(i.startswith(("bert.pooler.", "classifier.")) for i in n.input)]
    out_path = Path(out_path)
    fd, tmp = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    os.close(fd)
    try:
        quantize_dynamic(
            str(model_path),
            tmp,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Attention"],
            nodes_to_exclude=head,
            # Contrib ops (Attention, SkipLayerNormalization) defeat ONNX shape inference; their outputs are float.
            # Only weight matmuls: the attention's activation x activation products stay fp32.
            extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        os.replace(tmp, out_path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def import_checkpoint(
    src: str | Path, dst: str | Path, *, model_id: str | None = None, int8: bool = False, fuse: bool = False
) -> ImportReport:
    """Write DIR/model.onnx (+ model_int8.onnx with int8) from a checkpoint, or refuse and write nothing.

    `fuse` stores the graph after onnxruntime's offline transformer fusions (Attention,
    SkipLayerNormalization, BiasGelu). Off by default because it measured slower here: on this
    CPU the plain graph, fused by onnxruntime at load (BiasGelu, FusedMatMul, LayerNorm), ran
    K=32 about 12% faster in fp32 (kb rerank bench prints both).
    """
    t0 = time.perf_counter()
    src, dst = Path(src), Path(dst)
    if not src.is_dir():
        raise RerankUnavailable("model-missing", str(src), "is not a directory", "name the checkpoint directory (config.json, model.safetensors, tokenizer.json)")
    cfg = read_config(src / "config.json")
    geo = BertGeometry.from_config(cfg, str(src / "config.json"))
    archs = cfg.get("architectures") or ["BertForSequenceClassification"]
    if "BertForSequenceClassification" not in archs:
        raise RerankUnavailable("model-unreadable", str(src / "config.json"), f"architectures is {archs}, not BertForSequenceClassification", "import a cross-encoder checkpoint")
    weights_path = src / "model.safetensors"
    if not weights_path.is_file():
        raise RerankUnavailable("model-missing", str(weights_path), "not found", "export the checkpoint with safetensors (save_pretrained(safe_serialization=True))")
    w = load_weights(weights_path, geo)
    tokenizer = _tokenizer_json(src, cfg)
    model_id = model_id or cfg.get("kb_model_id") or cfg.get("_name_or_path") or src.resolve().name

    from .graph import build_bert_graph

    dst.mkdir(parents=True, exist_ok=True)
    probe = probe_batch(geo)
    want = reference_logits(w, geo, **probe)
    with tempfile.TemporaryDirectory(dir=dst, prefix=".import.") as tmp:
        plain = os.path.join(tmp, "plain.onnx")
        with open(plain, "wb") as f:
            f.write(build_bert_graph(w, geo, model_id).SerializeToString())
        fused: dict[str, int] = {}
        fused_path = plain
        if fuse:
            fused_model, fused = _optimize(plain, geo)
            fused_path = os.path.join(tmp, MODEL_FILE)
            with open(fused_path, "wb") as f:
                f.write(fused_model.SerializeToString())
        got = _run(fused_path, probe)
        diff = float(abs(got.astype("float64") - want).max())
        if not diff <= IMPORT_TOLERANCE:
            raise RerankUnavailable(
                "import-mismatch", str(src), f"the exported graph disagrees with the numpy reference by {diff:.2e} (> {IMPORT_TOLERANCE:g})",
                "report this checkpoint; nothing was written",
            )
        os.replace(fused_path, dst / MODEL_FILE)
    files = [MODEL_FILE, "tokenizer.json", "config.json"]
    write_atomic(dst / "tokenizer.json", tokenizer)
    out_cfg = dict(cfg, kb_model_id=model_id, kb_graph="fused" if fuse else "plain")
    write_atomic(dst / "config.json", json.dumps(out_cfg, indent=2, sort_keys=True) + "\n")
    int8_diff = None
    if int8:
        quantize_int8(dst / MODEL_FILE, dst / INT8_FILE)
        int8_diff = float(abs(_run(str(dst / INT8_FILE), probe).astype("float64") - want).max())
        files.append(INT8_FILE)
    return ImportReport(
        model_id=model_id, dir=str(dst), geometry=geo, max_abs_diff=diff, fused=fused,
        int8_max_abs_diff=int8_diff, seconds=time.perf_counter() - t0, files=tuple(files),
    )
