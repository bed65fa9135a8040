"""`fluency score` against spaCy's parse alone: CPU time, wall time and peak memory of whole
processes, loads included, on the same sentences in the same run.

For each `--model`, `fluency score --jobs 1` on `--sentences` sentences (Reuters test sentences
of 15-25 words when ../shared is there) and on one sentence (best of `--repeat`). Three
baselines, each run before and after the models (the machine's speed drifts; both runs are
printed): spaCy as a user runs it, `spacy.load(model, exclude=["ner"])` and `nlp.pipe` over the
same sentences (thinc imports PyTorch when it is installed, as here); a bare parse, the same
with PyTorch hidden and only tok2vec, tagger and parser (the floor under every parser
feature); and that bare parse with the matrix library the scorer gives spaCy's layers (NumPy's
OpenBLAS, one thread, not thinc's blis: features/parsing.py). Ratios are to the mean of each
baseline's two runs.

`--against CHECKOUT` (repeatable) also times another version: `fluency score --jobs 1` run from
that checkout (a `git worktree` of its commit) with its own models, alternating with this one's,
`--rounds` times each, and prints this version's CPU over that one's.

Usage: python -m bench.score [--sentences 2000] [--model default --model fast ...] [--jobs 2]
       python -m bench.score --model default --against /tmp/v0.9.0 --rounds 2
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._args import add_jobs, add_models, add_sentences, parser
from bench._data import sentences
from bench._timing import machine

MODELS = ["default", "fast", "full"]


def _run(
    argv: list[str],
    stdin_path: Path | None = None,
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[float, float, float, str]:
    """CPU seconds (user + system, the process and the workers it waited for), wall seconds,
    peak RSS in MiB (the largest of them), stdout."""
    t0 = time.perf_counter()
    stdin = open(stdin_path or os.devnull)  # noqa: SIM115 - closed below, after the wait
    with stdin, tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            argv, stdin=stdin, stdout=out, stderr=err, text=True, cwd=cwd, env=env
        )
        # wait4, not wait: the rusage of this child (and the workers it waited for) alone
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed:\n{err.read()[-2000:]}")
        out.seek(0)
        text = out.read()
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024, text


_SPACY = (
    "import sys\n"
    "{hide}"
    "import spacy\n"
    "from features.parsing import DEFAULT_MODELS\n"
    "{ops}"
    "with ops:\n"
    "    for name in DEFAULT_MODELS:\n"
    "        try:\n"
    "            nlp = spacy.load(name, exclude={exclude!r})\n"
    "            break\n"
    "        except OSError:\n"
    "            pass\n"
    "docs = list(nlp.pipe(open({path!r}).read().splitlines()))\n"
)


_BLIS = "from contextlib import nullcontext\nops = nullcontext()\n"  # thinc's default: blis
# The matrix library the scorer's spaCy layers use (features/parsing.py, `_matrix_ops`).
_OPENBLAS = (
    "from threadpoolctl import threadpool_limits\n"
    "from thinc.api import use_ops\n"
    "threadpool_limits(limits=1, user_api='blas')\n"
    "ops = use_ops('numpy', use_blis=False)\n"
)


def main() -> None:
    ap = parser(__doc__)
    add_sentences(ap, 2000)
    add_models(ap, MODELS)
    add_jobs(ap, 1, help="also time --jobs N (N > 1)")
    ap.add_argument("--repeat", type=int, default=3, help="one-sentence runs per model")
    ap.add_argument(
        "--against",
        metavar="CHECKOUT",
        type=Path,
        action="append",
        default=[],
        help="a checkout of another version: its `fluency score --jobs 1` for each model, from "
        "its folder with its own models, alternating with this version's (repeatable)",
    )
    ap.add_argument("--rounds", type=int, default=1, help="runs of each model and version")
    args = ap.parse_args()
    models = args.model or MODELS
    texts = sentences(args.sentences)
    python = sys.executable
    print(
        f"{len(texts)} sentences, mean {sum(len(t.split()) for t in texts) / len(texts):.1f} "
        f"words; {machine()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "in.txt"
        data.write_text("\n".join(texts) + "\n")
        one = Path(tmp) / "one.txt"
        one.write_text(texts[0] + "\n")
        bare = ["ner", "lemmatizer", "attribute_ruler"]
        no_torch = "sys.modules['torch'] = None\n"
        baselines = {
            "spaCy as installed (nlp.pipe, no NER)": _SPACY.format(
                hide="", ops=_BLIS, exclude=["ner"], path=str(data)
            ),
            "bare parse (no PyTorch; tok2vec, tagger, parser)": _SPACY.format(
                hide=no_torch, ops=_BLIS, exclude=bare, path=str(data)
            ),
            "bare parse, NumPy's OpenBLAS, one thread": _SPACY.format(
                hide=no_torch, ops=_OPENBLAS, exclude=bare, path=str(data)
            ),
        }
        base_cpu: dict[str, list[float]] = {k: [] for k in baselines}
        rows = []

        def run_baselines():
            for name, code in baselines.items():
                cpu, wall, peak, _ = _run([python, "-c", code])
                base_cpu[name].append(cpu)
                rows.append((name, cpu, wall, peak))

        run_baselines()
        versions: dict[str, list[float]] = {}
        for model in models:
            base = [python, "-m", "scorer.cli", "score", "--model", model]
            for _ in range(args.rounds):
                for jobs in sorted({1, args.jobs}):
                    cpu, wall, peak, out = _run([*base, "--jobs", str(jobs), str(data)])
                    assert len(out.splitlines()) == len(texts)
                    rows.append((f"fluency score --model {model} --jobs {jobs}", cpu, wall, peak))
                    if jobs == 1:
                        versions.setdefault(f"{model} this", []).append(cpu)
                for other in args.against:
                    cpu, wall, peak, out = _other(other, [*base, "--jobs", "1", str(data)])
                    assert len(out.splitlines()) == len(texts)
                    rows.append((f"  the same, from {other}", cpu, wall, peak))
                    versions.setdefault(f"{model} {other}", []).append(cpu)
            ones = [_run([*base, str(one)]) for _ in range(args.repeat)]
            best = min(ones, key=lambda r: r[1])
            rows.append((f"  one sentence, {model} (best of {args.repeat})", *best[:3]))
        run_baselines()
        mean = {k: sum(v) / len(v) for k, v in base_cpu.items()}
        names = list(mean)
        print(
            f"{'what':58} {'CPU s':>7} {'wall s':>7} {'max RSS MiB':>11} "
            f"{'CPU / installed':>15} {'CPU / bare':>10} {'CPU / bare OpenBLAS':>19}"
        )
        for name, cpu, wall, peak in rows:
            print(
                f"{name:58} {cpu:7.2f} {wall:7.2f} {peak:11.0f} "
                f"{cpu / mean[names[0]]:15.2f} {cpu / mean[names[1]]:10.2f} "
                f"{cpu / mean[names[2]]:19.2f}"
            )
        for model, checkout in ((m, c) for m in models for c in args.against):
            this, other = versions[f"{model} this"], versions[f"{model} {checkout}"]
            low, high = _ratio_interval(this, other)
            print(
                f"{model}, this version over {checkout}: CPU "
                f"{sum(this) / len(this):.2f} / {sum(other) / len(other):.2f} s = "
                f"x{sum(this) / len(this) / (sum(other) / len(other)):.3f} "
                f"[95% {low:.3f}, {high:.3f}] "
                f"(runs {', '.join(f'{c:.2f}' for c in this)} against "
                f"{', '.join(f'{c:.2f}' for c in other)})"
            )


def _ratio_interval(this: list[float], other: list[float]) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of mean(this) / mean(other), the runs of each version
    resampled on their own (runs of one version move by 10% or more on a shared machine: one
    pair of runs says little). NaN with fewer than 2 runs a side."""
    import numpy as np

    if min(len(this), len(other)) < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(0)
    a, b = np.asarray(this), np.asarray(other)
    ratios = rng.choice(a, (10_000, a.size)).mean(axis=1) / rng.choice(b, (10_000, b.size)).mean(
        axis=1
    )
    return tuple(float(x) for x in np.percentile(ratios, [2.5, 97.5]))


def _other(checkout: Path, argv: list[str]) -> tuple[float, float, float, str]:
    """`argv` run from `checkout`, another version's tree: its code first on the path and its
    own models (FLUENCY_MODELS_DIR); the interpreter and the shared artefacts are this one's."""
    checkout = checkout.resolve()
    env = dict(os.environ, PYTHONPATH=str(checkout), FLUENCY_MODELS_DIR=str(checkout / "models"))
    return _run(argv, cwd=checkout, env=env)


if __name__ == "__main__":
    main()
