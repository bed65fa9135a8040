"""`fluency train-lm`: estimate the n-gram language model the `lm.v1` features query.

Raw text -> `read_corpus` (spaCy's sentence splitter and tokenizer, the ones the scorer uses) ->
one sentence a line, tokens separated by single spaces -> KenLM's `lmplz` (modified Kneser-Ney)
-> ARPA -> `build_binary` (trie, quantised) -> OUT/lm.binary, plus OUT/unigrams.tsv (the ARPA's
1-gram log10 probabilities, for SLOR) and OUT/card.json (corpus, hash, options, sizes, command).

Text is lower-cased by default, here and (read from the card) at query time: generated text is
often lower-cased (2,214 of the 2,230 WebNLG 2017 texts in ../shared/dev), and a cased model counts
every name there as unseen. Measured, Reuters order 5: OOV on webnlg2017 24.5% cased vs 14.8%
lower-cased, on novikova2017_bagel 6.7% vs 1.0%, Reuters test 2.0% vs 1.8%; real sentence beats
the same with one adjacent swap 94.5% vs 95.0% of the time. `--no-lowercase` keeps case.

`lmplz` and `build_binary` are training-time tools built by `training/gleu/build_lmplz.sh`; serving
needs only the `kenlm` Python module.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from features.resources import LM_CARD_FILE, LM_FILE, UNIGRAM_FILE
from scorer.errors import InputError, ModelLoadError

__all__ = ["add_commands", "find_tool", "read_unigrams_from_arpa", "train_lm"]

logger = logging.getLogger(__name__)

KENLM_BIN = (
    Path(
        os.environ.get("KENLM_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fluency-scorer/kenlm"
    )
    / "bin"
)


def find_tool(name: str) -> Path:
    """`lmplz` or `build_binary`: from $KENLM_BIN, the build cache, or PATH."""
    for folder in (os.environ.get("KENLM_BIN"), KENLM_BIN):
        if folder and (Path(folder) / name).is_file():
            return Path(folder) / name
    found = shutil.which(name)
    if found:
        return Path(found)
    raise ModelLoadError(
        f"KenLM's {name} is not built: run training/gleu/build_lmplz.sh (it builds {name} into "
        f"{KENLM_BIN}), or set KENLM_BIN to a folder holding it"
    )


def lm_line(tokens: Iterable[str], *, lowercase: bool = False) -> str:
    """The line KenLM sees for a sentence: stripped tokens, single spaces, no empty tokens."""
    words = [t.strip() for t in tokens]
    line = " ".join(w for w in words if w)
    return line.lower() if lowercase else line


def read_unigrams_from_arpa(arpa: Path) -> dict[str, float]:
    """The `\\1-grams:` section of an ARPA file: word -> log10 probability."""
    out: dict[str, float] = {}
    with arpa.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip() == "\\1-grams:":
                break
        for line in fh:
            line = line.rstrip("\n")
            if not line.strip():
                break
            fields = line.split("\t")
            out[fields[1]] = float(fields[0])
    if "<unk>" not in out:
        raise InputError(f"{arpa} has no 1-gram section with <unk>: not an lmplz ARPA file")
    return out


def _run(cmd: Sequence[str], stdin=None, stdout=subprocess.DEVNULL) -> None:
    logger.info("running %s", shlex.join(map(str, cmd)))
    done = subprocess.run(
        list(map(str, cmd)), stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, text=True
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-8:])
        raise InputError(f"{Path(cmd[0]).name} failed (exit {done.returncode}):\n{tail}")


def train_lm(
    sources: Sequence[str],
    out_dir: str | Path,
    *,
    order: int = 5,
    prune: Sequence[int] | None = None,
    lowercase: bool = True,
    quantise_bits: int = 8,
    memory: str = "10%",
    command: str = "",
    progress: bool = True,
) -> dict:
    """Estimate, binarise, write OUT/{lm.binary, unigrams.tsv, card.json}; return the card.

    `prune`: lmplz's count thresholds per order; None drops 3-grams and longer seen once (on
    Reuters, order 5: 6.7 MB binary, held-out mean log10 p -2.09 vs -2.14 for order 4 with
    bigram singletons pruned too).
    """
    from training.gleu.corpus import read_corpus

    if prune is None:
        prune = [0, 0] + [1] * (order - 2)
    if not 2 <= order <= 6:
        raise InputError(f"--order {order}: use 2 to 6 (the tools are built for up to 6)")
    if len(prune) > order:
        raise InputError(f"--prune has {len(prune)} thresholds for an order-{order} model")
    lmplz, build_binary = find_tool("lmplz"), find_tool("build_binary")
    # Long sentences are fine for an LM, unlike the parser-based features' training data.
    corpus = read_corpus(sources, min_tokens=1, max_tokens=250, progress=progress)
    lines = [lm_line(s, lowercase=lowercase) for s in corpus.sentences]
    lines = [line for line in lines if line]
    if not lines:
        raise InputError(f"no sentences in {', '.join(sources)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="train-lm-") as tmp:
        text, arpa = Path(tmp) / "corpus.txt", Path(tmp) / "lm.arpa"
        text.write_text("\n".join(lines) + "\n", encoding="utf-8")
        estimate = [lmplz, "-o", order, "-S", memory, "-T", tmp + "/", "--skip_symbols"]
        estimate += ["--discount_fallback"]  # small corpora lack counts for some discounts
        if any(prune):
            estimate += ["--prune", *prune]
        with text.open("rb") as fin, arpa.open("wb") as fout:
            _run(estimate, stdin=fin, stdout=fout)
        unigrams = read_unigrams_from_arpa(arpa)
        binarise = [build_binary, "-S", memory, "-T", tmp + "/"]
        if quantise_bits:
            binarise += ["-q", quantise_bits, "-b", quantise_bits]
        _run([*binarise, "trie", arpa, out / LM_FILE])
        arpa_bytes = arpa.stat().st_size
    with (out / UNIGRAM_FILE).open("w", encoding="utf-8") as fh:
        for word, logprob in unigrams.items():
            fh.write(f"{word}\t{logprob:.6f}\n")
    version_file = lmplz.parent / "VERSION"
    card = {
        "kind": "kenlm",
        "corpus": list(corpus.sources),
        "corpus_sha256": corpus.sha256,
        "n_sentences": len(lines),
        "n_tokens": sum(line.count(" ") + 1 for line in lines),
        "vocabulary": len(unigrams),
        "order": order,
        "prune": list(prune),
        "lowercase": lowercase,
        "smoothing": "modified Kneser-Ney (lmplz, --discount_fallback)",
        "binary": f"trie, {quantise_bits}-bit quantised" if quantise_bits else "trie",
        "arpa_bytes": arpa_bytes,
        "binary_bytes": (out / LM_FILE).stat().st_size,
        "lm_sha256": hashlib.sha256((out / LM_FILE).read_bytes()).hexdigest(),
        "kenlm_tools": version_file.read_text().strip() if version_file.is_file() else "unknown",
        "command": command,
        # NLTK corpora are found through NLTK_DATA: the command alone does not repeat the run.
        "nltk_data": os.environ.get("NLTK_DATA", ""),
    }
    (out / LM_CARD_FILE).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return card


# -- command line ---------------------------------------------------------------------------


def add_commands(subparsers) -> None:
    """`fluency train-lm`."""
    cmd = subparsers.add_parser(
        "train-lm",
        help="estimate the KenLM n-gram model the lm.v1 features query",
        description="Split and tokenise the corpus as the scorer does, estimate a modified "
        "Kneser-Ney model with KenLM's lmplz (built by training/gleu/build_lmplz.sh), write "
        "OUT/lm.binary, OUT/unigrams.tsv and OUT/card.json.",
    )
    cmd.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        help="text files, folders of .txt files, or NLTK corpus names (brown, reuters, ...)",
    )
    cmd.add_argument("--out", required=True, help="output folder, e.g. models/lm/NAME")
    cmd.add_argument("--order", type=int, default=5, help="n-gram order (3 to 5 is usual)")
    cmd.add_argument(
        "--prune",
        type=int,
        nargs="*",
        default=None,
        help="lmplz count thresholds per order: drop n-grams seen at most this often (the "
        "1-gram threshold must be 0); default 0 0 1 1 ... (singletons of order 3 and up); "
        "give the flag with no numbers to keep everything",
    )
    cmd.add_argument(
        "--lowercase",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="lower-case training text and (through the card) queries; default on",
    )
    cmd.add_argument("--bits", type=int, default=8, help="quantisation bits (0: none)")
    cmd.add_argument("--memory", default="10%", help="lmplz/build_binary sorting memory")
    cmd.set_defaults(func=cmd_train_lm)


def cmd_train_lm(args, config) -> int:
    if args.prune is None:
        args.prune = [0, 0] + [1] * (args.order - 2)
    card = train_lm(
        args.corpus,
        args.out,
        order=args.order,
        prune=args.prune,
        lowercase=args.lowercase,
        quantise_bits=args.bits,
        memory=args.memory,
        command=_command_line(args),
    )
    print(json.dumps(card))
    return 0


def _command_line(args) -> str:
    """The command that repeats this run, every option spelled out (for the card)."""
    cmd = ["fluency", "train-lm", "--corpus", *args.corpus, "--out", str(args.out)]
    cmd += ["--order", str(args.order), "--prune", *map(str, args.prune)]
    cmd += ["--bits", str(args.bits), "--memory", args.memory]
    return shlex.join(cmd + (["--lowercase"] if args.lowercase else ["--no-lowercase"]))
