"""`fluency compare` and `diversity`: several systems' outputs side by side.

`compare` runs a paired significance test between every pair of systems (Riezler and Maxwell
2005) on a metric (`scorer.evidence.system_stats`) or a field of a judgement file, with Holm and
Bonferroni corrections; every printed p-value comes with its test, trial count and seed. With
`--metric fluency` and no `--genre` it reads what orders systems best held out (`system_reader`):
the general head, or the GLEU stage alone where the card's held-out table puts it higher; the
header names it with its figure.
`diversity` counts tokens, types and distinct n-grams, and how much of the references each
system reproduces.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from scorer.commands.options import GENRE_HELP, MODEL_HELP, add_genre_option, add_model_option
from scorer.errors import InputError
from scorer.textio import print_rows, read_lines

__all__ = ["add_commands", "system_reader"]


def _names(paths: Sequence[str], names: Sequence[str]) -> list[str]:
    if names and len(names) != len(paths):
        raise InputError(f"{len(names)} --name for {len(paths)} --system; give one per system")
    out = list(names) or [Path(p).stem for p in paths]
    if len(set(out)) != len(out):
        out = [f"{i}:{p}" for i, p in enumerate(paths)]
    return out


def _references(paths: Sequence[str], n: int) -> list[list[str]] | None:
    if not paths:
        return None
    streams = [read_lines(p) for p in paths]
    for p, s in zip(paths, streams, strict=True):
        if len(s) != n:
            raise InputError(f"{p} has {len(s)} lines but the systems have {n}; give one per line")
    return [list(refs) for refs in zip(*streams, strict=True)]


def _scorer(args, config):
    from scorer.scoring import load_configured

    # A bare name resolves inside MODELS_DIR; a genre the model has no head for is an error.
    return load_configured(args.model, config).for_genre(args.genre)


def _accuracy(row) -> float | None:
    system = (row or {}).get("system") or {}
    return system.get("accuracy")


def system_reader(scorer, genre: str | None = None):
    """(scorer, what it reads) for ordering systems: with `genre`, that genre's head; else of the
    general head and the GLEU stage alone (its signed distance, read as the GLEU stage reads a
    text), the one whose held-out system pair accuracy (the card's general entry, one genre out)
    is higher; the head where the card gives no figure for either."""
    from features.segment import DEFAULT_AGGREGATE
    from scorer.heads_report import head_row

    if genre is not None or scorer.head is None:
        name = "GLEU stage (no heads)" if scorer.head is None else f"head {scorer.genre or genre}"
        return scorer, name
    entry = scorer.heads_report().get("general") or {}
    head = _accuracy(head_row(entry))
    mine = f"gleu ({DEFAULT_AGGREGATE})"
    rows = [r for r in entry.get("table") or [] if isinstance(r, dict)]
    gleu = next((_accuracy(r) for r in rows if r.get("label", "").endswith(mine)), None)
    held = entry.get("held_out") or "held out"
    if head is not None and gleu is not None and gleu > head:
        return scorer.gleu_stage(), (
            f"the GLEU stage alone: system pairs ordered {gleu:.3f} ({held}), the general head's "
            f"{head:.3f}"
        )
    if head is None:
        return scorer, "head general (no held-out system figure on its card)"
    return scorer, f"head general: system pairs ordered {head:.3f} ({held})"


def _print(rows: list[dict], header: list[str], fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(rows, ensure_ascii=False))
        return
    for line in header:
        print(f"# {line}")
    print_rows(rows, "tsv", sys.stdout)


def _compare_inputs(
    args,
) -> tuple[dict[str, list[str]], list[list[str]] | None, dict | None, dict | None]:
    """Systems' outputs and references from --system/--ref files, or from a judgement file
    (outputs paired by `group`); with --field, that field's values are the per-row scores."""
    from scorer.evidence.judgements import align_by_group, field_values, read_judgements

    if args.judgements:
        if args.system:
            raise InputError("give either --judgements or --system files, not both")
        _, by = align_by_group(read_judgements(args.judgements), args.name or None)
        systems = {s: [j.text for j in js] for s, js in by.items()}
        refs = [list(j.refs) for j in next(iter(by.values()))]
        fields = {s: field_values(js, args.field) for s, js in by.items()} if args.field else None
        human = (
            {s: field_values(js, args.human_field) for s, js in by.items()}
            if args.human_field
            else None
        )
        return systems, refs, fields, human
    if args.field or args.human_field:
        raise InputError("--field and --human-field read a judgement file: give --judgements")
    if len(args.system) < 2:
        raise InputError("give at least two --system files to compare (or --judgements)")
    names = _names(args.system, args.name)
    systems = {n: read_lines(p) for n, p in zip(names, args.system, strict=True)}
    return systems, _references(args.ref, len(next(iter(systems.values())))), None, None


def cmd_compare(args: argparse.Namespace, config: dict) -> int:
    import numpy as np

    from scorer.evidence.significance import all_pairs
    from scorer.evidence.system_stats import system_stats

    systems, refs, fields, human = _compare_inputs(args)
    seed = config["SEED"] if args.seed is None else args.seed
    metric = f"field:{args.field}" if fields else args.metric
    reads = None
    if args.engine == "sacrebleu":
        if args.metric not in ("bleu", "chrf") or refs is None or fields:
            raise InputError(
                "--engine sacrebleu runs sacrebleu's tests: --metric bleu|chrf and --ref"
            )
        result = _sacrebleu_pairs(systems, refs, args, seed)
        signature = f"{args.metric}|sacrebleu.significance"
    else:
        if fields:
            stats = {s: np.asarray(v, dtype=float)[:, None] for s, v in fields.items()}
            from_stats, signature = None, f"{args.field}|mean"
        else:
            scorer = None
            if args.metric == "fluency":
                scorer, reads = system_reader(_scorer(args, config), args.genre)
            ss = system_stats(
                args.metric,
                systems,
                refs,
                scorer=scorer,
                spacy_model=config["SPACY_MODEL"],
                lowercase=args.lowercase,
            )
            stats, from_stats, signature = ss.stats, ss.from_stats, ss.signature
        result = all_pairs(
            stats,
            from_stats,
            test=args.test,
            n_trials=args.trials,
            seed=seed,
            alpha=args.alpha,
            missing="drop",  # a blank output the model cannot score leaves its pairs only
        )
    rows = [
        {
            **row,
            "test": result.test,
            "n_trials": result.n_trials,
            "seed": result.seed,
            "metric": metric,
        }
        for row in result.rows()
    ]
    header = [
        f"metric {metric}  signature {signature}",
        *([f"reads {reads}"] if reads else []),
        f"test {result.test}  trials {result.n_trials}  seed {result.seed}  rows {result.n_rows}",
        f"{result.n_comparisons} comparisons at alpha {result.alpha}: experimentwise error "
        f"1-(1-alpha)^{result.n_comparisons} = {result.experimentwise_error:.4f} uncorrected; "
        "p_holm and p_bonferroni are corrected",
    ]
    if human is not None:
        header.append(_with_human(rows, human, result, args))
    _print(rows, header, args.format)
    return 0


def _with_human(rows: list[dict], human: dict, result, args) -> str:
    """Add the human field's means and Holm p-values (same test, seed, trials) to each pair;
    say how many metric-significant pairs people order the same way."""
    import numpy as np

    from scorer.evidence.significance import all_pairs

    stats = {s: np.asarray(v, dtype=float)[:, None] for s, v in human.items()}
    people = all_pairs(
        stats, test=result.test, n_trials=result.n_trials, seed=result.seed, alpha=result.alpha
    )
    by_pair = {(c.a, c.b): c for c in people.comparisons}
    n_sig = n_same = n_both = 0
    for row in rows:
        c = by_pair[(row["a"], row["b"])]
        same = bool(np.sign(c.difference) == np.sign(row["difference"]))
        row.update(human_a=c.score_a, human_b=c.score_b, human_p_holm=c.p_holm, same_order=same)
        if row["p_holm"] <= result.alpha:
            n_sig += 1
            n_same += same
            n_both += same and c.p_holm <= result.alpha
    return (
        f"people ({args.human_field}): of {n_sig} pairs significant under Holm, {n_same} are "
        f"ordered the same way by people, {n_both} of them significantly (Holm) for people too"
    )


def _sacrebleu_pairs(systems, refs, args, seed):
    import itertools

    from statsmodels.stats.multitest import multipletests

    from scorer.evidence.significance import (
        DEFAULT_TRIALS,
        AllPairs,
        PairComparison,
        sacrebleu_paired,
    )

    pairs = list(itertools.combinations(systems, 2))
    results = [
        sacrebleu_paired(
            systems[a],
            systems[b],
            refs,
            args.metric,
            test=args.test,
            n_trials=args.trials,
            seed=seed,
        )
        for a, b in pairs
    ]
    p = [r.p_value for r in results]
    holm, bonf = (multipletests(p, method=m)[1] for m in ("holm", "bonferroni"))
    comps = [
        PairComparison(a, b, r.score_a, r.score_b, r.difference, r.p_value, float(h), float(bf))
        for (a, b), r, h, bf in zip(pairs, results, holm, bonf, strict=True)
    ]
    trials = args.trials or DEFAULT_TRIALS[args.test]
    return AllPairs(comps, args.test, trials, seed, args.alpha, results[0].n_rows)


def cmd_diversity(args: argparse.Namespace, config: dict) -> int:
    from scorer.evidence.diversity import corpus_reproduction, system_diversity

    names = _names(args.system, args.name)
    rows = []
    for name, path in zip(names, args.system, strict=True):
        texts = read_lines(path)
        row = {
            "system": name,
            **system_diversity(texts, max_n=args.max_n, lowercase=args.lowercase),
        }
        refs = _references(args.ref, len(texts))
        if refs is not None:
            rep = corpus_reproduction(texts, refs, lowercase=args.lowercase)
            row.update({f"reproduction_{k}": v for k, v in rep.items()})
        rows.append(row)
    _print(rows, [f"tokens: sacrebleu 13a  lowercase: {args.lowercase}"], args.format)
    return 0


def add_commands(sub) -> None:
    from scorer.evidence.system_stats import CORPUS_METRICS, SENTENCE_METRICS

    cmp_ = sub.add_parser(
        "compare",
        help="paired significance tests between every pair of systems (Riezler & Maxwell 2005)",
        description="Every pair of systems: both scores, difference, p-value, Holm and Bonferroni.",
    )
    cmp_.add_argument("--system", action="append", default=[], help="outputs, one per line; repeat")
    cmp_.add_argument(
        "--name",
        action="append",
        default=[],
        help="a name per --system (with --judgements: systems to keep)",
    )
    cmp_.add_argument("--judgements", help="JSONL judgement file: its systems, paired by group")
    cmp_.add_argument("--field", help="with --judgements: compare this field (scores.fluency)")
    cmp_.add_argument(
        "--human-field", help="with --judgements: add people's means and Holm p for this field"
    )
    cmp_.add_argument("--ref", action="append", default=[], help="references, one per line; repeat")
    cmp_.add_argument("--metric", choices=SENTENCE_METRICS + CORPUS_METRICS, default="fluency")
    cmp_.add_argument("--test", choices=("ar", "bootstrap"), default="ar")
    cmp_.add_argument("--trials", type=int, help="randomizations / resamples (10000 / 1000)")
    cmp_.add_argument("--seed", type=int, help="random seed (default: FLUENCY_SEED or 12345)")
    cmp_.add_argument("--alpha", type=float, default=0.05)
    cmp_.add_argument(
        "--engine",
        choices=("rows", "sacrebleu"),
        default="rows",
        help="rows: resample our sufficient statistics (any metric); sacrebleu: its own tests",
    )
    add_model_option(cmp_, help="the fluency model (--metric fluency): " + MODEL_HELP)
    add_genre_option(cmp_, help="with --metric fluency: " + GENRE_HELP)
    cmp_.add_argument("--lowercase", action="store_true")
    cmp_.add_argument("--format", choices=("table", "json"), default="table")
    cmp_.set_defaults(func=cmd_compare)

    div = sub.add_parser("diversity", help="tokens, types, TTR, distinct-n; corpus reproduction")
    div.add_argument("--system", action="append", required=True, help="outputs; repeat")
    div.add_argument("--name", action="append", default=[])
    div.add_argument("--ref", action="append", default=[], help="references for P/R/F; repeat")
    div.add_argument("--max-n", type=int, default=2)
    div.add_argument("--lowercase", action="store_true")
    div.add_argument("--format", choices=("table", "json"), default="table")
    div.set_defaults(func=cmd_diversity)
