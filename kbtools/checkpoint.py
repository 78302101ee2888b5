"""A Hugging Face BertForSequenceClassification checkpoint, read and checked with numpy.

Only the geometry this stage runs is accepted (absolute positions, erf GELU, a pooler and a
classifier head); anything else is refused by name rather than converted into a model
that is nearly right.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.stages.rerank.errors import RerankUnavailable
from .safetensors import read_safetensors


@dataclass(frozen=True)
class BertGeometry:
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    max_position: int
    type_vocab_size: int
    layer_norm_eps: float
    num_labels: int

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @classmethod
    def from_config(cls, cfg: dict[str, Any], where: str) -> "BertGeometry":
        def bad(what: str) -> RerankUnavailable:
            return RerankUnavailable(
                "model-unreadable", where, what, "import a BertForSequenceClassification checkpoint"
            )

        if cfg.get("model_type", "bert") != "bert":
            raise bad(f"model_type is {cfg.get('model_type')!r}, not 'bert'")
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise bad(f"hidden_act is {cfg.get('hidden_act')!r}; only the erf 'gelu' is built")
        if cfg.get("position_embedding_type", "absolute") != "absolute":
            raise bad(f"position_embedding_type is {cfg.get('position_embedding_type')!r}, not 'absolute'")
        try:
            geo = cls(
                vocab_size=int(cfg["vocab_size"]),
                hidden_size=int(cfg["hidden_size"]),
                num_layers=int(cfg["num_hidden_layers"]),
                num_heads=int(cfg["num_attention_heads"]),
                intermediate_size=int(cfg["intermediate_size"]),
                max_position=int(cfg.get("max_position_embeddings", 512)),
                type_vocab_size=int(cfg.get("type_vocab_size", 2)),
                layer_norm_eps=float(cfg.get("layer_norm_eps", 1e-12)),
                num_labels=int(cfg.get("num_labels") or len(cfg.get("id2label") or {0: "LABEL_0"})),
            )
        except KeyError as e:
            raise bad(f"config.json lacks {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            raise bad(f"config.json has a non-numeric geometry field ({e})") from None
        if geo.hidden_size % geo.num_heads:
            raise bad(f"hidden_size {geo.hidden_size} is not a multiple of num_attention_heads {geo.num_heads}")
        return geo


def read_config(path: Path) -> dict[str, Any]:
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RerankUnavailable("model-missing", str(path), "no config.json", "point at a checkpoint directory") from None
    except (OSError, ValueError) as e:
        raise RerankUnavailable("model-unreadable", str(path), f"not readable JSON ({e})", "repair or re-export config.json") from None
    if not isinstance(cfg, dict):
        raise RerankUnavailable("model-unreadable", str(path), "is not a JSON object", "repair or re-export config.json")
    return cfg


def _canonical(name: str) -> str:
    # Older checkpoints spell LayerNorm parameters gamma/beta; some drop the "bert." prefix.
    name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
    if not name.startswith(("bert.", "classifier.")):
        name = "bert." + name
    return name


def load_weights(path: Path, geo: BertGeometry) -> dict[str, Any]:
    """The checkpoint's tensors as float32, under canonical names, with every shape checked."""
    import numpy as np

    raw = read_safetensors(path)
    w = {_canonical(k): v for k, v in raw.items() if not k.endswith("position_ids")}
    H, I, L = geo.hidden_size, geo.intermediate_size, geo.num_labels
    want: dict[str, tuple[int, ...]] = {
        "bert.embeddings.word_embeddings.weight": (geo.vocab_size, H),
        "bert.embeddings.position_embeddings.weight": (geo.max_position, H),
        "bert.embeddings.token_type_embeddings.weight": (geo.type_vocab_size, H),
        "bert.embeddings.LayerNorm.weight": (H,),
        "bert.embeddings.LayerNorm.bias": (H,),
        "bert.pooler.dense.weight": (H, H),
        "bert.pooler.dense.bias": (H,),
        "classifier.weight": (L, H),
        "classifier.bias": (L,),
    }
    for i in range(geo.num_layers):
        p = f"bert.encoder.layer.{i}."
        for m in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            want[p + m + ".weight"] = (H, H)
            want[p + m + ".bias"] = (H,)
        want[p + "intermediate.dense.weight"] = (I, H)
        want[p + "intermediate.dense.bias"] = (I,)
        want[p + "output.dense.weight"] = (H, I)
        want[p + "output.dense.bias"] = (H,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            want[p + ln + ".weight"] = (H,)
            want[p + ln + ".bias"] = (H,)
    out: dict[str, Any] = {}
    for name, shape in want.items():
        if name not in w:
            raise RerankUnavailable("model-unreadable", str(path), f"lacks tensor {name}", "import a BertForSequenceClassification checkpoint")
        if tuple(w[name].shape) != shape:
            raise RerankUnavailable(
                "model-unreadable", str(path), f"tensor {name} has shape {list(w[name].shape)}, config says {list(shape)}",
                "use the config.json that came with these weights",
            )
        out[name] = np.asarray(w[name], dtype=np.float32)
    return out


def reference_logits(w: dict[str, Any], geo: BertGeometry, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
    """The forward pass in float64 numpy: the truth an exported graph is checked against."""
    import math

    import numpy as np

    erf = np.frompyfunc(math.erf, 1, 1)
    f = {k: v.astype(np.float64) for k, v in w.items()}
    B, S = input_ids.shape
    H, nh, hd = geo.hidden_size, geo.num_heads, geo.head_dim

    def ln(x: Any, name: str) -> Any:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + geo.layer_norm_eps) * f[name + ".weight"] + f[name + ".bias"]

    def lin(x: Any, name: str) -> Any:
        return x @ f[name + ".weight"].T + f[name + ".bias"]

    e = f["bert.embeddings.word_embeddings.weight"][input_ids]
    e = e + f["bert.embeddings.token_type_embeddings.weight"][token_type_ids]
    e = e + f["bert.embeddings.position_embeddings.weight"][np.arange(S)][None]
    x = ln(e, "bert.embeddings.LayerNorm")
    bias = (1.0 - attention_mask.astype(np.float64))[:, None, None, :] * -10000.0
    for i in range(geo.num_layers):
        p = f"bert.encoder.layer.{i}."
        q = lin(x, p + "attention.self.query").reshape(B, S, nh, hd).transpose(0, 2, 1, 3)
        k = lin(x, p + "attention.self.key").reshape(B, S, nh, hd).transpose(0, 2, 1, 3)
        v = lin(x, p + "attention.self.value").reshape(B, S, nh, hd).transpose(0, 2, 1, 3)
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        c = (s @ v).transpose(0, 2, 1, 3).reshape(B, S, H)
        x = ln(lin(c, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = lin(x, p + "intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / math.sqrt(2.0)).astype(np.float64))
        x = ln(lin(h, p + "output.dense") + x, p + "output.LayerNorm")
    pooled = np.tanh(lin(x[:, 0], "bert.pooler.dense"))
    return lin(pooled, "classifier")
