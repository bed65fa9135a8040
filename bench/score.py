"""`fluency score` throughput, peak memory and model load time, measured on the real command.

Runs the CLI as a subprocess on `--sentences` sentences (Reuters test sentences of 15-25 words
when ../shared is there), once with one process and once with `--jobs` processes (both cores),
and reports sentences/s, the peak resident memory of the command and its workers, and the model
load time (the command on a single sentence, minus Python start-up). Baseline in the same run:
spaCy's parse alone on the same sentences (every model feature needs it), so the ratio says what
the other parsers and the LM cost on top.

Usage: python bench/score.py [--sentences 2000] [--jobs 2] [--model models/default]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# bench/ holds http.py, whose name would hide the standard library's `http`: take bench/ off
# the path, import helpers as `bench._data`.
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from bench._data import sentences


def _run(argv: list[str], stdin_path: Path | None = None) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MiB (largest child process), stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    with open(stdin_path or os.devnull) as stdin:
        done = subprocess.run(argv, stdin=stdin, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return wall, peak, done.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--model", default=str(ROOT / "models" / "default"))
    args = ap.parse_args()
    texts = sentences(args.sentences)
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "in.txt"
        data.write_text("\n".join(texts) + "\n")
        one = Path(tmp) / "one.txt"
        one.write_text(texts[0] + "\n")

        t_python, _, _ = _run([python, "-c", "import scorer.cli"])
        base = [python, "-m", "scorer.cli", "score", "--model", args.model]
        t_one, peak_one, _ = _run([*base, str(one)])
        print(f"model load (score 1 sentence, minus imports): {t_one - t_python:.2f} s")
        print(f"peak RSS, one sentence: {peak_one:.0f} MiB")

        code = (
            "from features.parsing import parse, load_nlp; import time; load_nlp(); "
            "parse(['Warm up.']); t = time.perf_counter(); "
            f"parse(open({str(data)!r}).read().splitlines()); print(time.perf_counter() - t)"
        )
        _, _, out = _run([python, "-c", code])
        spacy_rate = len(texts) / float(out.strip())
        print(f"baseline: spaCy parse alone, 1 process: {spacy_rate:.0f} sent/s")

        for jobs in sorted({1, args.jobs}):
            argv = [*base, "--jobs", str(jobs)]
            t_start, _, _ = _run([*argv, str(one)])
            wall, peak, out = _run([*argv, str(data)])
            assert len(out.splitlines()) == len(texts)
            # Throughput without start-up: the same command on one sentence is subtracted.
            rate = (len(texts) - 1) / max(wall - t_start, 1e-9)
            print(
                f"fluency score --jobs {jobs}: {len(texts)} sentences in {wall:.1f} s wall; "
                f"{rate:.1f} sent/s after start-up ({rate / spacy_rate:.3f}x spaCy alone); "
                f"peak RSS {peak:.0f} MiB (largest process)"
            )


if __name__ == "__main__":
    main()
