"""Which model agrees best with people? Several bundles against human judgements, side by side.

`fluency compare-models --model A --model B --judgements F.jsonl --human-field scores.fluency`
extracts every feature once per distinct set of artefacts (models that read the same language
model share one extraction), in parallel worker processes, then applies each model's SVM to the
rows. It prints, per judgement file, each model's agreement (`scorer.evidence.agreement`) and, with
`--single-features`, every single feature's, as in Mutton et al. (2007) Table 5. With
`--paired-bootstrap N` (default 1000; 0 turns it off) every other row also gets the first
model's Spearman minus its own (a row that agrees negatively is turned round first), with a
paired-bootstrap 95% interval and the share of resamples where the first model did not agree
better (`scorer.evidence.agreement.spearman_difference`): whether the model "beats" a feature is
then a statement with an interval, not a comparison of two point estimates.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from features.placeholders import fill_placeholders
from features.resources import Resources
from features.segment import segment
from scorer.evidence.judgements import read_judgements
from training.train import featurize

if TYPE_CHECKING:
    from scorer.scoring import FluencyScorer

__all__ = ["add_commands", "compare_models"]


def _key(scorer: FluencyScorer) -> tuple:
    r: Resources = scorer.resources
    return (str(r.lm_path), str(r.unigram_path), str(r.benepar_path))


def compare_models(
    scorers: Sequence[FluencyScorer],
    texts: Sequence[str],
    human: Sequence[float],
    groups: Sequence[str] | None = None,
    *,
    single_features: bool = False,
    n_jobs: int = 2,
    by_sentence: bool = False,
    paired_bootstrap: int = 0,
) -> dict[str, dict]:
    """{model name or feature column: agreement_report(...)} over `texts`. With
    `paired_bootstrap` resamples, every report but the first model's also holds `first_minus`:
    that model's Spearman minus this column's, with its paired-bootstrap interval."""
    from scorer.evidence.agreement import agreement_report  # SciPy: only when a command runs

    out: dict[str, dict] = {}
    series: dict[str, np.ndarray] = {}  # what each row scored, for the paired differences
    # Scored as FluencyScorer scores: whole, or (by_sentence) sentence by sentence with a text's
    # value their token-weighted mean; single features are folded the same way as the model.
    # Slot placeholders are read as a name for every row alike, as the scorer reads them.
    filled = fill_placeholders(texts, scorers[0].placeholders) if scorers else list(texts)
    seg = segment(filled, by_sentence=by_sentence)
    by_resources: dict[tuple, list[FluencyScorer]] = {}
    for s in scorers:
        by_resources.setdefault(_key(s), []).append(s)
    for members in by_resources.values():
        names = sorted({f for s in members for f in s.features})
        rows = featurize(seg.sentences, names, members[0].resources, n_jobs=n_jobs)
        for s in members:
            scores = seg.mean(s.decision(rows))
            out[s.name] = agreement_report(scores, human, groups)
            series[s.name] = np.asarray(scores, dtype=float)
        if single_features:
            rows = seg.mean_rows(rows)
            for column in rows[0]:
                values = np.array([r[column] for r in rows])
                if column not in out and np.ptp(values) > 0:
                    out[column] = agreement_report(values, human, groups)
                    series[column] = values
    if paired_bootstrap and scorers:
        models = {s.name for s in scorers}
        _add_differences(out, series, human, scorers[0].name, models, paired_bootstrap)
    return out


def _add_differences(out, series, human, first: str, models: set, n_resamples: int) -> None:
    from dataclasses import asdict

    from scorer.evidence.agreement import spearman_difference

    for name, column in series.items():
        if name != first:
            # A feature whose direction is "lower is better" is compared the way round it agrees
            # (its sign taken from these data, which favours the feature, not the model); a
            # model's score is taken as it is.
            sign = -1.0 if name not in models and out[name]["spearman"] < 0 else 1.0
            diff = spearman_difference(series[first], sign * column, human, n_resamples=n_resamples)
            out[name]["first_minus"] = asdict(diff) | {"first": first, "sign": sign}


def cmd_compare_models(args, config) -> int:
    from scorer.scoring import load_configured

    scorers = [load_configured(m, config) for m in args.model]
    for path, field in zip(args.judgements, args.human_field * len(args.judgements), strict=False):
        judgements = [j for j in read_judgements(path) if not j.raw.get("is_reference")]
        judgements = [j for j in judgements if j.text.strip()]
        table = compare_models(
            scorers,
            [j.text for j in judgements],
            [float(j.get(field)) for j in judgements],
            [str(j.group) for j in judgements],
            single_features=args.single_features,
            n_jobs=args.jobs,
            by_sentence=args.by_sentence,
            paired_bootstrap=args.paired_bootstrap,
        )
        if args.format == "json":
            print(json.dumps({"judgements": path, "field": field, "results": table}))
            continue
        print(f"\n{path}: {field}, n = {len(judgements)} (human reference texts left out)")
        first = scorers[0].name
        extra = f"  {first} - this [95% CI], p" if args.paired_bootstrap else ""
        print(
            f"{'column':40s} pearson  spearman [95% CI]        kendall  group-kendall  pairwise"
            + extra
        )
        for name, r in sorted(table.items(), key=lambda kv: -kv[1]["spearman"]):
            d = r.get("first_minus")
            diff = (
                f"  {d['difference']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}], "
                f"{d['p_not_greater']:.3f}"
                if d
                else ""
            )
            print(
                f"{name:40s} {r['pearson']:7.3f}  {r['spearman']:7.3f} "
                f"[{r['spearman_ci_low']:6.3f}, {r['spearman_ci_high']:6.3f}]  "
                f"{r['kendall']:7.3f}  {r.get('group_kendall', float('nan')):13.3f}  "
                f"{r.get('pairwise_accuracy', float('nan')):8.3f}" + diff
            )
    return 0


def add_commands(sub) -> None:
    ap = sub.add_parser(
        "compare-models",
        help="agreement with human judgements of several models (and single features)",
        description=__doc__,
    )
    ap.add_argument("--model", action="append", required=True, help="model name; repeat")
    ap.add_argument("--judgements", action="append", required=True, help="JSONL file; repeat")
    ap.add_argument(
        "--human-field",
        action="append",
        required=True,
        help="dotted field of the human score, one per --judgements (or one for all)",
    )
    ap.add_argument("--single-features", action="store_true", help="add every feature column")
    ap.add_argument(
        "--by-sentence",
        action="store_true",
        help="split texts at sentence-final punctuation and average sentence scores by tokens "
        "(default: each text whole, as the scorer does)",
    )
    ap.add_argument(
        "--paired-bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="resamples for the first model's Spearman minus each other row's, with a paired "
        "bootstrap interval (default 1000; 0: off)",
    )
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--format", choices=("table", "json"), default="table")
    ap.set_defaults(func=cmd_compare_models)
