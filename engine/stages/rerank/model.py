"""The cross-encoder on disk and in memory: an onnxruntime session plus the model's own tokenizer.

Loaded lazily, once per (directory, precision); the load is timed and reported apart from the
scoring wall. Nothing here downloads anything: a directory either holds the model or is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from . import PRECISIONS  # defined at the package's front door, read without the stage
from .errors import RerankCallerError, RerankUnavailable
from .rule import RERANK_TEXT_CAP_TOKENS

# Threads for one forward pass; 0 lets onnxruntime use one per physical core.
THREADS_ENV = "KB_RERANK_THREADS"
# "1" lets onnxruntime's worker threads spin between operators (see CrossEncoder.__init__).
SPIN_ENV = "KB_RERANK_SPIN"


@dataclass(frozen=True)
class Pair:
    """One (question, row text) pair, tokenised and ready for the model."""

    ids: tuple[int, ...]
    type_ids: tuple[int, ...]
    capped: bool  # the row text was longer than the 128-token cap and was cut

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class ModelInfo:
    model_id: str
    dir: str
    precision: str
    weights_sha256: str  # of the ONNX file actually loaded: the numbers come from it
    load_ms: float
    threads: int


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def model_id_of(model_dir: Path, cfg: dict[str, Any]) -> str:
    return str(cfg.get("kb_model_id") or cfg.get("_name_or_path") or model_dir.resolve().name)


class CrossEncoder:
    """One loaded cross-encoder. Thread-safe: onnxruntime sessions may be run concurrently."""

    def __init__(
        self, model_dir: str | os.PathLike[str], precision: str = "fp32", threads: int | None = None, *, spin: bool | None = None
    ) -> None:
        if precision not in PRECISIONS:
            raise RerankCallerError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
        self.dir = Path(model_dir)
        self.precision = precision
        if threads is None:
            env = os.environ.get(THREADS_ENV, "").strip()
            try:
                threads = int(env) if env else 0
            except ValueError:
                raise RerankCallerError(f"{THREADS_ENV}={env!r} is not an integer") from None
        self.threads = threads
        # Two thread-pool modes. Spinning workers win on an idle box and lose badly on a busy one;
        # not spinning, work split in dynamic blocks (session.dynamic_block_base) so a preempted
        # thread does not hold the others up. Measured here, K=32 at 30-word rows, 2 threads,
        # interleaved: idle, spin 108 ms vs 118 (fp32) and 63 vs 96 (int8); 2 cores busy with
        # other work, 387 vs 195 and 244 vs 119. Not spinning by default: the budget is judged
        # on the p95 of the slowest host, and busy is the slow case. KB_RERANK_SPIN=1 opts in.
        self.spin = spin if spin is not None else os.environ.get(SPIN_ENV, "").strip() == "1"
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self.info: ModelInfo | None = None

    # -- loading -----------------------------------------------------------------------------

    def _refuse(self, reason: str, path: Path, detail: str, cure: str) -> RerankUnavailable:
        return RerankUnavailable(reason, str(path), detail, cure)

    def load(self) -> ModelInfo:
        """Pay the one-time load (session, tokenizer, digest); later calls return at once."""
        with self._lock:
            if self.info is not None:
                return self.info
            t0 = time.perf_counter()
            if not self.dir.is_dir():
                raise self._refuse("model-missing", self.dir, "no such model directory", "kb model import SRC DIR, then name DIR")
            onnx_path = self.dir / PRECISIONS[self.precision]
            tok_path = self.dir / "tokenizer.json"
            cfg_path = self.dir / "config.json"
            if not onnx_path.is_file():
                cure = "kb model import SRC DIR --int8" if self.precision == "int8" else "kb model import SRC DIR"
                reason = "precision-missing" if self.precision == "int8" else "model-missing"
                raise self._refuse(reason, onnx_path, "not found", cure)
            for p in (tok_path, cfg_path):
                if not p.is_file():
                    raise self._refuse("model-missing", p, "not found", "kb model import SRC DIR")
            try:
                cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise self._refuse("model-unreadable", cfg_path, f"not readable JSON ({e})", "kb model import SRC DIR") from None
            import onnxruntime as ort
            from tokenizers import Tokenizer

            try:
                tok = Tokenizer.from_file(str(tok_path))
            except Exception as e:  # tokenizers raises a bare Exception on a malformed file
                raise self._refuse("model-unreadable", tok_path, f"not a tokenizers file ({e})", "kb model import SRC DIR") from None
            tok.no_truncation()  # the stage cuts text itself: 128 tokens per row, then the model window
            tok.no_padding()
            so = self._session_options(ort)
            try:
                sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
            except Exception as e:  # onnxruntime's load errors share no useful base class
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise self._refuse("model-unreadable", onnx_path, f"onnxruntime cannot load it ({first})", "kb model import SRC DIR") from None
            names = {i.name for i in sess.get_inputs()}
            if not {"input_ids", "attention_mask"} <= names:
                raise self._refuse("model-unreadable", onnx_path, f"inputs are {sorted(names)}, not a BERT cross-encoder's", "kb model import SRC DIR")
            out_shape = sess.get_outputs()[0].shape
            if len(out_shape) == 2 and isinstance(out_shape[1], int) and out_shape[1] != 1:
                raise self._refuse("model-unreadable", onnx_path, f"emits {out_shape[1]} logits per pair; a cross-encoder emits one", "import a single-label cross-encoder")
            self._inputs = names
            self._max_len = int(min(cfg.get("max_position_embeddings", 512), 512))
            self._specials = tok.num_special_tokens_to_add(is_pair=True)
            self._session, self._tokenizer = sess, tok
            digest = _sha256(onnx_path)
            self.info = ModelInfo(
                model_id=model_id_of(self.dir, cfg), dir=str(self.dir), precision=self.precision,
                weights_sha256=digest, load_ms=(time.perf_counter() - t0) * 1000.0, threads=self.threads,
            )
            return self.info

    def _session_options(self, ort: Any) -> Any:
        """onnxruntime's options for this model: all graph optimisations, `threads` threads, one
        op at a time, spinning only when asked for."""
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spin else "0")
        if not self.spin:
            so.add_session_config_entry("session.dynamic_block_base", "4")
        so.log_severity_level = 3
        return so

    @property
    def loaded(self) -> bool:
        return self.info is not None

    # -- text --------------------------------------------------------------------------------

    def question_ids(self, question: str) -> Any:
        self.load()
        return self._tokenizer.encode(question, add_special_tokens=False)

    def pairs(self, question_enc: Any, texts: Sequence[str]) -> list[Pair]:
        """Each text cut to its first 128 tokens, then [CLS] q [SEP] text [SEP] within the window."""
        self.load()
        tok = self._tokenizer
        docs = tok.encode_batch(list(texts), add_special_tokens=False)
        out = []
        for d in docs:
            capped = len(d.ids) > RERANK_TEXT_CAP_TOKENS
            d_len = min(len(d.ids), RERANK_TEXT_CAP_TOKENS)
            q_len = len(question_enc.ids)
            room = self._max_len - self._specials
            # The model's own window, longest first: only a very long question reaches it.
            while q_len + d_len > room:
                if q_len >= d_len:
                    q_len -= 1
                else:
                    d_len -= 1
            q = _cut(question_enc, q_len)
            dd = _cut(d, d_len)
            enc = tok.post_process(q, dd, add_special_tokens=True)
            out.append(Pair(ids=tuple(enc.ids), type_ids=tuple(enc.type_ids), capped=capped))
        return out

    # -- scoring -----------------------------------------------------------------------------

    def score(self, pairs: Sequence[Pair]) -> list[float]:
        """Logits for `pairs`, each a function of its own pair alone.

        fp32 runs the pairs as one batch padded to the longest of them (attention masks the
        padding; only float blocking can differ, ~1e-6). int8 runs one pair per call: dynamic
        quantization takes its activation scale over the whole input tensor, so batching would
        let a pair's companions and padding move its score.
        """
        if not pairs:
            return []
        self.load()
        if self.precision == "int8":
            return [self._run([p])[0] for p in pairs]
        return self._run(pairs)

    def _run(self, pairs: Sequence[Pair]) -> list[float]:
        import numpy as np

        n = max(len(p) for p in pairs)
        ids = np.zeros((len(pairs), n), dtype=np.int64)
        types = np.zeros_like(ids)
        mask = np.zeros_like(ids)
        for i, p in enumerate(pairs):
            ids[i, : len(p)] = p.ids
            types[i, : len(p)] = p.type_ids
            mask[i, : len(p)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = types
        logits = self._session.run(None, feeds)[0]
        return [float(x) for x in np.asarray(logits, dtype=np.float32).reshape(len(pairs), -1)[:, 0]]


def _cut(enc: Any, n: int) -> Any:
    if len(enc.ids) > n:
        enc.truncate(n)
    return enc
