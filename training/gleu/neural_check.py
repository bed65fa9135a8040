"""Two exports of SmolLM2's graph compared on texts: what `fluency export-neural` builds from the
GGUF (training/gleu/onnx_llama) against the graph PyTorch traced from transformers' Llama
(training/gleu/neural_trace.py), the reference.

`reference_values` reads, from one export folder, each text's token ids, every token's
log-probability and its pooled states; `compare` gives the largest differences of two such
readings; `head_scores`, each neural head's scores with SmolLM2 run from a folder.

    python -m training.gleu.neural_check --built DIR --traced DIR [--per-file 12]

prints them for texts drawn from every file of ../shared/dev (tests/training/
gleu/test_neural_export.py checks the same, slow, on a fresh trace and build).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from pathlib import Path

__all__ = ["POOLED_LAYERS", "compare", "development_texts", "head_scores", "reference_values"]

POOLED_LAYERS = (8, 20)  # of the full graph's STATE_LAYERS, the ones compared and stored


def reference_values(folder: Path, texts: Sequence[str], device: str = "cpu") -> list[dict]:
    """For each text, from the graph and tokenizer in `folder` (one text a pass, as the
    extractor runs on the CPU): its token ids, each token's log-probability, and its states
    after each of `POOLED_LAYERS` averaged over its own tokens (float64 mean, kept float32).
    `device` "gpu": on ONNX Runtime's CUDA provider (onnxruntime-gpu)."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from features.resources import NEURAL_ONNX_CPU_FILE, NEURAL_ONNX_FILE
    from training.gleu.neural_export import STATE_LAYERS, TOKENIZER_FILE

    providers, options, graph = (
        ["CPUExecutionProvider"],
        ort.SessionOptions(),
        folder / NEURAL_ONNX_FILE,
    )
    if device == "gpu":
        providers.insert(0, "CUDAExecutionProvider")
        if providers[0] not in ort.get_available_providers():
            raise SystemExit("this onnxruntime has no CUDA provider: install onnxruntime-gpu")
    elif not graph.is_file():  # an export without --plain: its CPU form, as the extractor loads it
        graph = folder / NEURAL_ONNX_CPU_FILE
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(graph), options, providers=providers)
    tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
    out = []
    for text in texts:
        ids = tokenizer.encode(" ".join(text.split()), add_special_tokens=False).ids
        row = np.array([[1, *ids]], dtype=np.int64)
        logprobs, hidden = session.run(
            None, {"input_ids": row, "attention_mask": np.ones_like(row)}
        )
        pooled = {
            str(k): hidden[0, 1:, STATE_LAYERS.index(k)].astype(np.float64).mean(0)
            for k in POOLED_LAYERS
        }
        out.append(
            {
                "text": text,
                "ids": list(ids),
                "logprobs": logprobs[0].astype(float).tolist(),
                "pooled": {
                    k: v.astype(np.float32).astype(float).tolist() for k, v in pooled.items()
                },
            }
        )
    return out


def compare(found: Sequence[dict], expected: Sequence[dict]) -> dict[str, float]:
    """Of two `reference_values` readings of the same texts: the share of texts whose token ids
    agree, and the largest |difference| of a log-probability and of a pooled state (over the
    texts whose ids agree)."""
    import numpy as np

    diffs = {"ids_equal": 0.0, "logprob": 0.0, "pooled": 0.0}
    for a, b in zip(found, expected, strict=True):
        if a["ids"] != b["ids"]:
            continue
        diffs["ids_equal"] += 1 / len(expected)
        diffs["logprob"] = max(
            diffs["logprob"],
            float(np.abs(np.subtract(a["logprobs"], b["logprobs"])).max(initial=0)),
        )
        for k in b["pooled"]:
            d = float(np.abs(np.subtract(a["pooled"][k], b["pooled"][k])).max())
            diffs["pooled"] = max(diffs["pooled"], d)
    diffs["ids_equal"] = round(diffs["ids_equal"], 12)
    return diffs


def development_texts(folder: Path, per_file: int, seed: int = 0) -> list[str]:
    """`per_file` texts drawn from each development file (`*.jsonl`, every line a JSON object
    with `text`; empty and "null" outputs left out), with `random.Random(seed)`."""
    rng = random.Random(seed)
    texts = []
    for path in sorted(folder.glob("*.jsonl")):
        lines = [json.loads(line)["text"] for line in path.open(encoding="utf-8")]
        lines = [t for t in lines if t and t.strip() and t.strip() != "null"]
        texts += rng.sample(lines, min(per_file, len(lines)))
    return texts


def head_scores(folder: Path, texts: Sequence[str]) -> dict[str, list[float]]:
    """Each neural head's scores of the texts, SmolLM2 run from the graph in `folder`."""
    from scorer.scoring import load_scorer

    scorer = load_scorer("neural")
    scorer.resources.neural_onnx_dir = folder
    return {g: [s.score for s in scorer.score_texts(texts, genre=g)] for g in scorer.genres}


def main(argv: Sequence[str] | None = None) -> int:
    import numpy as np

    parser = argparse.ArgumentParser(
        prog="python -m training.gleu.neural_check", description=__doc__
    )
    parser.add_argument("--built", type=Path, required=True, help="export of fluency export-neural")
    parser.add_argument("--traced", type=Path, required=True, help="export traced by PyTorch")
    parser.add_argument("--dev", type=Path, default=Path("../shared/dev"))
    parser.add_argument("--per-file", type=int, default=12)
    parser.add_argument("--heads-every", type=int, default=4, help="head scores of every Nth text")
    parser.add_argument(
        "--device",
        choices=("cpu", "gpu"),
        default="cpu",
        help="where the built graph runs (its head scores: as FLUENCY_DEVICE says); the traced "
        "graph runs on the CPU",
    )
    args = parser.parse_args(argv)
    texts = development_texts(args.dev, args.per_file)
    built = reference_values(args.built, texts, args.device)
    diffs = compare(built, reference_values(args.traced, texts))
    print(f"{len(texts)} development texts ({args.per_file} a file, seed 0): {json.dumps(diffs)}")
    some = texts[:: args.heads_every]
    built, traced = head_scores(args.built, some), head_scores(args.traced, some)
    for genre in traced:
        d = float(np.abs(np.subtract(built[genre], traced[genre])).max())
        print(f"head {genre}: largest |score difference| over {len(some)} texts {d:g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
