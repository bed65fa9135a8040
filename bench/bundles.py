"""Memory and load time of several model bundles in one process: loaded together with
`scorer.load_scorers` (bundles on the same GLEU base share the LM, the parsers and the feature
rows) or apart, one `load_scorer` each (as two services would hold them).

Each set is loaded in a fresh process, warmed up with one sentence through every model (so the
LM, Link Grammar and spaCy are loaded), and its resident memory (VmRSS) read then.

    python -m bench.bundles                          # default; data-to-text; both, both ways
    python -m bench.bundles --set default,fast --set default,data-to-text

Expected: two bundles on one base, loaded together, cost what the larger of them costs alone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from bench._args import parser

SENTENCE = "The committee will meet again next week to discuss the budget."
DEFAULT_SETS = ["default", "data-to-text", "default,data-to-text"]


def _rss_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(names: list[str], together: bool) -> dict:
    """Load `names` in this process (together or apart), score one sentence with each."""
    from scorer import load_scorer, load_scorers

    base = _rss_mib()
    t0 = time.perf_counter()
    scorers = list(load_scorers(names).values()) if together else [load_scorer(n) for n in names]
    for s in scorers:
        s.score([SENTENCE])
    return {
        "seconds": time.perf_counter() - t0,
        "rss_mib": _rss_mib(),
        "added_mib": _rss_mib() - base,
        "resources": len({id(s.resources) for s in scorers}),
        "rows": len({id(s.rows) for s in scorers}),
    }


def main(argv=None) -> int:
    ap = parser(__doc__)
    ap.add_argument("--set", action="append", help="bundles, comma-separated; repeat")
    # One measurement, in a fresh process (what the table's rows run).
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--apart", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child.split(","), together=not args.apart)))
        return 0
    print(f"{'bundles':28} {'loaded':9} {'RSS MiB':>8} {'+MiB':>6} {'load s':>7} resources rows")
    for spec in args.set or DEFAULT_SETS:
        for apart in (False, True) if "," in spec else (False,):
            cmd = [sys.executable, "-m", "bench.bundles", "--child", spec]
            out = subprocess.run(cmd + ["--apart"] * apart, capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(out.stderr)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            how = "apart" if apart else "together"
            print(
                f"{spec:28} {how:9} {r['rss_mib']:8.0f} {r['added_mib']:6.0f} "
                f"{r['seconds']:7.2f} {r['resources']:9d} {r['rows']:4d}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
