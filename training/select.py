"""Which model agrees best with people? Several bundles against human judgements, side by side.

`fluency compare-models --model A --model B --judgements F.jsonl --human-field scores.fluency`
extracts every feature once per distinct set of artefacts (models that read the same language
model share one extraction), in parallel worker processes, then applies each model's SVM to the
rows. It prints, per judgement file, each model's agreement (`training.agreement`) and, with
`--single-features`, every single feature's, as in Mutton et al. (2007) Table 5.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from features.resources import Resources
from features.segment import segment
from training.judgements import read_judgements
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
) -> dict[str, dict]:
    """{model name or feature column: agreement_report(...)} over `texts`."""
    from training.agreement import agreement_report  # SciPy: only when a command runs

    out: dict[str, dict] = {}
    # Scored as FluencyScorer scores: whole, or (by_sentence) sentence by sentence with a text's
    # value their token-weighted mean; single features are folded the same way as the model.
    seg = segment(texts, by_sentence=by_sentence)
    by_resources: dict[tuple, list[FluencyScorer]] = {}
    for s in scorers:
        by_resources.setdefault(_key(s), []).append(s)
    for members in by_resources.values():
        names = sorted({f for s in members for f in s.pipeline.named_steps["extract"].features_})
        rows = featurize(seg.sentences, names, members[0].resources, n_jobs=n_jobs)
        for s in members:
            scores = seg.mean(s.pipeline[1:].decision_function(rows))
            out[s.name] = agreement_report(scores, human, groups)
        if single_features:
            rows = seg.mean_rows(rows)
            for column in rows[0]:
                values = np.array([r[column] for r in rows])
                if column not in out and np.ptp(values) > 0:
                    out[column] = agreement_report(values, human, groups)
    return out


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
        )
        if args.format == "json":
            print(json.dumps({"judgements": path, "field": field, "results": table}))
            continue
        print(f"\n{path}: {field}, n = {len(judgements)} (human reference texts left out)")
        print(f"{'column':40s} pearson  spearman [95% CI]        kendall  group-kendall  pairwise")
        for name, r in sorted(table.items(), key=lambda kv: -kv[1]["spearman"]):
            print(
                f"{name:40s} {r['pearson']:7.3f}  {r['spearman']:7.3f} "
                f"[{r['spearman_ci_low']:6.3f}, {r['spearman_ci_high']:6.3f}]  "
                f"{r['kendall']:7.3f}  {r.get('group_kendall', float('nan')):13.3f}  "
                f"{r.get('pairwise_accuracy', float('nan')):8.3f}"
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
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--format", choices=("table", "json"), default="table")
    ap.set_defaults(func=cmd_compare_models)
