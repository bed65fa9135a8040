"""Two robustness sets built from held-out news text (the Reuters test split), for
`fluency benchmark`: does the score still separate real word order from glued word order when
the easy tells are gone?

(a) Windows. Mutton et al. (2007, section 3.2) glue sequences of l words into "sentences" of n
    tokens; l = n copies a real sentence. The training negatives come from the same generator,
    anchored (first sequence starts a sentence, final punctuation added), so a model may learn
    "capital first, full stop last". Here both sides lose those tells: a real item is n
    consecutive tokens starting at any word of a test sentence, a glued one is glued from
    sequences that start anywhere (`Glue(anchor=False)`), both cut at n tokens, stripped of
    final punctuation, and put in one random case (as written, lower, UPPER, Title). Reported:
    Spearman of the score with l (l = n for the real windows) and the AUC of real windows
    against glued ones, per l and pooled.
(b) Lower-cased and tokenised, as many NLG data sets are (WebNLG, E2E, Newsroom): real test
    sentences as written against the same sentences lower-cased with spaces between tokens
    (the mean score difference, with a bootstrap interval over sentences), and the AUC of the
    real sentences against glued ones (anchored, l in 1, 2, 4, 8), both lower-cased, beside the
    same AUC as written.

They are made with the training package's corpus reader and glue generator, so they live
here; `fluency benchmark` (its command in `scorer.evidence.cli`) builds them when the package
and the corpus are there, and says why it skips them otherwise.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import string
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from features.rows import default_cache_dir
from scorer.evidence.benchmark_data import model_columns
from training.gleu.corpus import read_corpus
from training.gleu.negatives import Glue, join_tokens

__all__ = ["robustness_markdown", "run_robustness"]

log = logging.getLogger(__name__)
CASES = ("as written", "lower", "upper", "title")
_STRIP = string.punctuation + string.whitespace + "“”‘’«»…–—"


def _sentences(corpus: Path, cache_dir: Path, max_paragraphs: int, seed: int) -> list[tuple]:
    """Sentences (tokens with whitespace) of the first `max_paragraphs` lines, cached."""
    lines = [ln for ln in corpus.read_text(encoding="utf-8").splitlines() if ln.strip()]
    text = "\n".join(lines[:max_paragraphs]) + "\n"
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    cached = cache_dir / f"corpus-{digest}-{seed}.json"
    if cached.is_file():
        return [tuple(s) for s in json.loads(cached.read_text(encoding="utf-8"))]
    cache_dir.mkdir(parents=True, exist_ok=True)
    part = cache_dir / f"corpus-{digest}.txt"
    part.write_text(text, encoding="utf-8")
    sentences = read_corpus([str(part)], seed=seed, progress=False).sentences
    cached.write_text(json.dumps(sentences, ensure_ascii=False), encoding="utf-8")
    return sentences


def _recase(text: str, rng: random.Random) -> str:
    case = rng.choice(CASES)
    return {"lower": text.lower(), "upper": text.upper(), "title": text.title()}.get(case, text)


def window_set(sentences, *, n: int, sizes: Sequence[int], per_size: int, seed: int):
    """(texts, levels): real n-token windows (level n) and glued items (level l)."""
    rng = random.Random(seed)
    long = [s for s in sentences if len(s) >= n + 2]
    texts, levels = [], []
    for _ in range(per_size):
        s = rng.choice(long)
        start = rng.randrange(len(s) - n + 1)
        texts.append(join_tokens(s[start : start + n]))
        levels.append(n)
    glue = Glue(sentences, anchor=False)
    for l in sizes:
        for _ in range(per_size):
            texts.append(glue.generate(n, l, rng))
            levels.append(l)
    texts = [_recase(t.rstrip(_STRIP), rng) for t in texts]
    return texts, levels


def lowercase_set(sentences, *, per_size: int, seed: int):
    """Real sentences as written and lower-cased/tokenised; glued ones both ways."""
    import spacy

    rng = random.Random(seed + 1)
    tokenizer = spacy.blank("en").tokenizer
    real = rng.sample([s for s in sentences if 10 <= len(s) <= 40], per_size)
    glue = Glue(sentences)
    written = ["".join(s).strip() for s in real]
    glued = [glue.generate(len(s), (1, 2, 4, 8)[i % 4], rng) for i, s in enumerate(real)]

    def lower(text: str) -> str:
        return " ".join(t.text for t in tokenizer(text) if not t.is_space).lower()

    return {
        "written": written,
        "lowered": [lower(t) for t in written],
        "glued": glued,
        "glued_lowered": [lower(t) for t in glued],
    }


def _auc(pos: np.ndarray, neg: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score([1] * len(pos) + [0] * len(neg), np.r_[pos, neg]))


def _mean_ci(d: np.ndarray, seed: int, n_samples: int = 1000) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), (n_samples, len(d)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(d.mean()), float(low), float(high)


def run_robustness(
    scorers,
    labels: Sequence[str],
    aggregates: Sequence[str],
    *,
    corpus: str | Path,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
    seed: int = 12345,
    n: int = 24,
    sizes: Sequence[int] = (1, 2, 3, 4, 5, 6, 7, 8),
    per_size: int = 100,
    per_lowercase: int = 200,
    max_paragraphs: int = 4000,
) -> dict:
    """{"skipped": reason} or {"settings": ..., "results": [one dict per model and aggregate]}."""
    from scipy import stats

    corpus = Path(corpus)
    if not corpus.is_file():
        return {"skipped": f"no held-out corpus at {corpus}: robustness sets not built"}
    cache_dir = default_cache_dir() if cache_dir is None else Path(cache_dir)
    sentences = _sentences(corpus, cache_dir / "corpora", max_paragraphs, seed)
    win_texts, levels = window_set(sentences, n=n, sizes=sizes, per_size=per_size, seed=seed)
    low = lowercase_set(sentences, per_size=per_lowercase, seed=seed)
    texts = win_texts + [t for part in low.values() for t in part]
    levels_arr = np.asarray(levels)
    results = []
    for scorer, label in zip(scorers, labels, strict=True):
        cols = model_columns(scorer, texts, aggregates, cache_dir=cache_dir, n_jobs=n_jobs)
        for how in aggregates:
            scores = cols[how][0]
            win, rest = scores[: len(win_texts)], scores[len(win_texts) :]
            parts, at = {}, 0
            for key, items in low.items():
                parts[key] = rest[at : at + len(items)]
                at += len(items)
            real = win[levels_arr == n]
            diff = _mean_ci(parts["lowered"] - parts["written"], seed)
            results.append(
                {
                    "model": label,
                    "aggregate": how,
                    "windows_spearman_l": float(stats.spearmanr(win, levels_arr).statistic),
                    "windows_auc": {str(l): _auc(real, win[levels_arr == l]) for l in sizes},
                    "windows_auc_pooled": _auc(real, win[levels_arr != n]),
                    "lowercase_mean_difference": diff[0],
                    "lowercase_difference_ci": [diff[1], diff[2]],
                    "lowercase_share_lower": float(np.mean(parts["lowered"] < parts["written"])),
                    "lowercase_auc": _auc(parts["lowered"], parts["glued_lowered"]),
                    "written_auc": _auc(parts["written"], parts["glued"]),
                }
            )
    settings = {
        "corpus": str(corpus),
        "paragraphs": max_paragraphs,
        "n": n,
        "sizes": list(sizes),
        "per_size": per_size,
        "per_lowercase": per_lowercase,
        "seed": seed,
    }
    return {"settings": settings, "results": results}


def robustness_markdown(robust: dict) -> str:
    if "skipped" in robust:
        return f"### Robustness sets\n\n{robust['skipped']}\n"
    s = robust["settings"]
    out = [
        "### Robustness sets",
        "",
        f"From the first {s['paragraphs']} paragraphs of {s['corpus']}, seed {s['seed']}. "
        f"(a) windows: {s['per_size']} real windows of n = {s['n']} tokens and {s['per_size']} "
        f"glued items per l in {s['sizes']}, unanchored, no final punctuation, random case; "
        f"Spearman of the score with l (real = n) and AUC real vs glued. (b) "
        f"{s['per_lowercase']} real sentences as written vs lower-cased and tokenised (mean "
        "difference, 95% bootstrap interval, share that lost); AUC of real vs glued "
        "(l in 1, 2, 4, 8), lower-cased and as written.",
        "",
        "| model, aggregate | (a) Spearman(score, l) | (a) AUC l=1 | (a) AUC l=4 | (a) AUC l=8 "
        "| (a) AUC pooled | (b) lowered - written [95% CI] | (b) share lower | (b) AUC lowered "
        "| (b) AUC written |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in robust["results"]:
        auc = r["windows_auc"]
        lo, hi = r["lowercase_difference_ci"]
        out.append(
            f"| {r['model']} `{r['aggregate']}` | {r['windows_spearman_l']:.3f} | "
            f"{auc.get('1', float('nan')):.3f} | {auc.get('4', float('nan')):.3f} | "
            f"{auc.get('8', float('nan')):.3f} | {r['windows_auc_pooled']:.3f} | "
            f"{r['lowercase_mean_difference']:+.3f} [{lo:+.3f}, {hi:+.3f}] | "
            f"{r['lowercase_share_lower']:.3f} | {r['lowercase_auc']:.3f} | "
            f"{r['written_auc']:.3f} |"
        )
    return "\n".join(out) + "\n"
