"""The rerank stage's pieces of the `kb` command line (rows of engine/cli's verb table).

    kb route QUESTION PATH --rerank [--rerank-model DIR] [--rerank-precision int8] [--rerank-summary]
    kb model import SRC DIR [--id ID] [--int8] [--fuse]
    kb rerank restamp PATH [--rerank-model DIR] [--rerank-precision int8]
    kb rerank bench [--runs N] [--threads N] [--workdir DIR] [--json]
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..notes.fleet import discover
from ..stages.rerank import PRECISIONS
from . import add_paths

if TYPE_CHECKING:
    import argparse  # annotations only

# The stage itself (engine/stages/rerank's reading and stage modules) is imported by the handlers
# that run it: `kb route` parses these options on every prompt of a hook and reranks rarely.


def add_route_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("cross-encoder rerank (re-orders the reading list only; off by default)")
    g.add_argument("--rerank", action="store_true", help="re-score the head of the reading list with the cross-encoder")
    _model_options(g)
    g.add_argument("--rerank-summary", action="store_true", help="score a note on its `Exists to:` line when it has one")


def _model_options(g: Any) -> None:
    g.add_argument("--rerank-model", metavar="DIR", help="the cross-encoder directory (else $KB_RERANK_MODEL, else fleet.txt rerank_model)")
    g.add_argument("--rerank-precision", choices=sorted(PRECISIONS), default="fp32", help="fp32 (default) or int8, by name")


def route_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Memory.ask keywords; empty without --rerank, so the plain route is byte-identical."""
    if not getattr(args, "rerank", False):
        named = [o for o, v in (("--rerank-model", getattr(args, "rerank_model", None)),
                                ("--rerank-summary", getattr(args, "rerank_summary", False)),
                                ("--rerank-precision", getattr(args, "rerank_precision", "fp32") != "fp32")) if v]
        if named:
            from ..stages.rerank.errors import RerankCallerError

            raise RerankCallerError(f"{', '.join(named)} given without --rerank; add --rerank to run the stage")
        return {}
    from ..stages.rerank.reading import RerankRequest

    return {"rerank": RerankRequest(model=args.rerank_model, precision=args.rerank_precision, use_summary=args.rerank_summary)}


def add_model(subparsers: Any) -> None:
    """Add `kb model import` (the importer itself is tooling: kbtools/importer.py)."""
    model = subparsers.add_parser("model", help="cross-encoder models for the rerank stage")
    msub = model.add_subparsers(dest="model_command", metavar="COMMAND", required=True)
    imp = msub.add_parser("import", help="convert a Hugging Face BertForSequenceClassification checkpoint (no torch)")
    imp.add_argument("src", metavar="SRC", help="config.json, model.safetensors, tokenizer.json (or vocab.txt)")
    imp.add_argument("dst", metavar="DIR", help="where model.onnx, tokenizer.json and config.json are written")
    imp.add_argument("--id", dest="model_id", metavar="ID", help="the model id stamped on bases (default: the checkpoint's name)")
    imp.add_argument("--int8", action="store_true", help="also write model_int8.onnx (dynamic int8, activations quantized per pair)")
    imp.add_argument("--fuse", action="store_true", help="store the graph after onnxruntime's offline BERT fusions (measured slower here)")
    imp.set_defaults(func=cmd_model_import)


def add_rerank(subparsers: Any) -> None:
    """Add `kb rerank restamp|bench` (the benchmark is tooling: kbtools/rerank_bench.py)."""
    rr = subparsers.add_parser("rerank", help="the cross-encoder rerank stage's stamp and benchmark")
    rsub = rr.add_subparsers(dest="rerank_command", metavar="COMMAND", required=True)
    rs = rsub.add_parser("restamp", help="stamp each base with the loaded cross-encoder (future orders differ from past ones)")
    add_paths(rs, many=False)
    _model_options(rs)
    rs.add_argument("--json", action="store_true", help="print the stamps written as JSON")
    rs.set_defaults(func=cmd_restamp)
    bench = rsub.add_parser("bench", help="per-pair ms and walls at the MiniLM-L6 geometry, fp32 and int8 (prints, asserts nothing)")
    bench.add_argument("--runs", type=int, default=7, metavar="N", help="timed runs per cell after one discarded (default 7)")
    bench.add_argument("--threads", type=int, default=None, metavar="N", help="onnxruntime intra-op threads (default: onnxruntime's)")
    bench.add_argument("--workdir", metavar="DIR", help="where the generated model is built and kept (default: a temp dir)")
    bench.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    bench.set_defaults(func=cmd_bench)


def cmd_model_import(args: argparse.Namespace) -> int:
    from kbtools.importer import import_checkpoint  # tooling, and it loads numpy and onnx

    rep = import_checkpoint(args.src, args.dst, model_id=args.model_id, int8=args.int8, fuse=args.fuse)
    fused = ("fused " + ", ".join(f"{k} {v}" for k, v in sorted(rep.fused.items()))) if args.fuse else "plain graph (onnxruntime fuses at load)"
    g = rep.geometry
    print(f"imported {rep.model_id} into {rep.dir}: {g.num_layers} layers, hidden {g.hidden_size}, {g.num_heads} heads, "
          f"vocab {g.vocab_size}; {fused}; max |onnxruntime - numpy| {rep.max_abs_diff:.1e}"
          + (f"; int8 written (max |int8 - numpy| {rep.int8_max_abs_diff:.3f})" if rep.int8_max_abs_diff is not None else "")
          + f" [{rep.seconds:.1f}s]")
    return 0


def cmd_restamp(args: argparse.Namespace) -> int:
    from ..stages.rerank.reading import RerankRequest, model_dir_for
    from ..stages.rerank.stage import restamp

    fleet = discover([args.path])
    model_dir = model_dir_for(fleet.settings, fleet.root, RerankRequest(model=args.rerank_model, precision=args.rerank_precision))
    stamps = {b.name: restamp(b.root, model_dir, args.rerank_precision) for b in fleet.bases}
    if args.json:
        print(json.dumps(stamps, indent=2, sort_keys=True))
    else:
        for b in fleet.bases:
            s = stamps[b.name]
            print(f"restamped {b.root}/.kb/rerank-stamp.json: {s['model']} {s['precision']} ({s['weights_sha256'][:12]}); "
                  "this base's reranked orders now follow this model, and the score cache is cleared")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from kbtools.rerank_bench import run  # tooling, and it loads onnxruntime

    res = run(workdir=args.workdir, runs=max(1, args.runs), threads=args.threads)
    if args.json:
        print(json.dumps(res, sort_keys=True))
    return 0
