"""A BERT cross-encoder as an ONNX graph, built node by node with the `onnx` package.

The subgraphs are spelled the way a Hugging Face export spells them (MatMul+Add, the
Reshape/Transpose head split, Div by sqrt(d), the additive -10000 mask, erf GELU,
LayerNormalization after a residual Add) so onnxruntime's transformer optimizer recognises
them and fuses them into Attention, SkipLayerNormalization and BiasGelu.
"""

from __future__ import annotations

import math
from typing import Any

from .checkpoint import BertGeometry

OPSET = 17  # the first opset with LayerNormalization as one op


def build_bert_graph(w: dict[str, Any], geo: BertGeometry, model_id: str) -> Any:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    inits: list[Any] = []
    counter = [0]

    def const(name: str, arr: Any) -> str:
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        counter[0] += 1
        out = f"{op.lower()}_{counter[0]}"
        nodes.append(helper.make_node(op, inputs, [out], name=f"{op}_{counter[0]}", **attrs))
        return out

    def linear(x: str, name: str) -> str:
        wt = const(name + ".weight_T", w[name + ".weight"].T.copy())
        b = const(name + ".bias", w[name + ".bias"])
        return node("Add", [node("MatMul", [x, wt]), b])

    def layer_norm(x: str, name: str) -> str:
        g = const(name + ".weight", w[name + ".weight"])
        b = const(name + ".bias", w[name + ".bias"])
        return node("LayerNormalization", [x, g, b], axis=-1, epsilon=geo.layer_norm_eps)

    H, nh, hd = geo.hidden_size, geo.num_heads, geo.head_dim
    split_shape = const("split_heads_shape", np.array([0, 0, nh, hd], dtype=np.int64))
    merge_shape = const("merge_heads_shape", np.array([0, 0, H], dtype=np.int64))
    ax0 = const("axes_0", np.array([0], dtype=np.int64))
    ax1 = const("axes_1", np.array([1], dtype=np.int64))
    ax2 = const("axes_2", np.array([2], dtype=np.int64))

    # Embeddings: word + token type + position, then LayerNorm.
    word = node("Gather", [const("bert.embeddings.word_embeddings.weight", w["bert.embeddings.word_embeddings.weight"]), "input_ids"])
    typ = node("Gather", [const("bert.embeddings.token_type_embeddings.weight", w["bert.embeddings.token_type_embeddings.weight"]), "token_type_ids"])
    seq = node("Gather", [node("Shape", ["input_ids"]), const("one_scalar", np.array(1, dtype=np.int64))], axis=0)
    positions = node("Range", [const("zero_i64", np.array(0, dtype=np.int64)), seq, const("one_i64", np.array(1, dtype=np.int64))])
    pos = node("Gather", [const("bert.embeddings.position_embeddings.weight", w["bert.embeddings.position_embeddings.weight"]), node("Unsqueeze", [positions, ax0])])
    x = layer_norm(node("Add", [node("Add", [word, typ]), pos]), "bert.embeddings.LayerNorm")

    # The additive mask, [B, 1, 1, S]: 0 where attended, -10000 where padded (exp underflows to 0).
    m = node("Cast", [node("Unsqueeze", [node("Unsqueeze", ["attention_mask", ax1]), ax2])], to=TensorProto.FLOAT)
    mask = node("Mul", [node("Sub", [const("one_f32", np.array(1.0, dtype=np.float32)), m]), const("mask_fill", np.array(-10000.0, dtype=np.float32))])
    scale = const("sqrt_head_dim", np.array(math.sqrt(hd), dtype=np.float32))

    for i in range(geo.num_layers):
        p = f"bert.encoder.layer.{i}."
        q = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.query"), split_shape])], perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.key"), split_shape])], perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [linear(x, p + "attention.self.value"), split_shape])], perm=[0, 2, 1, 3])
        probs = node("Softmax", [node("Add", [node("Div", [node("MatMul", [q, k]), scale]), mask])], axis=-1)
        ctx = node("Reshape", [node("Transpose", [node("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge_shape])
        x = layer_norm(node("Add", [linear(ctx, p + "attention.output.dense"), x]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        erf = node("Erf", [node("Div", [h, const(f"sqrt2_{i}", np.array(math.sqrt(2.0), dtype=np.float32))])])
        gelu = node("Mul", [node("Mul", [h, node("Add", [erf, const(f"one_{i}", np.array(1.0, dtype=np.float32))])]), const(f"half_{i}", np.array(0.5, dtype=np.float32))])
        x = layer_norm(node("Add", [linear(gelu, p + "output.dense"), x]), p + "output.LayerNorm")

    first = node("Gather", [x, const("zero_scalar", np.array(0, dtype=np.int64))], axis=1)
    pooled = node("Tanh", [linear(first, "bert.pooler.dense")])
    logits = linear(pooled, "classifier")
    nodes.append(helper.make_node("Identity", [logits], ["logits"], name="logits"))

    ints = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", geo.num_labels])]
    graph = helper.make_graph(nodes, "bert_cross_encoder", ints, out, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="kb model import")
    model.ir_version = 8  # readable by every onnxruntime this project allows (>= 1.20)
    helper.set_model_props(model, {"model_id": model_id})
    onnx.checker.check_model(model)
    return model
