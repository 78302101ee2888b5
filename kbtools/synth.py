"""Generated cross-encoders for tests and the benchmark: real BERT graphs, weights from numpy.

Weights do not change what a forward pass costs, so generated weights are honest for timing;
and a WordPiece trained here with `tokenizers` means nothing is ever downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from engine.notes.atomic import write_atomic
from .safetensors import write_safetensors

# The public ms-marco-MiniLM-L-6-v2 geometry: what the benchmark must be measured at.
MINILM_L6 = {
    "vocab_size": 30522,
    "hidden_size": 384,
    "num_hidden_layers": 6,
    "num_attention_heads": 12,
    "intermediate_size": 1536,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}
# Small enough that a test imports and scores in well under a second on two cores.
TINY = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "max_position_embeddings": 512,
    "type_vocab_size": 2,
}

CORPUS = """\
Deploy checklist. Exists to: decide whether a build may go to production. Run the smoke tests,
check the migration plan, confirm the rollback path and page the owner before the release window.
Hooks. Exists to: say who decides what runs before a commit. The pre-commit hook formats the code,
the pre-push hook runs the fast tests, and the reviewer decides whether a slow test may be skipped.
Incident review. Exists to: keep the timeline of an outage honest. Write what was seen, when it was
seen, who acted, and which alarm should have fired earlier; never write who was to blame.
Pricing notes. Exists to: remember what we decided about pricing. The team plan is billed per seat,
the annual discount is two months, and a refund within thirty days needs no reason.
Embedding spaces. Exists to: record which model produced which vectors. A store embedded by one model
must never be searched with another; the re-embed ceremony rewrites every vector and the stamp.
Reading list. Exists to: hand a reader the passages that answer the question, in the order a person
would want them: the note that decides first, the background after, the history last.
Cross encoder. Exists to: read the question and the passage together and say how well one answers
the other. It is slower than the keyword ranking, so it only re-orders the short list at the top.
Tokenizer. Exists to: cut text into the word pieces a model was trained on; a wrong vocabulary turns
every sentence into unknown tokens and every score into noise.
Backups. Exists to: make sure a lost disk loses nothing. Snapshots run nightly, are kept for ninety
days, and a restore is rehearsed every month on a spare machine.
On call. Exists to: say who answers the pager this week, how to hand over, and when to escalate to
the owner of the failing service rather than patching it yourself at night.
"""


def corpus_words(text: str = CORPUS) -> list[str]:
    return text.split()


def train_wordpiece(texts: Iterable[str], vocab_size: int = 400) -> Any:
    """A BERT-style WordPiece (lower-cased, [CLS] A [SEP] B [SEP]) trained on `texts`."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials, min_frequency=1, show_progress=False)
    tok.train_from_iterator(list(texts), trainer=trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tok


def bert_weights(geo: dict[str, Any], seed: int = 0, num_labels: int = 1) -> dict[str, Any]:
    """Weights at 1/sqrt(fan_in), so activations stay O(1) and logits spread across pairs."""
    import numpy as np

    rng = np.random.default_rng(seed)
    H, I, V = geo["hidden_size"], geo["intermediate_size"], geo["vocab_size"]

    def lin(out: int, inp: int) -> tuple[Any, Any]:
        return (rng.standard_normal((out, inp), dtype=np.float32) / np.sqrt(inp)).astype(np.float32), (
            rng.standard_normal(out, dtype=np.float32) * 0.02
        ).astype(np.float32)

    def ln() -> tuple[Any, Any]:
        return (1.0 + 0.1 * rng.standard_normal(H)).astype(np.float32), (0.02 * rng.standard_normal(H)).astype(np.float32)

    w: dict[str, Any] = {}
    w["bert.embeddings.word_embeddings.weight"] = rng.standard_normal((V, H), dtype=np.float32)
    w["bert.embeddings.position_embeddings.weight"] = 0.5 * rng.standard_normal((geo["max_position_embeddings"], H), dtype=np.float32)
    w["bert.embeddings.token_type_embeddings.weight"] = 0.5 * rng.standard_normal((geo["type_vocab_size"], H), dtype=np.float32)
    w["bert.embeddings.LayerNorm.weight"], w["bert.embeddings.LayerNorm.bias"] = ln()
    for i in range(geo["num_hidden_layers"]):
        p = f"bert.encoder.layer.{i}."
        for m in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            w[p + m + ".weight"], w[p + m + ".bias"] = lin(H, H)
        w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"] = lin(I, H)
        w[p + "output.dense.weight"], w[p + "output.dense.bias"] = lin(H, I)
        w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"] = ln()
        w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"] = ln()
    w["bert.pooler.dense.weight"], w["bert.pooler.dense.bias"] = lin(H, H)
    cw, cb = lin(num_labels, H)
    w["classifier.weight"], w["classifier.bias"] = 3.0 * cw, cb  # a wider logit range: fewer accidental ties
    return w


def write_checkpoint(dst: str | Path, geo: dict[str, Any], tokenizer: Any, *, seed: int = 0, name: str = "kb-test/tiny-cross-encoder") -> Path:
    """A Hugging Face-shaped checkpoint directory: config.json, model.safetensors, tokenizer.json."""
    dst = Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    geo = dict(geo)
    geo.setdefault("vocab_size", tokenizer.get_vocab_size())
    cfg = {
        "_name_or_path": name,
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "position_embedding_type": "absolute",
        "layer_norm_eps": 1e-12,
        "id2label": {"0": "LABEL_0"},
        "label2id": {"LABEL_0": 0},
        **geo,
    }
    write_atomic(dst / "config.json", json.dumps(cfg, indent=2) + "\n")
    write_safetensors(dst / "model.safetensors", bert_weights(geo, seed=seed))
    write_atomic(dst / "tokenizer.json", tokenizer.to_str())
    return dst


def build_tiny_model(
    workdir: str | Path, *, seed: int = 0, int8: bool = False, name: str = "kb-test/tiny-cross-encoder",
    corpus: Iterable[str] | None = None,
) -> Path:
    """Train a WordPiece (on `corpus`, else CORPUS), generate a tiny BERT, and import it."""
    from .importer import import_checkpoint

    workdir = Path(workdir)
    tok = train_wordpiece(list(corpus) if corpus is not None else [CORPUS], vocab_size=300)
    src = write_checkpoint(workdir / f"src-{seed}", TINY, tok, seed=seed, name=name)
    out = workdir / f"model-{seed}"
    import_checkpoint(src, out, int8=int8)
    return out
