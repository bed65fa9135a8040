"""SmolLM2's passes of one batch run side by side on the CPU: `FLUENCY_NEURAL_LANES` at once.

A pass on one thread spends three quarters of its time in the 4-bit matrix products
(`MatMulNBits`), which cost the same per token however the tokens are batched, so a batch takes
the sum of its texts' passes whatever the padding. A gunicorn worker runs one thread
(OMP_NUM_THREADS=1) because the workers share the cores, yet it scores one request at a time,
and a lone client leaves the other workers' cores idle. Lanes use them: each lane is a thread
of the call that takes the next pass, so two lanes on two cores read an 8-candidate list in
about half the time. Each pass is whole (the same text in the same pass), so every value is
the same to the bit. They add no operation, only threads; when every worker is busy the lanes
share the cores, a little slower than one thread each (4 clients on 2 workers: p50 0.97-1.16
times; docs/benchmarks.md, "The neural tier").

The threads are made for each call and gone after it, so a process forked after a call (the
preloaded gunicorn master warms its models up) inherits none. Default 1: a process that runs
ONNX Runtime's own threads on every core (the CLI), or one of several processes that each take
a core (`--jobs N`, training), gains nothing from more; gunicorn.conf.py sets it to the cores.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from features.errors import ModelLoadError

__all__ = ["lanes_from_env", "side_by_side"]

T = TypeVar("T")
R = TypeVar("R")


def lanes_from_env() -> int:
    """FLUENCY_NEURAL_LANES: passes one batch runs at once on the CPU (default 1)."""
    given = (os.environ.get("FLUENCY_NEURAL_LANES") or "1").strip()
    if not given.isdigit() or int(given) < 1:
        raise ModelLoadError(
            f"FLUENCY_NEURAL_LANES must be a whole number of passes at once, 1 or more, not "
            f"{given!r}; the cores a process may use is the most that helps"
        )
    return int(given)


def side_by_side(run: Callable[[T], R], items: Sequence[T], lanes: int) -> list[R]:
    """`[run(item) for item in items]`, up to `lanes` at once on threads of this call (each
    takes the next item when done, so a lane the system slows takes fewer); the first error
    raised is raised here."""
    if lanes <= 1 or len(items) <= 1:
        return [run(item) for item in items]
    with ThreadPoolExecutor(min(lanes, len(items)), thread_name_prefix="neural-lane") as pool:
        return list(pool.map(run, items))
