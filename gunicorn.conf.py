"""Gunicorn settings and hooks for `gunicorn wsgi:app` (read from the working directory).

- Threads: with --preload the model, spaCy (and torch, for constituency.v1) are loaded in the master
  and shared by forked workers. OpenMP and BLAS thread pools started before a fork can hang in
  the child, and 2 workers on 2 cores gain nothing from more threads anyway: one thread each.
  SmolLM2's passes of one request run side by side on one lane a core (FLUENCY_NEURAL_LANES,
  features/neural_lanes.py: threads made for the request), so a lone client's neural rerank
  uses the cores the idle workers leave; with every worker busy the lanes share the cores.
- Threaded workers (gthread, `threads` each): health checks, the model card and refusals are
  answered by a free thread while a long request runs. Scoring still runs one request at a time
  per process (scorer/web/work.py: a lock with a short queue, 503 when it is full), so spaCy
  and torch are never called from two threads at once. Each request stops at its own deadline
  (FLUENCY_REQUEST_TIMEOUT, 20 s) with a 503, well before `timeout`; with gthread the worker's
  heartbeat runs in its main thread, so a long request no longer gets the worker killed.
- Balancing (scorer/web/balance.py): a gthread worker accepts connections even while it scores,
  and keeps them alive, so clients pile up on one worker while another idles. The workers share
  their loads; a worker leaves a new connection to a less loaded one and closes a kept-alive
  connection when it holds two requests more than the least loaded.
- Model swap: SIGHUP to the master (or POST /v1/admin/reload, which sends it) runs `on_reload`:
  the master loads the requested bundle into the preloaded app (a failure is logged and the old
  model kept), then gunicorn forks new workers from it and retires the old ones gracefully.
  Admin reloads are coalesced (scorer/web/reloads.py): one pending at a time, so at most one
  SIGHUP is in flight; `on_reload` frees that claim when it is done.
- Recycling: a worker is replaced after `max_requests` requests (plus up to
  `max_requests_jitter`, drawn per worker, so they do not all go at once), to bound what a
  process accumulates over weeks (spaCy's memory zones free its new words already:
  features/parsing.py). The request that reaches the count is answered with `Connection: close`;
  requests already accepted, and those arriving on kept-alive connections while it winds down,
  are answered before it exits (gunicorn's gthread worker), and the listening socket stays with
  the master, so new connections wait in its backlog for the other workers and the replacement,
  forked from the preloaded master. tests/web/test_lifecycle.py checks that no request fails.
- Metrics (scorer/web/metrics.py, GET /metrics): prometheus_client's multiprocess mode. Every
  process writes its metrics into files in PROMETHEUS_MULTIPROC_DIR, set below before the app is
  loaded (a given folder loses its old files; otherwise a fresh temporary folder per master), so
  a scrape answered by any worker adds up all of them. The master counts worker exits
  (`child_exit`, which also drops a dead worker's memory series) and model reloads
  (`on_reload`); `on_exit` removes the files.
"""

import os
import sys

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("FLUENCY_NEURAL_LANES", str(os.cpu_count() or 1))

MALLOC_ARENAS = 2  # glibc's MALLOC_ARENA_MAX, unless set in the environment (then glibc's own)


def _malloc_arenas():
    # glibc gives a thread that allocates while another holds an arena one of its own, up to 8
    # per core, and keeps what is freed in each: a worker whose 40 threads take turns scoring
    # ends up holding the peak of every arena. Two arenas, set here in the master before
    # anything runs in threads (workers inherit it), kept a worker's RSS 90 MiB lower
    # (docs/benchmarks.md, "Memory over time"). Not glibc (musl, macOS): nothing to do.
    if "MALLOC_ARENA_MAX" in os.environ:
        return
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt(-8, MALLOC_ARENAS)  # -8: M_ARENA_MAX in glibc's malloc.h
    except (OSError, AttributeError, TypeError):
        pass


_malloc_arenas()


def _metrics_folder():
    # Before prometheus_client is imported (it reads the variable then). A SIGHUP runs this
    # file again in the same master: the folder it made or cleaned is kept then.
    import glob
    import tempfile

    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder and os.environ.get("FLUENCY_METRICS_FOLDER") == folder:
        return
    if folder:
        os.makedirs(folder, exist_ok=True)
        for path in glob.glob(os.path.join(folder, "*.db")):  # a previous server's counts
            os.remove(path)
        os.environ["FLUENCY_METRICS_FOLDER_MADE"] = ""
    else:
        folder = tempfile.mkdtemp(prefix="fluency-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = folder
        os.environ["FLUENCY_METRICS_FOLDER_MADE"] = folder
    os.environ["FLUENCY_METRICS_FOLDER"] = folder


def _remove_metrics_folder():
    import glob
    import shutil

    folder = os.environ.get("FLUENCY_METRICS_FOLDER")
    if not folder:
        return
    if os.environ.get("FLUENCY_METRICS_FOLDER_MADE") == folder:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        for path in glob.glob(os.path.join(folder, "*.db")):
            os.remove(path)


_metrics_folder()

workers = int(os.environ.get("WEB_CONCURRENCY", os.cpu_count() or 2))  # --workers wins
worker_class = "scorer.web.balance.BalancedThreadWorker"  # gthread, balanced by load
threads = 40  # 1 scoring + FLUENCY_MAX_QUEUE (32) waiting + 7 always free for cheap requests
timeout = 60  # a worker silent this long is restarted; requests stop at 20 s (REQUEST_TIMEOUT)
graceful_timeout = 30
backlog = 256


def _recycling():
    # FLUENCY_MAX_REQUESTS and FLUENCY_MAX_REQUESTS_JITTER, defaults in scorer/config.py
    # (--max-requests and --max-requests-jitter win).
    from scorer.config import from_env

    config = from_env()
    return config["MAX_REQUESTS"], config["MAX_REQUESTS_JITTER"]


max_requests, max_requests_jitter = _recycling()


def pre_fork(server, worker):
    # Runs in the master before each fork. Objects the garbage collector has seen get their
    # reference-count and GC header pages written when it next scans them, which copies those
    # pages into every worker; frozen objects are never scanned, so the preloaded model, spaCy
    # and the parsers stay shared (measured: python -m bench.load).
    import gc

    gc.collect()
    gc.freeze()


def post_fork(server, worker):
    # Apps created after the fork (no --preload) read this in create_app; a preloaded app
    # already exists, so it is told directly.
    os.environ["FLUENCY_GUNICORN_MASTER_PID"] = str(server.pid)
    app = server.app.callable
    if app is not None:
        app.config["GUNICORN_MASTER_PID"] = server.pid
        from scorer.web.metrics import worker_started

        worker_started(app)  # its memory series, before its first request
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def worker_exit(server, worker):
    # Runs in the worker as it leaves: gunicorn's `finally` after its SystemExit, which is still
    # in flight. A worker forked from a master that loaded the neural tier inherits ONNX
    # Runtime's objects but not its thread, so ONNX Runtime's C++ destructors at exit either wait
    # forever on that thread (the worker hangs until the master kills it at graceful_timeout)
    # or abort (std::system_error, SIGABRT). Such a worker runs Python's exit handlers (logging's
    # flush, finalizers), then leaves with its exit code and no C++ destructors.
    if "onnxruntime" not in sys.modules:
        return
    import atexit

    code = _exit_code(sys.exc_info()[1])
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _exit_code(exc: BaseException | None) -> int:
    """The status the interpreter would exit with, for the exception leaving the process."""
    if exc is None:
        return 0
    if isinstance(exc, SystemExit):
        code = exc.code
        return 0 if code is None else code if isinstance(code, int) else 1
    return 1


def on_reload(server):
    from scorer.web.reloads import release_signalled

    try:
        _reload_model(server)
    finally:
        release_signalled(server.pid)  # the next admin reload may now be accepted


def child_exit(server, worker):
    from scorer.web.metrics import worker_exited

    worker_exited(worker.pid)


def on_exit(server):
    from scorer.web.reloads import forget

    forget(server.pid)  # the reload lock and stamp files named after this master
    _remove_metrics_folder()


def _reload_model(server):
    from scorer.errors import ScorerError
    from scorer.web.metrics import model_reloaded
    from scorer.web.state import consume_reload_target

    target = consume_reload_target(server.pid)
    if target:
        os.environ["FLUENCY_MODEL_PATH"] = target  # for workers that build their own app
    app = server.app.callable
    if app is None:  # not preloaded: each new worker loads FLUENCY_MODEL_PATH itself
        return
    holder = app.extensions["fluency"]
    try:
        loaded = holder.reload(target)
    except ScorerError as exc:
        model_reloaded(ok=False)
        server.log.error("model reload failed, still serving the old model: %s", exc)
    else:
        model_reloaded(ok=True)
        server.log.info("reloaded model %s from %s", loaded.scorer.name, loaded.path)
