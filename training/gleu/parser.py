"""Train the benepar constituency parser that `features/constituency.py` reads (the treebank
it is trained and scored on: `training.gleu.treebank`).

No pretrained benepar model can be downloaded here, so we train one: benepar's own model
(`ChartParser`: character LSTM, partitioned transformer encoder, span classifier, CKY decoding)
with our loop, on a Penn Treebank sample read by NLTK. The loop follows benepar's `main.py`
(Adam with betas (0.9, 0.98), linear warm-up, halving the rate when dev F1 stalls, keeping the
best dev checkpoint), with a model sized for a CPU and a wall-clock budget instead of epochs.

The split is by position: the last `n_dev` trees (the last files of the WSJ sample) are dev,
the rest train; 3,914 trees give 3,514 / 400.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from features.constituency import ParserInput, benepar_modules, save_parser
from scorer.errors import InputError
from training.gleu.treebank import (
    BracketScore,
    bracket_score,
    read_treebank,
    split_treebank,
    treebank_hash,
)

__all__ = ["HPARAMS", "TrainResult", "add_commands", "build_parser", "train_parser"]

logger = logging.getLogger(__name__)

# benepar 0.2.0 `main.make_hparams()`, changed where marked: its defaults fine-tune BERT on a
# GPU (or train a 1024-wide, 8-layer encoder); ours must train on one CPU thread in minutes
# and ship in a few MB.
HPARAMS: dict[str, Any] = {
    "batch_size": 32,
    # benepar: 5e-5 (BERT fine-tuning); 8e-4 in its from-scratch era. 0.003 reaches the best dev
    # F1 in 30 minutes on one thread (docs/model.md, "The constituency parser").
    "learning_rate": 0.003,
    "learning_rate_warmup_steps": 160,
    "clip_grad_norm": 0.0,
    "checks_per_epoch": 2,  # benepar: 4; a dev pass (400 trees) costs about 2 s here
    "step_decay_factor": 0.5,
    "step_decay_patience": 3,  # benepar: 5 (checks), for runs of hundreds of epochs
    "use_chars_lstm": True,  # benepar default False: no pretrained encoder here
    "d_char_emb": 32,  # benepar: 64
    "char_lstm_input_dropout": 0.2,
    "use_pretrained": False,
    "pretrained_model": "",
    "use_encoder": True,
    # About 0.6 s a step of 32 trees on one thread (d_model 256: 2.4 s, measured side by
    # side): the shipped run made 28.5 epochs in 33 minutes (models/benepar/card.json);
    # on 3,514 trees, epochs matter more than width.
    "d_model": 128,  # benepar: 1024
    "num_layers": 2,  # benepar: 8
    "num_heads": 8,
    "d_kv": 16,  # benepar: 64
    "d_ff": 256,  # benepar: 2048
    "encoder_max_len": 512,
    "morpho_emb_dropout": 0.2,
    "attention_dropout": 0.2,
    "relu_dropout": 0.1,
    "residual_dropout": 0.2,
    "predict_tags": False,  # we need trees, not tags (spaCy tags already)
    "d_label_hidden": 128,  # benepar: 256
    "d_tag_hidden": 256,
    "tag_loss_scale": 5.0,
}
SUBBATCH_MAX_TOKENS = 2000  # benepar's default; bounds memory, not the gradient


# -- reading --------------------------------------------------------------------------------


def _input(tree, *, gold: bool = True) -> ParserInput:
    words = tuple(benepar_modules().ptb_unescape.ptb_unescape(tree.leaves()))
    return ParserInput(words, tree if gold else None)


# -- scoring --------------------------------------------------------------------------------


def evaluate(parser, trees: Sequence) -> BracketScore:
    predicted = parser.parse(
        [_input(t, gold=False) for t in trees], subbatch_max_tokens=SUBBATCH_MAX_TOKENS
    )
    return bracket_score(trees, predicted)


# -- training -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainResult:
    path: str
    dev_f1: float  # of the saved (float16) checkpoint
    dev_precision: float
    dev_recall: float
    n_train: int
    n_dev: int
    steps: int
    epochs: float
    minutes: float
    seed: int


def build_parser(train: Sequence, hparams: Mapping[str, Any]):
    """A fresh ChartParser whose vocabularies (labels, characters) come from `train`."""
    bp = benepar_modules()
    hp = dict(hparams)
    hp["force_root_constituent"] = bp.decode_chart.ChartDecoder.infer_force_root_constituent(train)
    tags = sorted({tag for tree in train for _, tag in tree.pos()})
    return bp.parse_chart.ChartParser(
        tag_vocab={t: i for i, t in enumerate(["UNK", *tags])},
        label_vocab=bp.decode_chart.ChartDecoder.build_vocab(train),
        char_vocab=bp.char_lstm.RetokenizerForCharLSTM.build_vocab(
            [_input(t).words for t in train]
        ),
        hparams=bp.nkutil.HParams(**hp),
    )


def train_parser(
    train: Sequence,
    dev: Sequence,
    out_dir: str | Path,
    *,
    minutes: float = 25.0,
    seed: int = 12345,
    hparams: Mapping[str, Any] | None = None,
    max_steps: int | None = None,
    source: str = "",
    command: str = "",
    progress: bool = True,
    init: str | Path | None = None,
) -> TrainResult:
    """Train until `minutes` of wall time (or `max_steps`) are spent, checking dev F1 every
    1/checks_per_epoch epoch; write the best checkpoint as `out_dir/parser.pt` with
    `out_dir/card.json`. Uses the torch thread count the caller set.

    `init`: start from the weights of a checkpoint `save_parser` wrote (a run cut short by its
    time budget goes on where it stopped; the optimiser's state starts afresh). Its
    vocabularies and sizes must be the ones this treebank and `hparams` give."""
    import numpy as np
    import torch
    from tqdm import tqdm

    hp = {**HPARAMS, **(hparams or {})}
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    parser = build_parser(train, hp)
    if init is not None:
        from features.constituency import load_parser

        start_from = load_parser(init)
        if start_from.config["label_vocab"] != parser.config["label_vocab"] or (
            start_from.config["char_vocab"] != parser.config["char_vocab"]
        ):
            raise InputError(f"{init} was trained on another treebank split: vocabularies differ")
        try:
            parser.load_state_dict(start_from.state_dict())
        except RuntimeError as exc:
            raise InputError(f"{init} does not match these hyperparameters: {exc}") from exc
    parser.train()
    params = [p for p in parser.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=hp["learning_rate"], betas=(0.9, 0.98), eps=1e-9)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, mode="max", factor=hp["step_decay_factor"], patience=hp["step_decay_patience"]
    )
    examples = [_input(t) for t in train]
    check_every = max(1, math.ceil(len(train) / hp["batch_size"] / hp["checks_per_epoch"]))
    clip = hp["clip_grad_norm"] or math.inf
    out_dir = Path(out_dir)
    path = out_dir / "parser.pt"
    best_f1, steps, n_seen, start = -1.0, 0, 0, time.monotonic()
    logger.info("training on %d trees, dev %d; %s", len(train), len(dev), hp)
    bar = tqdm(
        total=max_steps, desc="training parser", unit="step", mininterval=2, disable=not progress
    )
    best_state = copy.deepcopy(parser.state_dict())

    def out_of_budget() -> bool:
        over = time.monotonic() - start > 60 * minutes
        return over or (max_steps is not None and steps >= max_steps)

    while not out_of_budget():
        order = rng.permutation(len(examples))
        for first in range(0, len(order), hp["batch_size"]):
            batch = [examples[i] for i in order[first : first + hp["batch_size"]]]
            loss = _step(parser, optimizer, batch, steps, hp, params, clip)
            steps += 1
            n_seen += len(batch)
            bar.update()
            bar.set_postfix(loss=f"{loss:.3f}", best_dev_f1=f"{best_f1:.2f}")
            done = out_of_budget()
            if steps % check_every == 0 or done:
                score = evaluate(parser, dev)
                parser.train()
                logger.info(
                    "step %d (%.1f epochs, %.1f min): dev F1 %.2f (P %.2f R %.2f)",
                    steps,
                    n_seen / len(train),
                    (time.monotonic() - start) / 60,
                    score.f1,
                    score.precision,
                    score.recall,
                )
                if steps > hp["learning_rate_warmup_steps"]:
                    plateau.step(score.f1)
                if score.f1 > best_f1:
                    best_f1 = score.f1
                    best_state = copy.deepcopy(parser.state_dict())
                    save_parser(parser, path)  # so an interrupted run still leaves its best
            if done:
                break
    bar.close()
    elapsed = (time.monotonic() - start) / 60
    parser.load_state_dict(best_state)
    save_parser(parser, path)
    from features.constituency import load_parser

    final = evaluate(load_parser(path), dev)  # what ships: the float16 checkpoint
    result = TrainResult(
        str(path),
        round(final.f1, 2),
        round(final.precision, 2),
        round(final.recall, 2),
        len(train),
        len(dev),
        steps,
        round(n_seen / len(train), 2),
        round(elapsed, 2),
        seed,
    )
    _write_card(out_dir, result, hp, train, dev, best_f1, source, path, command)
    return result


def _step(parser, optimizer, batch, step: int, hp: Mapping[str, Any], params, clip) -> float:
    import torch

    if step < hp["learning_rate_warmup_steps"]:
        for group in optimizer.param_groups:
            group["lr"] = hp["learning_rate"] * (step + 1) / hp["learning_rate_warmup_steps"]
    optimizer.zero_grad()
    total = 0.0
    for _, subbatch in parser.encode_and_collate_subbatches(batch, SUBBATCH_MAX_TOKENS):
        loss = parser.compute_loss(subbatch)
        total += loss.item()
        if loss.item() > 0:
            loss.backward()
    torch.nn.utils.clip_grad_norm_(params, clip)
    optimizer.step()
    return total


def _write_card(out_dir: Path, result: TrainResult, hp, train, dev, best_f1, source, path, command):
    from importlib.metadata import version

    card = {
        "model": "benepar ChartParser (char LSTM + partitioned transformer), trained here",
        **asdict(result),
        "path": path.name,
        "dev_f1_float32": round(best_f1, 2),
        "metric": "labelled bracket F1, evalb COLLINS.prm conventions (training/gleu/parser.py)",
        "treebank": source,
        "command": command,
        "treebank_sha256": treebank_hash([*train, *dev]),
        "split": f"first {len(train)} trees train, last {len(dev)} dev",
        "hparams": dict(hp),
        "checkpoint_bytes": path.stat().st_size,
        "weights": "float16",
        "versions": {p: version(p) for p in ("benepar", "torch-struct", "torch", "nltk")},
    }
    (out_dir / "card.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")


# -- command line ---------------------------------------------------------------------------


def add_commands(subparsers) -> None:
    """`fluency train-parser`."""
    cmd = subparsers.add_parser(
        "train-parser",
        help="train the benepar constituency parser the constituency features read",
        description="Train benepar's ChartParser (character LSTM, no pretrained weights) on a "
        "Penn Treebank sample read with NLTK; report labelled bracket F1 on the dev part; write "
        "OUT/parser.pt and OUT/card.json.",
    )
    cmd.add_argument(
        "--treebank",
        default="treebank",
        help="NLTK corpus name on NLTK_DATA, an nltk_data folder, or a folder of .mrg files",
    )
    cmd.add_argument("--out", default="models/benepar", help="output folder")
    cmd.add_argument("--minutes", type=float, default=30.0, help="wall-clock training budget")
    cmd.add_argument("--max-steps", type=int, default=None, help="stop after this many updates")
    cmd.add_argument("--n-dev", type=int, default=400, help="last N trees held out as dev")
    cmd.add_argument("--max-train", type=int, default=None, help="use only the first N train trees")
    cmd.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    cmd.add_argument("--seed", type=int, default=12345)
    cmd.add_argument(
        "--init", help="continue from this checkpoint's weights (same treebank and sizes)"
    )
    cmd.add_argument(
        "--hparam",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one of training/gleu/parser.py's HPARAMS, e.g. predict_tags=true",
    )
    cmd.set_defaults(func=cmd_train_parser)


def _hparams(pairs: Sequence[str]) -> dict[str, Any]:
    """`KEY=VALUE` overrides, each VALUE read as the type of HPARAMS[KEY]."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or key not in HPARAMS:
            raise InputError(f"--hparam {pair!r}: expected KEY=VALUE with KEY one of HPARAMS")
        kind = type(HPARAMS[key])
        if kind is bool:
            if raw.lower() not in ("true", "false", "1", "0"):
                raise InputError(f"--hparam {pair!r}: {key} is true or false")
            out[key] = raw.lower() in ("true", "1")
        else:
            try:
                out[key] = kind(raw)
            except ValueError:
                raise InputError(f"--hparam {pair!r}: {key} is a {kind.__name__}") from None
    return out


def cmd_train_parser(args, config) -> int:
    import torch

    torch.set_num_threads(args.threads)
    trees = read_treebank(args.treebank)
    train, dev = split_treebank(trees, args.n_dev)
    if args.max_train is not None:
        train = train[: args.max_train]
    result = train_parser(
        train,
        dev,
        args.out,
        minutes=args.minutes,
        seed=args.seed,
        max_steps=args.max_steps,
        source=args.treebank,
        command=_command_line(args),
        hparams=_hparams(args.hparam),
        init=args.init,
    )
    print(json.dumps(asdict(result)))
    return 0


def _command_line(args) -> str:
    """The command that repeats this run, every option spelled out (for the card)."""
    import shlex

    words = ["fluency", "train-parser", "--treebank", args.treebank, "--out", args.out]
    words += ["--minutes", str(args.minutes), "--n-dev", str(args.n_dev)]
    words += ["--threads", str(args.threads), "--seed", str(args.seed)]
    for option, value in (
        ("--max-steps", args.max_steps),
        ("--max-train", args.max_train),
        ("--init", args.init),
    ):
        if value is not None:
            words += [option, str(value)]
    for pair in args.hparam:
        words += ["--hparam", pair]
    return shlex.join(words)
