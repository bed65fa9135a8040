"""`python -m training.heads`: a tier's second-stage heads, a general one and one per genre, each
chosen on held-out datasets, and written into the tier's card.

- A genre head is judged by leaving one dataset of its genre out (each in turn, datasets
  weighing the same); a genre of one dataset cannot be judged so and gets no head.
- The general head is judged by leaving one whole genre out, over every genre, datasets
  weighing the same within a genre and genres the same in the means.
- Candidates (`training.heads_select`): every reading of a text of several sentences asked for
  (`whole`, `weighted`, `sum`) and, under each, the GLEU score, every feature column and the
  n-gram LM's summed log-probability; a head starts from its best single input and adds one
  only where the held-out mean rises with an interval above zero; weights keep each input's
  own sign.
- Every head scores real sentences above their shuffles (`--scrambles`: held-out Reuters
  sentences, `--floor` of the pairs): what people rate is system output, rarely word salad, and
  an input such as the share of repeated bigrams agrees with them and reads salad as fluent.
- No head ships below its inputs: the chosen head's held-out means are printed beside every
  single input's and beside minus the length. A single input that beats the head on both
  means becomes the head; a genre head that does not beat minus the length and the best single
  input on both means (or is not that input) is not shipped, and the card says why.

Large files are cut to `--max-outputs` outputs and `--max-words` words by whole inputs (groups),
drawn with `--seed`, so that every tier's rows fit one run (the neural tier reads about 4
sentences a second a core).

    python -m training.heads --model default --dev ../shared/dev --jobs 2 --write
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from scorer.calibration import DERIVED, GLEU_INPUT, card_heads
from scorer.evidence.benchmark_data import sample_outputs
from training.heads_select import (
    Fitted,
    HeadFile,
    Judgement,
    ScrambleCheck,
    Selection,
    alone_rho,
    beats,
    fit_head,
    held_out,
    interval,
    judge,
    select_head,
)
from training.heads_systems import system_view

__all__ = ["READINGS", "choose_genre_heads", "head_files", "main", "sample_outputs", "section"]

READINGS = ("whole", "weighted", "sum")
MINUS_LENGTH = "minus length"
CHRF = "chrF (references)"


def text_columns(
    scorer,
    texts: Sequence[str],
    readings: Sequence[str],
    *,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
) -> dict[str, dict[str, np.ndarray]]:
    """{reading: {input: one value a text}}: the GLEU score, every feature column and the
    `DERIVED` ones, with each reading's sentences folded as the scorer folds them, and
    "length" (the whole text's tokens, every sentence's added up)."""
    from features.placeholders import fill_placeholders
    from features.segment import segment
    from scorer.calibration import with_derived

    scorer = scorer.gleu_stage()
    extractors = {f.split("/")[0] for f in _columns(scorer)}
    derived = [d for d in DERIVED if d.split("/")[0] in extractors]
    filled = fill_placeholders(texts, scorer.placeholders)
    segs = {how: segment(filled, by_sentence=how != "whole") for how in dict.fromkeys(readings)}
    sentences = list(dict.fromkeys(s for seg in segs.values() for s in seg.sentences))
    found = _rows(scorer, sentences, cache_dir, n_jobs)
    by_text = dict(zip(sentences, with_derived(found, derived), strict=True))
    length = next(k for k in _columns(scorer) if k.endswith("/n_tokens"))
    columns = {}
    for how, seg in segs.items():
        rows = [by_text[s] for s in seg.sentences]
        values = scorer.decision(rows)
        text_rows = seg.aggregate_rows(rows, how, values)
        cols = {GLEU_INPUT: seg.aggregate(values, how)}
        cols |= {k: np.array([r[k] for r in text_rows], dtype=float) for k in text_rows[0]}
        columns[how] = cols
    seg = next(iter(segs.values()))
    total = seg.aggregate([by_text[s][length] for s in seg.sentences], "sum")
    return {"length": {"n_tokens": np.asarray(total, dtype=float)}, **columns}


def head_files(
    scorer,
    paths: Sequence[Path],
    genres: Mapping[str, str],
    readings: Sequence[str] = READINGS,
    *,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
    max_outputs: int = 0,
    max_words: int = 0,
    seed: int = 12345,
) -> list[HeadFile]:
    """Each judgement file as `HeadFile`: outputs kept under `fluency benchmark`'s protocol
    (empty and failed ones and human references left out), cut to `max_outputs` outputs and
    `max_words` words, with `text_columns` under each reading, and minus the length."""
    from scorer.evidence.benchmark_data import read_judged
    from scorer.evidence.genres import FLUENCY_FIELDS

    out = []
    for path in tqdm(paths, desc="judgement files", unit=" file"):
        judged = read_judged(path, human_field=FLUENCY_FIELDS.get(path.stem, "score"))
        n_words = [len(t.split()) for t in judged.texts]
        keep = sample_outputs(judged.groups, max_outputs, seed, n_words, max_words)
        texts = [judged.texts[i] for i in keep]
        columns = text_columns(scorer, texts, readings, cache_dir=cache_dir, n_jobs=n_jobs)
        n_tokens = columns.pop("length")["n_tokens"]
        baselines = {MINUS_LENGTH: -n_tokens}
        refs = [judged.refs[i] for i in keep]
        if refs and all(refs):
            baselines[CHRF] = chrf_column(texts, refs)
        out.append(
            HeadFile(
                judged.name,
                genres.get(judged.name, judged.name),
                np.asarray(judged.human, dtype=float)[keep],
                [judged.groups[i] for i in keep],
                columns,
                baselines,
                [judged.systems[i] for i in keep],
            )
        )
    return out


def chrf_column(texts: Sequence[str], refs: Sequence[Sequence[str]]) -> np.ndarray:
    """Sentence chrF of each text against its references (`fluency benchmark`'s baseline), the
    reference metric people compare systems with: a reference-free head that loses to it is
    still the one to use where there are no references."""
    from features.accuracy import Chrf

    metric = Chrf()
    return np.array(
        [
            metric.from_stats(metric.segment_stats(t, r), sentence=True)
            for t, r in zip(texts, refs, strict=True)
        ]
    )


# Extractors computed in stores of their own, so that the parsers' rows of every tier are
# parsed once and a costly extractor's rows are added to them (`features.rows`: stores add up).
COSTLY = ("constituency.v1", "neural.v2")


def scramble_check(
    scorer,
    corpus: str | Path,
    readings: Sequence[str],
    *,
    n: int = 200,
    floor: float = 0.95,
    seed: int = 12345,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
) -> ScrambleCheck:
    """`n` sentences of 8-35 words from `corpus` (one paragraph a line; the held-out Reuters
    test split: no sentence the GLEU stage was trained on) and a shuffle of each, as columns."""
    import random

    from features.segment import split_sentences

    rng = random.Random(seed)
    real = []
    with open(corpus, encoding="utf-8") as fh:
        for line in fh:
            for sentence, _ in split_sentences(line.strip()) if line.strip() else ():
                if 8 <= len(sentence.split()) <= 35 and sentence[-1:] in ".!?":
                    real.append(sentence)
            if len(real) >= 5 * n:
                break
    real = rng.sample(real, min(n, len(real)))
    shuffled = []
    for sentence in real:  # the words shuffled, the full stop kept last: still one sentence
        body, end = sentence[:-1].split(), sentence[-1]
        words = list(body)
        while len(words) > 1 and words == body:
            rng.shuffle(words)
        shuffled.append(" ".join(words).replace(".", "").replace("!", "").replace("?", "") + end)
    cols = text_columns(scorer, real + shuffled, readings, cache_dir=cache_dir, n_jobs=n_jobs)
    cols.pop("length")
    half = len(real)
    split = [
        {r: {k: v[a:b] for k, v in c.items()} for r, c in cols.items()}
        for a, b in ((0, half), (half, 2 * half))
    ]
    return ScrambleCheck(split[0], split[1], floor)


def _rows(scorer, sentences: Sequence[str], cache_dir, n_jobs: int) -> list[dict[str, float]]:
    from features.rows import FeatureRows

    # Only a tier with a costly extractor has stores to add up; without one the cheap store is
    # the scorer's own, whose rows it read before these were added: they would be parsed twice.
    if cache_dir is not None and any(f in COSTLY for f in scorer.features):
        cheap = tuple(f for f in scorer.features if f not in COSTLY)
        for group in [cheap, *[(f,) for f in scorer.features if f in COSTLY]]:
            FeatureRows(group, scorer.rows.resources).rows(
                sentences, cache_dir=cache_dir, n_jobs=n_jobs, progress=True, desc=group[-1]
            )
    return scorer.sentence_rows(sentences, cache_dir=cache_dir, n_jobs=n_jobs, progress=True)


def _columns(scorer) -> list[str]:
    return list(scorer.card.get("feature_columns", []))


def baseline(files: Sequence[HeadFile], name: str) -> dict[str, np.ndarray]:
    """{file: a plain baseline's values} (minus the length), judged as a head's predictions."""
    return {f.name: f.baselines[name] for f in files}


def _fmt(v: float) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def _ci(pair) -> list[float | None]:
    return [None if math.isnan(x) else round(float(x), 4) for x in pair]


def _row(label: str, j: Judgement, ci=None) -> dict:
    row = {
        "label": label,
        "rho": round(j.rho, 4),
        "tau": None if math.isnan(j.tau) else round(j.tau, 4),
    }
    if ci is not None:
        row["rho_95"], row["tau_95"] = _ci(ci["rho"]), _ci(ci["tau"])
    row["per_file"] = {k: [_r(r), _r(t)] for k, (r, t) in j.per_file.items()}
    return row


def _r(x: float) -> float | None:
    return None if math.isnan(x) else round(float(x), 4)


def wins(a: Judgement, b: Judgement) -> int:
    """On how many files `a`'s held-out criterion (rho + per-input tau) is above `b`'s."""

    def crit(rt):
        r, t = rt
        return (r if math.isfinite(r) else -9.0) + (t if math.isfinite(t) else 0.0)

    return sum(crit(a.per_file[k]) > crit(b.per_file[k]) for k in a.per_file if k in b.per_file)


def decide(
    files: Sequence[HeadFile],
    selection: Selection | None,
    by_reading: Mapping[str, Selection],
    *,
    by_genre: bool,
    n_samples: int,
    seed: int,
    floor: float | None = None,
) -> dict:
    """The head to ship (or none) and the table it is judged in: the head, minus the length,
    chrF where every file has references, the best single input and every single input, held
    out the same way, per text (rho, per-input tau) and per system (`training.heads_systems`),
    with 95% intervals, the share of real sentences each scores above their shuffles
    (`scrambles`), and on how many held-out files the head beats minus the length and its best
    single input (`wins`).

    A fitted head ships its best single input instead when it does not beat it on both means,
    when it beats it on fewer than half of the held-out files (fragile: one file set it), or,
    for the general head (what systems are compared with), when its system-level accuracy is
    below the input's with a paired interval below zero."""
    singles = {
        f"{name} ({reading})": (reading, name, j)
        for reading, sel in by_reading.items()
        for name, j in sel.singles.items()
    }
    checked = {
        f"{inputs[0]} ({reading})": acc
        for reading, sel in by_reading.items()
        for inputs, acc in sel.scrambles.items()
        if len(inputs) == 1
    }
    robust = [k for k in singles if floor is None or checked.get(k, 1.0) >= floor]
    best_label = max(singles, key=lambda k: np.nan_to_num(singles[k][2].criterion, nan=-9))
    minus = judge(baseline(files, MINUS_LENGTH), files, by_genre)
    best = singles[best_label][2]
    best_preds = held_out(files, singles[best_label][0], [singles[best_label][1]], by_genre)
    view = system_view(files, by_genre, n_samples=n_samples, seed=seed)
    n_files = len(files)
    note = ""
    if selection is None:  # no input passes the scramble check
        reading, inputs, head_j = None, (), None
    else:
        reading, inputs, head_j = selection.reading, selection.inputs, selection.judgement
        beaten_by = [k for k in robust if beats(singles[k][2], head_j)]
        if beaten_by:  # a single input above the head on both means becomes the head
            top = max(beaten_by, key=lambda k: singles[k][2].criterion)
            reading, name, head_j = singles[top]
            inputs = (name,)
            note = f"the fitted head lost to {top} on both means, which became the head"
    head_preds = None if head_j is None else held_out(files, reading, inputs, by_genre)
    is_best = head_j is not None and len(inputs) == 1 and f"{inputs[0]} ({reading})" == best_label
    if head_j is not None and not is_best and best_label in robust:
        # A fitted head that its best input (which passes the scramble check) matches is
        # overfitted, or fragile, or (the general head) orders systems worse: ship the input.
        fitted = f"the fitted head ({', '.join(inputs)}, `{reading}`)"
        why = ""
        if not beats(head_j, best):
            why = f"{fitted} did not beat {best_label} on both means"
        elif 2 * wins(head_j, best) < n_files:
            why = (
                f"{fitted} beat {best_label} on the means but on only "
                f"{wins(head_j, best)} of {n_files} held-out files (fragile)"
            )
        elif by_genre and view:
            low, high = view.gain(head_preds, best_preds)
            if high < 0:
                why = (
                    f"{fitted} orders systems worse than {best_label} (system-level accuracy "
                    f"difference [{low:+.3f}, {high:+.3f}])"
                )
        if why:
            note = why
            reading, name, head_j = singles[best_label]
            inputs, is_best, head_preds = (name,), True, best_preds
    table = []
    if head_j is not None:
        ci = interval(head_preds, files, by_genre, n_samples=n_samples, seed=seed)
        row = _row("head", head_j, ci)
        if view:
            row["system"] = view.figures(head_preds).as_dict()
        row["wins"] = {
            MINUS_LENGTH: wins(head_j, minus),
            "best single input": None if is_best else wins(head_j, best),
            "files": n_files,
        }
        table.append(row)
    minus_preds = baseline(files, MINUS_LENGTH)
    row = _row(
        MINUS_LENGTH, minus, interval(minus_preds, files, by_genre, n_samples=n_samples, seed=seed)
    )
    if view:
        row["system"] = view.figures(minus_preds).as_dict()
    table.append(row)
    with_refs = [f for f in files if CHRF in f.baselines]
    if with_refs and len(with_refs) == n_files:
        chrf_preds = baseline(files, CHRF)
        row = _row(
            CHRF,
            judge(chrf_preds, files, by_genre),
            interval(chrf_preds, files, by_genre, n_samples=n_samples, seed=seed),
        )
        if view:
            row["system"] = view.figures(chrf_preds).as_dict()
        table.append(row)
    elif with_refs:  # chrF where the files have references: point figures on those alone
        chrf_j = judge({f.name: f.baselines[CHRF] for f in with_refs}, with_refs, by_genre)
        row = _row(f"{CHRF}, {len(with_refs)} of {n_files} files", chrf_j)
        part = system_view(with_refs, by_genre, n_samples=0, seed=seed)
        if part:
            row["system"] = part.point({f.name: f.baselines[CHRF] for f in with_refs}).as_dict()
        table.append(row)
    best_ci = interval(best_preds, files, by_genre, n_samples=n_samples, seed=seed)
    row = _row(f"best single input: {best_label}", best, best_ci)
    if view:
        row["system"] = view.figures(best_preds).as_dict()
    table.append(row)
    ranked = sorted(singles, key=lambda k: -np.nan_to_num(singles[k][2].criterion, nan=-9))
    for k in ranked:
        row = _row(k, singles[k][2])
        if k in checked:
            row["scrambles"] = round(checked[k], 4)
        if view:
            preds = held_out(files, singles[k][0], [singles[k][1]], by_genre)
            row["system"] = {
                k: v for k, v in view.point(preds).as_dict().items() if k != "per_file"
            }
        table.append(row)
    skipped = dict(view.skipped)
    if head_j is None:
        return {
            "ship": False,
            "decision": f"not shipped: no input scores real sentences above their shuffles "
            f"for {floor:.0%} of them",
            "table": table,
            "system_level_skipped": skipped,
        }
    ok_length = beats(head_j, minus)
    ok_best = is_best or beats(head_j, best)
    if ok_length and ok_best:
        decision = "shipped" + (f": {note}" if note else "")
    else:
        lost = [w for w, ok in ((MINUS_LENGTH, ok_length), (best_label, ok_best)) if not ok]
        decision = f"not shipped: held out, it does not beat {' nor '.join(lost)} on both means"
        if best_label not in robust and not ok_best:
            decision += " (that input scores shuffled sentences as high as real ones)"
    steps = selection.steps if selection is not None and not note else []
    return {
        "ship": ok_length and ok_best,
        "decision": decision,
        "reading": reading,
        "inputs": list(inputs),
        "scrambles": _r(_scrambles(by_reading, reading, inputs)),
        "steps": [
            {
                "inputs": list(s.inputs),
                "rho": _r(s.judgement.rho),
                "tau": _r(s.judgement.tau),
                "criterion_gain_95": None if s.gain_interval is None else _ci(s.gain_interval),
            }
            for s in steps
        ],
        "readings": {
            r: {
                "inputs": list(s.inputs) if s.steps else [],
                "criterion": _r(s.judgement.criterion) if s.steps else None,
            }
            for r, s in by_reading.items()
        },
        "table": table,
        "system_level_skipped": skipped,
    }


def _scrambles(by_reading: Mapping[str, Selection], reading: str, inputs) -> float:
    return by_reading[reading].scrambles.get(tuple(inputs), math.nan)


def section(
    fitted: Fitted,
    files: Sequence[HeadFile],
    decision: Mapping,
    *,
    genre: str,
    held: str,
    command: str,
) -> dict:
    """A card section for one head (what `scorer.calibration.load_head_section` reads): the
    GLEU score first (weight 0 when the head does not read it), each input capped on the side
    where it raises the score at the edge of the range it took in the fit."""
    inputs = [GLEU_INPUT, *[c for c in fitted.inputs if c != GLEU_INPUT]]
    weight = dict(zip(fitted.inputs, fitted.coef.tolist(), strict=True))
    coef = [weight.get(c, 0.0) for c in inputs]
    low, high = [], []
    for c, w in zip(inputs, coef, strict=True):
        values = np.concatenate([f.columns[fitted.reading][c] for f in files])
        low.append(float(values.min()) if w < 0 else None)
        high.append(float(values.max()) if w > 0 else None)
    if coef[0] != 0:  # the GLEU score stays open: a text below every judged one reads lower
        low[0] = high[0] = None
    return {
        "genre": genre,
        "aggregate": fitted.reading,
        "inputs": inputs,
        "linear": {"coef": coef, "intercept": fitted.intercept},
        "clip": {"low": low, "high": high},
        "target": "the human score, z-normalised within each dataset",
        "regressor": "non-negative ridge on standardised inputs turned by their own signs",
        "alone": {c: _r(alone_rho(files, fitted.reading, c)) for c in fitted.inputs},
        "held_out": held,
        "selection": dict(decision),
        "files": {f.name: len(f.human) for f in files},
        "command": command,
    }


def choose_genre_heads(
    files: Sequence[HeadFile],
    readings: Sequence[str],
    *,
    max_inputs: int = 4,
    n_samples: int = 200,
    seed: int = 12345,
    command: str = "",
    check: ScrambleCheck | None = None,
) -> tuple[dict, dict]:
    """({head name: card section} of the heads that ship, {head name: decision} of every head
    tried): "general" (whole genres held out), then each genre of two or more datasets."""
    by_genre: dict[str, list[HeadFile]] = {}
    for f in files:
        by_genre.setdefault(f.genre, []).append(f)
    plans = [("general", list(files), True)]
    plans += [(g, fs, False) for g, fs in by_genre.items()]
    sections, report = {}, {}
    for name, fs, across in plans:
        if not across and len(fs) < 2:
            report[name] = {
                "ship": False,
                "decision": f"not shipped: one dataset ({fs[0].name}), nothing to hold out",
            }
            continue
        if across and len(by_genre) < 2:
            report[name] = {"ship": False, "decision": "not shipped: one genre, none to hold out"}
            continue
        candidates = {r: list(fs[0].columns[r]) for r in readings}
        total = sum(len(c) for c in candidates.values())
        with tqdm(total=total, desc=f"head {name}: single inputs", unit=" input") as bar:
            selection, by_reading = select_head(
                fs,
                readings,
                candidates,
                by_genre=across,
                max_inputs=max_inputs,
                n_samples=n_samples,
                seed=seed,
                progress=bar,
                check=check,
            )
        decision = decide(
            fs,
            selection,
            by_reading,
            by_genre=across,
            n_samples=n_samples,
            seed=seed,
            floor=None if check is None else check.floor,
        )
        held = "one genre out, over every genre" if across else f"one dataset of {name} out"
        decision["held_out"] = held
        report[name] = decision
        if decision["ship"]:
            fitted = fit_head(fs, decision["reading"], decision["inputs"])
            sections[name] = section(fitted, fs, decision, genre=name, held=held, command=command)
    return sections, report


def _lead_rows(table: Sequence[Mapping]) -> list[Mapping]:
    """The rows a head is judged against: itself, the plain baselines, its best single input."""
    out = []
    for row in table:
        out.append(row)
        if row["label"].startswith("best single"):
            break
    return out


def _system_cell(row: Mapping) -> str:
    sys_ = row.get("system")
    if not sys_:
        return "–"
    ci = sys_.get("accuracy_95")
    acc = _fmt(sys_["accuracy"]) + (f" [{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci else "")
    return f"{acc} | {_fmt(sys_['rho'])}"


def table_markdown(table: Sequence[Mapping], rows: int | None = None) -> list[str]:
    """A head's table as Markdown: per text (mean rho, mean per-input tau) and per system
    (pairwise accuracy of system means, Spearman of system means), held out, with 95%
    intervals where computed, and the head's per-file wins."""
    out = [
        "| | mean rho [95%] | mean tau [95%] | systems: pair accuracy [95%] | systems: rho |",
        "|---|---|---|---|---|",
    ]
    chosen = _lead_rows(table) if rows is None else list(table)[:rows]
    for row in chosen:
        rci = row.get("rho_95") or [None, None]
        tci = row.get("tau_95") or [None, None]
        rho = _fmt(row["rho"]) + (
            f" [{_fmt(rci[0])}, {_fmt(rci[1])}]" if rci[0] is not None else ""
        )
        tau = _fmt(row["tau"]) + (
            f" [{_fmt(tci[0])}, {_fmt(tci[1])}]" if tci[0] is not None else ""
        )
        system = _system_cell(row)
        out.append(f"| {row['label']} | {rho} | {tau} | {system if system != '–' else '– | –'} |")
    head = next((r for r in table if r["label"] == "head"), None)
    if head and head.get("wins"):
        w = head["wins"]
        versus_best = (
            "(the head is its best single input)"
            if w["best single input"] is None
            else f"and its best single input on {w['best single input']}"
        )
        out += [
            "",
            f"Per file (rho + per-input tau), the head beats minus the length on "
            f"{w[MINUS_LENGTH]} of {w['files']} held-out files {versus_best}.",
        ]
    return out


def print_report(report: Mapping[str, Mapping], out=sys.stdout) -> None:
    """Each head's held-out means beside minus the length and its best single input."""
    for name, r in report.items():
        print(f"\n## {name}: {r['decision']}", file=out)
        if "table" not in r:
            continue
        if r.get("reading"):
            print(
                f"reading {r['reading']}, inputs {', '.join(r['inputs'])}; "
                f"held out: {r['held_out']}",
                file=out,
            )
        print("\n".join(table_markdown(r["table"])), file=out)
        for f, why in (r.get("system_level_skipped") or {}).items():
            print(f"system level: {f} skipped, {why}", file=out)


HEADS_BEGIN, HEADS_END = "<!-- heads: written by python -m training.heads -->", "<!-- /heads -->"


def heads_markdown(card: Mapping, report: Mapping | None = None) -> list[str]:
    """The card's heads as Markdown: per head, what it reads with which weight, and its held-out
    table (the head, minus the length, the best single input, then the next best inputs) from
    `report`, the full one (`scorer.heads_report.read_heads_report`; None: the card's own)."""
    out = ["## Heads", ""]
    heads = card_heads(card)
    report = card.get("heads_report", {}) if report is None else report
    for name in sorted(report, key=lambda g: (g != "general", g)):
        r = report[name]
        out.append(f"### {name}: {r['decision']}")
        out.append("")
        head = heads.get(name) if r["decision"].startswith("shipped") else None
        if head:
            weights = _weights_text(head)
            scrambles = r.get("scrambles")
            checked = (
                f"; scores real sentences above their shuffles for {scrambles:.1%} of 200"
                if isinstance(scrambles, int | float) and math.isfinite(scrambles)
                else "; not checked on shuffled sentences"
            )
            out += [
                f"Reading `{head['aggregate']}`; held out: {r.get('held_out')}; weights {weights}, "
                f"intercept {head['linear']['intercept']:+.4g}{checked}.",
                "",
            ]
        if r.get("table"):
            lead = len(_lead_rows(r["table"]))
            out += table_markdown(r["table"], rows=lead + 5)
            out.append("")
        for f, why in (r.get("system_level_skipped") or {}).items():
            out.append(f"- system level: {f} skipped, {why}")
        if r.get("system_level_skipped"):
            out.append("")
    command = next((h.get("command") for h in heads.values() if h.get("command")), None)
    if command:
        out += ["Chosen and fitted by", "", "```sh", command, "```", ""]
    return out


def _weights_text(head: Mapping) -> str:
    """A head's non-zero weights, the columns of each of `scorer.contributions.GROUPS` (the
    576 state columns of the learned head) counted as one."""
    from scorer.contributions import GROUPS

    parts, groups = [], {}
    for c, w in zip(head["inputs"], head["linear"]["coef"], strict=True):
        label = next((g for prefix, g in GROUPS.items() if c.startswith(prefix)), None)
        if label is not None and w:
            groups[label] = groups.get(label, 0) + 1
        elif w:
            parts.append(f"`{c}` {w:+.4g}")
    return ", ".join(parts + [f"`{g}` ({n} weights)" for g, n in groups.items()])


def write_readme(folder: Path, card: Mapping, report: Mapping | None = None) -> None:
    """The card's heads, in the bundle's README between the heads markers (appended once), with
    the tables of `report` (`heads_markdown`)."""
    path = folder / "README.md"
    text = path.read_text(encoding="utf-8") if path.is_file() else f"# {folder.name}\n"
    block = "\n".join([HEADS_BEGIN, *heads_markdown(card, report), HEADS_END])
    if HEADS_BEGIN in text and HEADS_END in text:
        before, rest = text.split(HEADS_BEGIN, 1)
        text = before + block + rest.split(HEADS_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")


def write_card(folder: Path, sections: Mapping[str, dict], report: Mapping[str, dict]) -> None:
    """Every head chosen goes in the card's `heads`, the general one as `heads["general"]`, and
    replaces the card's heads, an older card's `calibration` among them; the report of every
    head tried goes in `heads_report.json` beside the card, and in the card's `heads_report`
    without its tables (`scorer.heads_report.write_heads_report`); the card's `summary` is
    written from the heads (`scorer.summary`). An entry of `report` read from a lean card
    (its `head` without its `table`) keeps the table the bundle's report holds for it. A
    pickled second stage left beside the card is removed: every head is served from the
    card."""
    from scorer.bundle import CARD_FILE
    from scorer.calibration import CALIBRATION_FILE, GENERAL
    from scorer.heads_report import read_heads_report, write_heads_report
    from scorer.summary import summarize

    card = json.loads((folder / CARD_FILE).read_text())
    general = sections.get(GENERAL)  # a general head not chosen again is not kept
    if GENERAL in sections:
        (folder / CALIBRATION_FILE).unlink(missing_ok=True)
    card.pop("calibration", None)
    card["heads"] = {GENERAL: general} if general else {}
    card["heads"].update((k, v) for k, v in sections.items() if k != GENERAL)
    keys = (
        "decision",
        "reading",
        "inputs",
        "held_out",
        "scrambles",
        "table",
        "system_level_skipped",
    )
    if any("head" in v and "table" not in v for v in report.values()):  # read from the card
        kept = read_heads_report(folder, card)
        report = {k: v if "table" in v else {**kept.get(k, {}), **v} for k, v in report.items()}
    full = {k: {x: v[x] for x in keys if x in v} for k, v in report.items()}
    card["heads"] = dict(sorted(card["heads"].items()))  # as the card is written and read
    write_heads_report(folder, card, full)
    card["summary"] = summarize(card)
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2, sort_keys=True) + "\n")
    write_readme(folder, card, full)


def main(argv: Sequence[str] | None = None) -> int:
    from features.rows import default_cache_dir
    from scorer.bundles import load_configured_all
    from scorer.config import from_env
    from scorer.evidence.benchmark_run import judgement_files
    from scorer.evidence.genres import GENRES, genres_of

    ap = argparse.ArgumentParser(prog="python -m training.heads", description=__doc__)
    ap.add_argument("--model", default="default", help="the tier's bundle (its GLEU stage)")
    ap.add_argument("--dev", default="../shared/dev", help="folder of *.jsonl judgement files")
    ap.add_argument("--files", nargs="*", default=(), help="only these files of --dev")
    ap.add_argument("--aggregate", action="append", choices=READINGS, help="readings tried")
    ap.add_argument("--max-outputs", type=int, default=1500, help="outputs a file at most")
    ap.add_argument("--max-words", type=int, default=40000, help="words a file at most")
    ap.add_argument("--max-inputs", type=int, default=4, help="inputs a head at most")
    ap.add_argument("--samples", type=int, default=200, help="bootstrap samples")
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--jobs", type=int, default=2, help="feature worker processes")
    ap.add_argument("--json", help="write every head's report here")
    ap.add_argument("--write", action="store_true", help="write the heads into the bundle's card")
    ap.add_argument("--rows-only", action="store_true", help="compute and cache rows, then stop")
    ap.add_argument(
        "--scrambles",
        default="../shared/corpora/reuters21578/test.txt",
        help="held-out real text whose shuffles every head must score lower ('' for none)",
    )
    ap.add_argument("--floor", type=float, default=0.95, help="share of shuffles scored lower")
    ap.add_argument(
        "--table", nargs="*", metavar="TIER", help="print the cards' genre x tier table"
    )
    args = ap.parse_args(argv)
    config = from_env()
    if args.table is not None:
        print(
            "\n".join(
                tier_table(
                    args.table or ["default", "fast", "full", "neural"], config["MODELS_DIR"]
                )
            )
        )
        return 0
    (scorer,) = load_configured_all([args.model], config)
    paths = judgement_files(args.dev, args.files)
    genres = genres_of([p.stem for p in paths], GENRES)
    readings = args.aggregate or list(READINGS)
    files = head_files(
        scorer,
        paths,
        genres,
        readings,
        cache_dir=default_cache_dir(),
        n_jobs=args.jobs,
        max_outputs=args.max_outputs,
        max_words=args.max_words,
        seed=args.seed,
    )
    check = None
    if args.scrambles:
        check = scramble_check(
            scorer,
            args.scrambles,
            readings,
            floor=args.floor,
            seed=args.seed,
            cache_dir=default_cache_dir(),
            n_jobs=args.jobs,
        )
    if args.rows_only:
        return 0
    command = "python -m training.heads " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    sections, report = choose_genre_heads(
        files,
        readings,
        max_inputs=args.max_inputs,
        n_samples=args.samples,
        seed=args.seed,
        command=command,
        check=check,
    )
    print_report(report)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    if args.write:
        from scorer.bundle import bundle_folder

        write_card(bundle_folder(args.model, config["MODELS_DIR"]), sections, report)
    return 0


def _sys(row: Mapping) -> str:
    """A table cell's system-level part: pair accuracy / rho of system means, held out."""
    sys_ = row.get("system")
    if not sys_:
        return ""
    return f"<br>systems {_fmt(sys_['accuracy'])} / {_fmt(sys_['rho'])}"


def tier_table(tiers: Sequence[str], models_dir: str | Path) -> list[str]:
    """Markdown, genre x tier, from the cards: each head's held-out rho / tau (per text) and
    pair accuracy / rho of system means (per system, where the genre's files have six or more
    systems) beside minus the length and the tier's best single input (held out the same way),
    or why it has none."""
    from scorer.bundle import CARD_FILE
    from scorer.heads_report import read_heads_report

    folders = {t: Path(models_dir) / t for t in tiers}
    reports = {
        t: read_heads_report(f, json.loads((f / CARD_FILE).read_text())) for t, f in folders.items()
    }
    genres = list(dict.fromkeys(g for r in reports.values() for g in r))
    genres.sort(key=lambda g: (g != "general", g))
    header = ["genre (held out)", *[f"`{t}`" for t in tiers], "minus length", "best single input"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for genre in genres:
        cells, minus, best = [], "", ""
        for t in tiers:
            r = reports[t].get(genre)
            if r is None:
                cells.append("–")
                continue
            table = {row["label"]: row for row in r.get("table", [])}
            row_minus = table.get(MINUS_LENGTH)
            if row_minus:  # tiers judged on the same sample share it; another is named
                value = f"{_fmt(row_minus['rho'])} / {_fmt(row_minus['tau'])}{_sys(row_minus)}"
                if not minus:
                    minus = value
                elif value not in minus:
                    minus += f"<br>{t}: {value}"
            top = next(
                (x for x in r.get("table", []) if x["label"].startswith("best single")), None
            )
            if top:
                name = top["label"].split(": ", 1)[1]
                best += f"{t}: {name} {_fmt(top['rho'])} / {_fmt(top['tau'])}{_sys(top)}<br>"
            if r["decision"].startswith("shipped") and "head" in table:
                h = table["head"]
                cells.append(f"**{_fmt(h['rho'])} / {_fmt(h['tau'])}**{_sys(h)}")
            else:
                why = r["decision"].removeprefix("not shipped: ")
                cells.append("none (one dataset)" if why.startswith("one dataset") else "none")
        held = (reports[tiers[0]].get(genre, {}).get("held_out") or "").replace(
            ", over every genre", ""
        )
        lines.append(
            f"| {genre} ({held or '–'}) | "
            + " | ".join(cells)
            + f" | {minus} | {best.removesuffix('<br>')} |"
        )
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
