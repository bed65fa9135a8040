"""`python -m training.heads.said_again_bundle`: the said-again check on a shipped bundle's heads,
each scored as the bundle serves it, whatever its kind (linear, learned on SmolLM2's states, a
starting head plus a ridge).

For each head: the weight on what a text says again (`scorer.readings.SAID_AGAIN`) it needs,
chosen on paragraphs of held-out Reuters text, and, at that weight, the share of other
paragraphs whose said-again versions it scores at or below them (`training.heads.data.said_again`).
A head that already carries a weight is checked without it first, so the weight is chosen
afresh. With `--write`, each head that passes at its weight carries it in the card; a head that
needs more than `MAX_PENALTY` is reported, never changed: it is to be chosen again
(`python -m training.heads`).

    python -m training.heads.said_again_bundle --model neural --genres general data-to-text --write
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from scorer.heads import Head
from scorer.readings import SAID_AGAIN, text_readings
from training.heads.data.said_again import MAX_PENALTY, SaidAgain, paragraphs, versions

__all__ = ["HeadCheck", "carrying", "check_heads", "main"]

READING = "served"  # the check's one reading: the head's own


@dataclass(frozen=True)
class HeadCheck:
    """One head's check: the weight it needs (inf: none is enough), the weight it would carry
    (at most `MAX_PENALTY`), the weight it carries now, and each kind's share at that weight."""

    genre: str
    needed: float
    weight: float
    carried: float
    shares: dict[str, float]
    floor: float

    @property
    def passes(self) -> bool:
        """Every kind at or below the text for `floor` of the paragraphs, at a weight allowed."""
        return self.weight <= MAX_PENALTY and all(v >= self.floor for v in self.shares.values())

    def as_dict(self) -> dict:
        return {
            "needed": None if not np.isfinite(self.needed) else round(self.needed, 6),
            "weight": round(self.weight, 6),
            "carried": round(self.carried, 6),
            "shares": {k: round(v, 4) for k, v in self.shares.items()},
            "passes": self.passes,
        }


def carrying(section: Mapping, weight: float) -> dict:
    """`section` (a whole card section, weights joined) carrying `weight` on what is said again,
    the last input, unbounded (a weight of 0 takes the input out)."""
    head = Head.from_section(section)
    return head.with_weight(SAID_AGAIN, -float(weight) if weight > 0 else 0.0).to_section()


def check_heads(
    scorer,
    corpus: str | Path,
    *,
    genres: Sequence[str] | None = None,
    n: int = 200,
    seed: int = 12345,
    floor: float = 0.95,
    as_served: bool = False,
    cache_dir: str | Path | None = None,
    n_jobs: int = 1,
) -> dict[str, HeadCheck]:
    """{genre: its check} of each head of `scorer` (`genres`: these only) on `n` paragraphs of
    `corpus`, each head's weight chosen on `n` others (`training.heads.data.said_again`); with
    `as_served`, each head checked at the weight it carries. With `cache_dir` or `n_jobs`, the
    texts' feature rows (whole and by sentence) are read from and kept in that store, computed
    in `n_jobs` processes, before any head scores them (the scorer keeps them in memory)."""
    import random

    paras = paragraphs(corpus, n=2 * n, seed=seed)
    random.Random(seed + 1).shuffle(paras)
    sets = {"held": versions(paras[:n], seed=seed), "choosing": versions(paras[n:], seed=seed + 1)}
    texts = list(
        dict.fromkeys(t for made in sets.values() for a, b in made.values() for t in a + b)
    )
    said = dict(zip(texts, text_readings(texts)[SAID_AGAIN], strict=True))
    if cache_dir is not None or n_jobs > 1:
        _read_rows(scorer, texts, cache_dir, n_jobs)
    out = {}
    for genre in tqdm(genres or scorer.genres, desc="heads", unit=" head"):
        head = scorer.for_genre(genre)
        on_said = head.head.weight(SAID_AGAIN) if head.head is not None else 0.0
        carried = -on_said if on_said else 0.0  # the penalty it carries (0: none)
        served = dict(zip(texts, head.score(texts), strict=True))

        check = SaidAgain(
            _columns(sets["choosing"], served, said, carried),
            _columns(sets["held"], served, said, carried),
            floor,
        )
        needed = check.penalty(_score, READING)
        weight = carried if as_served else min(needed, MAX_PENALTY)
        out[genre] = HeadCheck(
            genre, needed, weight, carried, check.shares(_score, READING, weight), floor
        )
    return out


def _read_rows(scorer, texts: Sequence[str], cache_dir, n_jobs: int) -> None:
    """Every sentence and whole text of `texts` (placeholders filled) in `scorer`'s rows."""
    from features.placeholders import fill_placeholders
    from features.segment import segment

    filled = fill_placeholders(texts, scorer.placeholders)
    wanted = (
        segment(filled, by_sentence=True).sentences + segment(filled, by_sentence=False).sentences
    )
    scorer.sentence_rows(
        list(dict.fromkeys(wanted)), cache_dir=cache_dir, n_jobs=n_jobs, progress=True
    )


def _columns(made: Mapping, served: Mapping, said: Mapping, carried: float) -> dict:
    """{kind: (originals' columns, versions' columns)} of the head's scores without the weight it
    carries (`carried`) and of the share said again."""

    def cols(texts: Sequence[str]) -> dict[str, dict[str, np.ndarray]]:
        s = np.array([said[t] for t in texts])
        bare = np.array([served[t] for t in texts]) + carried * s
        return {READING: {"score": bare, SAID_AGAIN: s}}

    return {kind: (cols(a), cols(b)) for kind, (a, b) in made.items()}


def _score(columns: Mapping) -> np.ndarray:
    return columns[READING]["score"]


def main(argv: Sequence[str] | None = None) -> int:
    from scorer.bundle import bundle_folder
    from scorer.bundles import load_configured_all
    from scorer.config import from_env

    ap = argparse.ArgumentParser(
        prog="python -m training.heads.said_again_bundle", description=__doc__
    )
    ap.add_argument("--model", default="default", help="the bundle whose heads are checked")
    ap.add_argument("--genres", nargs="*", help="these heads only (default: every head)")
    ap.add_argument(
        "--corpus",
        default="../shared/corpora/reuters21578/test.txt",
        help="held-out real text, one paragraph a line",
    )
    ap.add_argument(
        "--paragraphs", type=int, default=200, help="paragraphs checked (and chosen on)"
    )
    ap.add_argument("--floor", type=float, default=0.95)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument(
        "--as-served", action="store_true", help="check each head at the weight it carries"
    )
    ap.add_argument("--json", help="write every head's check here")
    ap.add_argument("--cache", help="feature-row store the texts' rows are read from and kept in")
    ap.add_argument("--jobs", type=int, default=1, help="processes computing the rows")
    ap.add_argument("--write", action="store_true", help="heads that pass carry their weight")
    args = ap.parse_args(argv)
    config = from_env()
    (scorer,) = load_configured_all([args.model], {**config, "FEATURE_CACHE": 200_000})
    found = check_heads(
        scorer,
        args.corpus,
        genres=args.genres,
        n=args.paragraphs,
        seed=args.seed,
        floor=args.floor,
        as_served=args.as_served,
        cache_dir=args.cache,
        n_jobs=args.jobs,
    )
    for genre, c in found.items():
        shares = ", ".join(f"{k} {v:.1%}" for k, v in c.shares.items())
        verdict = "passes" if c.passes else "FAILS"
        print(
            f"{genre}: {verdict}, weight {c.weight:.4f} (needed {c.needed:.4f}, carried "
            f"{c.carried:.4f}); {shares}"
        )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({g: c.as_dict() for g, c in found.items()}, indent=1))
    if args.write:
        from training.heads.report.cards import rewrite_heads

        folder = bundle_folder(args.model, config["MODELS_DIR"])
        rewrite_heads(folder, {g: c.weight for g, c in found.items() if c.passes}, carrying)
    return 0 if all(c.passes for c in found.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
