"""The columns `fluency benchmark` compares: judgement files read the one way, models' scores under
each aggregate, the plain baselines and every single feature, from cached feature rows.

- Outputs left out, and counted: empty ones and the literal "null" or "none" (any case, any
  spacing), which WebNLG 2017 systems emitted for inputs they failed on; human reference texts
  (`is_reference`) unless asked to keep them (they have no references of their own to compute
  chrF or BLEU against, and are not generated output).
- Baselines, each with higher = better: minus the token count; the LM's log10 probability of
  the whole text, summed (`mean_logprob` x (n_tokens + 1): the LM scores n tokens and the end of
  the sentence) and per event (`lm.v1/mean_logprob`); sentence chrF and BLEU (sacrebleu defaults,
  BLEU with effective order) against the file's references, where every output kept has some.
- Features: the first model's, folded over a text's sentences as that model's score is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from features.placeholders import fill_placeholders
from features.segment import segment
from scorer.evidence.judgements import read_judgements

__all__ = [
    "EMPTY_OUTPUTS",
    "JudgedFile",
    "baseline_columns",
    "cut",
    "is_empty_output",
    "model_columns",
    "read_judged",
    "sample_outputs",
]

EMPTY_OUTPUTS = ("", "null", "none")


def is_empty_output(text: str) -> bool:
    return " ".join(text.split()).lower() in EMPTY_OUTPUTS


@dataclass(frozen=True)
class JudgedFile:
    name: str
    sha256: str  # of the file's bytes: cached rows belong to one version of a file
    texts: list[str]
    human: np.ndarray
    groups: list[str]
    refs: list[list[str]]
    counts: dict[str, int] = field(default_factory=dict)
    systems: list[str] = field(default_factory=list)  # each output's system ("" unnamed)


def read_judged(
    path: str | Path, *, human_field: str = "score", keep_references: bool = False
) -> JudgedFile:
    """The outputs of one judgement file that the protocol scores, and what was left out."""
    path = Path(path)
    items = read_judgements(path)
    empty = [j for j in items if is_empty_output(j.text)]
    refs = [j for j in items if j.is_reference and not is_empty_output(j.text)]
    kept = [
        j for j in items if not is_empty_output(j.text) and (keep_references or not j.is_reference)
    ]
    human = np.array(
        [float(j.score if human_field == "score" else j.get(human_field)) for j in kept]
    )
    counts = {
        "n_lines": len(items),
        "n_kept": len(kept),
        "n_empty": len(empty),
        "n_references": 0 if keep_references else len(refs),
    }
    return JudgedFile(
        path.stem,
        hashlib.sha256(path.read_bytes()).hexdigest(),
        [j.text for j in kept],
        human,
        [j.group for j in kept],
        [list(j.refs) for j in kept],
        counts,
        [j.system for j in kept],
    )


def model_columns(
    scorer,
    texts: Sequence[str],
    aggregates: Sequence[str],
    *,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
    progress: bool = True,
) -> dict[str, tuple[np.ndarray, list[dict[str, float]]]]:
    """{aggregate: (scores, feature rows per text)}, as `FluencyScorer.score_texts` gives them
    (placeholders filled, texts split unless "whole", the bundle's head applied when it
    has one), every sentence's row asked for once from the scorer's rows (`features.rows`:
    kept under `cache_dir` when given)."""
    filled = fill_placeholders(texts, scorer.placeholders)
    whole = segment(filled, by_sentence=False)
    split = segment(filled, by_sentence=True) if set(aggregates) - {"whole"} else whole
    head = getattr(scorer, "head", None)  # the bundle's score, as served
    needs_readings = head is not None and head.needs_readings
    parse = needs_readings and head.needs_parsed_readings  # else the text's own readings
    # Whole texts are rows only where something reads them: the "whole" aggregate, readings.
    wanted = (whole.sentences if "whole" in aggregates or parse else []) + split.sentences
    sentences = list(dict.fromkeys(wanted))
    found = scorer.sentence_rows(sentences, cache_dir=cache_dir, n_jobs=n_jobs, progress=progress)
    by_text = dict(zip(sentences, found, strict=True))
    readings = None
    if needs_readings:
        # rows are all found by now
        by = split if split is not whole else None
        readings = scorer.readings(filled, cache_dir=cache_dir, parse=parse, split=by)
    out = {}
    for how in aggregates:
        seg = whole if how == "whole" else split
        rows = [by_text[s] for s in seg.sentences]
        values = scorer.decision(rows)
        if head is not None and head.derived:
            from scorer.readings import with_derived

            rows = with_derived(rows, head.derived)
        gleu, text_rows = seg.aggregate(values, how), seg.aggregate_rows(rows, how, values)
        score = gleu if head is None else head.apply(gleu, text_rows, readings)
        out[how] = (score, text_rows)
    return out


def _column(rows: Sequence[Mapping[str, float]], suffix: str) -> np.ndarray | None:
    names = [k for k in rows[0] if k.endswith(suffix)] if rows else []
    return np.array([r[names[0]] for r in rows], dtype=float) if names else None


BASELINE_FEATURES = ("surface.v2", "lm.v1")  # what the baselines read: length, the n-gram LM


def baseline_rows(
    scorer, texts: Sequence[str], *, cache_dir: str | Path | None = None, n_jobs: int = 1
) -> list[dict[str, float]]:
    """Each text's row, read whole, of the extractors the plain baselines read (with the
    scorer's resources): what `baseline_columns` takes. Not the model's own whole-text rows, so
    a model that does not read texts whole (a costly one: the neural tier) is not made to."""
    from features.rows import FeatureRows

    filled = fill_placeholders(texts, scorer.placeholders)
    whole = segment(filled, by_sentence=False)
    rows = FeatureRows(BASELINE_FEATURES, scorer.rows.resources).rows(
        whole.sentences, cache_dir=cache_dir, n_jobs=n_jobs, progress=False
    )
    return whole.aggregate_rows(rows, "whole")


def baseline_columns(
    whole_rows: Sequence[Mapping[str, float]],
    texts: Sequence[str],
    refs: Sequence[Sequence[str]],
) -> dict[str, np.ndarray]:
    """The plain baselines, oriented so that higher is better (see the module's docstring)."""
    out: dict[str, np.ndarray] = {}
    n_tokens = _column(whole_rows, "/n_tokens")
    mean_lp = _column(whole_rows, "/mean_logprob")
    if n_tokens is not None:
        out["minus length"] = -n_tokens
    if mean_lp is not None and n_tokens is not None:
        out["LM logprob, summed"] = mean_lp * (n_tokens + 1)
    if mean_lp is not None:
        out["LM logprob, mean"] = mean_lp
    if refs and all(refs):
        from features.accuracy import Bleu, Chrf

        for label, metric in (("chrF", Chrf()), ("BLEU", Bleu())):
            out[label] = np.array(
                [
                    metric.from_stats(metric.segment_stats(t, r), sentence=True)
                    for t, r in zip(texts, refs, strict=True)
                ]
            )
    return out


def sample_outputs(
    groups: Sequence[str],
    max_outputs: int,
    seed: int,
    n_words: Sequence[int] | None = None,
    max_words: int = 0,
) -> np.ndarray:
    """Positions of whole inputs (groups), drawn in a seeded order until `max_outputs` outputs
    or `max_words` words (`n_words` per output) are reached (0: no limit), in file order."""
    words = np.zeros(len(groups)) if n_words is None else np.asarray(n_words, dtype=float)
    if (max_outputs <= 0 or len(groups) <= max_outputs) and (
        max_words <= 0 or words.sum() <= max_words
    ):
        return np.arange(len(groups))
    inputs = list(dict.fromkeys(groups))
    order = np.random.default_rng(seed).permutation(len(inputs))
    size: dict[str, int] = {}
    length: dict[str, float] = {}
    for g, w in zip(groups, words, strict=True):
        size[g] = size.get(g, 0) + 1
        length[g] = length.get(g, 0.0) + w
    keep, n, total = set(), 0, 0.0
    for k in order:
        if (max_outputs > 0 and n >= max_outputs) or (max_words > 0 and total >= max_words):
            break
        keep.add(inputs[k])
        n += size[inputs[k]]
        total += length[inputs[k]]
    return np.array([i for i, g in enumerate(groups) if g in keep])


def cut(judged: JudgedFile, max_outputs: int, max_words: int, seed: int) -> JudgedFile:
    """`judged` cut by whole inputs to `max_outputs` outputs and `max_words` words
    (`sample_outputs`; 0: no limit), the same outputs `training.heads` fits and judges on."""
    if max_outputs <= 0 and max_words <= 0:
        return judged
    n_words = [len(t.split()) for t in judged.texts]
    keep = sample_outputs(judged.groups, max_outputs, seed, n_words, max_words)
    if len(keep) == len(judged.texts):
        return judged
    counts = dict(judged.counts, n_kept=len(keep), n_cut=len(judged.texts) - len(keep))
    return JudgedFile(
        judged.name,
        judged.sha256,
        [judged.texts[i] for i in keep],
        judged.human[keep],
        [judged.groups[i] for i in keep],
        [judged.refs[i] for i in keep],
        counts,
        [judged.systems[i] for i in keep] if judged.systems else [],
    )
