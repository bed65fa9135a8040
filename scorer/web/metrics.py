"""Prometheus metrics at GET /metrics (prometheus_client); METRICS off (FLUENCY_METRICS=0): 404.

What is exported (labels never hold request text, a URL as sent or a request id):

- `fluency_http_requests_total{endpoint, status}`: `endpoint` is the route's template
  (`/v1/rerank`); requests no route answers (404, 405) all count as `unmatched`.
- `fluency_http_request_duration_seconds{endpoint}`: histogram, first request hook to response.
- `fluency_texts_scored_total{endpoint, model, genre}`: texts given a fluency score by requests
  that succeeded (/v1/score sentences, /v1/rerank candidates, /v1/explain sentences), by the
  loaded model that scored them (FLUENCY_MODELS: the one a request names, else the default) and
  the head it scored with (`general`, or one of the genre heads its card ships).
- `fluency_http_problems_total{type}`: problem-details answers by type slug (scorer/web/errors.py).
- `fluency_model_info{name, model_sha256, default}` (always 1), one series per loaded model, and
  `fluency_model_loaded_timestamp_seconds`: the models of the process answering the scrape, read
  at scrape time (so current after a reload).
- `fluency_worker_resident_memory_bytes`: resident set size (/proc/self/statm), set by each
  process when it starts a worker and after each request; under gunicorn one series per live
  worker (label `pid`).
- `fluency_worker_exits_total`: gunicorn workers that exited for any reason (recycled, replaced
  by a reload, killed); `fluency_model_reloads_total{result}`: model reloads on SIGHUP (`ok`,
  `failed`). Both are counted by the gunicorn master, so they appear under gunicorn only.

Under gunicorn each worker is a process of its own. gunicorn.conf.py sets
PROMETHEUS_MULTIPROC_DIR before the app is loaded (prometheus_client reads it when imported);
every process, the master too, then writes its values into files there, and a scrape, answered
by any worker, adds them up (prometheus_client's multiprocess mode). The master's `child_exit`
drops a dead worker's memory series and folds its counters and histograms into one archive file
a type (`archive_dead`), so recycling workers for weeks leaves two files, not two a worker, for
every scrape to read. Without that variable (one process, the Flask test client) the values
live in the app's own registry.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask, Response, current_app, g, request
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, multiprocess
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

__all__ = [
    "MULTIPROCESS",
    "UNMATCHED",
    "archive_dead",
    "model_reloaded",
    "register",
    "texts_scored",
    "worker_exited",
    "worker_started",
]

# prometheus_client chose its storage on import, from this same variable.
MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR" in os.environ
UNMATCHED = "unmatched"
# Seconds; requests stop at REQUEST_TIMEOUT (20 s by default).
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0)
_EXTENSION = "fluency_metrics"
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_master: dict[str, Counter] = {}  # counted by the gunicorn master's hooks


class _ModelCollector(Collector):
    """The served model, read from the app's holder at each scrape."""

    def __init__(self, app: Flask):
        self.app = app

    def collect(self) -> Iterator[Metric]:
        info = InfoMetricFamily("fluency_model", "The model this process serves", labels=[])
        loaded = GaugeMetricFamily(
            "fluency_model_loaded_timestamp_seconds", "When the served model was loaded"
        )
        current = self.app.extensions["fluency"].current
        if current is not None:
            for name, scorer in current.models.items():
                sha = str(scorer.card.get("model_sha256") or "")
                default = "true" if scorer is current.scorer else "false"
                info.add_metric([], {"name": name, "model_sha256": sha, "default": default})
            loaded.add_metric([], current.loaded_at)
        yield info
        yield loaded


class _Metrics:
    """One app's metric objects; in multiprocess mode they write to the shared folder."""

    def __init__(self, app: Flask):
        self.registry = None if MULTIPROCESS else CollectorRegistry()
        reg = self.registry
        self.requests = Counter(
            "fluency_http_requests_total",
            "HTTP requests answered, by route template and status",
            ["endpoint", "status"],
            registry=reg,
        )
        self.latency = Histogram(
            "fluency_http_request_duration_seconds",
            "Time to answer a request, by route template",
            ["endpoint"],
            buckets=BUCKETS,
            registry=reg,
        )
        self.texts = Counter(
            "fluency_texts_scored_total",
            "Texts given a fluency score by successful requests, by route template, model and "
            "genre head",
            ["endpoint", "model", "genre"],
            registry=reg,
        )
        self.problems = Counter(
            "fluency_http_problems_total",
            "Problem-details answers (refusals and errors), by type",
            ["type"],
            registry=reg,
        )
        # Made by the first process that sets it: a gauge made in the gunicorn master would
        # show the master as one more worker, at 0.
        self._rss: Gauge | None = None
        self._rss_lock = threading.Lock()
        self.model = _ModelCollector(app)
        if reg is not None:
            reg.register(self.model)

    def update_rss(self) -> None:
        rss = _resident_bytes()
        if rss is None:
            return
        if self._rss is None:
            with self._rss_lock:
                if self._rss is None:
                    self._rss = Gauge(
                        "fluency_worker_resident_memory_bytes",
                        "Resident set size of the process, after its last request",
                        registry=self.registry,
                        multiprocess_mode="liveall",
                    )
        self._rss.set(rss)

    def expose(self) -> Response:
        if self.registry is not None:
            registry = self.registry
        else:
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)
            registry.register(self.model)
        self.update_rss()
        encode, content_type = choose_encoder(request.headers.get("Accept", ""))
        with _folder_lock(exclusive=False):  # not while a dead worker's files are archived
            text = encode(registry)
        resp = Response(text, content_type=content_type)
        resp.headers["Cache-Control"] = "no-store"
        return resp


def _resident_bytes() -> int | None:
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):  # not Linux
        return None


def _master_counters() -> dict[str, Counter]:
    """The counters the master's hooks write; created at 0 so a scrape shows them from the start.

    Only in multiprocess mode: without it no other process would ever read them."""
    if MULTIPROCESS and not _master:
        _master["exits"] = Counter(
            "fluency_worker_exits_total",
            "Gunicorn workers that exited (recycled, replaced by a reload, killed)",
            registry=None,
        )
        reloads = Counter(
            "fluency_model_reloads_total",
            "Model reloads the gunicorn master ran on SIGHUP, by result",
            ["result"],
            registry=None,
        )
        for result in ("ok", "failed"):
            reloads.labels(result)
        _master["reloads"] = reloads
    return _master


def register(app: Flask) -> None:
    """Count every request of `app` and serve GET /metrics, unless METRICS is off."""
    if not app.config["METRICS"]:
        return
    metrics = _Metrics(app)
    app.extensions[_EXTENSION] = metrics
    _master_counters()

    @app.before_request
    def start_timer() -> None:
        g.metrics_started = time.perf_counter()

    @app.after_request
    def count(resp: Response) -> Response:
        endpoint = request.url_rule.rule if request.url_rule is not None else UNMATCHED
        started = g.get("metrics_started", time.perf_counter())
        metrics.requests.labels(endpoint, str(resp.status_code)).inc()
        metrics.latency.labels(endpoint).observe(time.perf_counter() - started)
        slug = g.get("problem_type")  # set by errors.problem
        if slug:
            metrics.problems.labels(slug).inc()
        metrics.update_rss()
        return resp

    app.add_url_rule("/metrics", "metrics", metrics.expose, methods=["GET"])


def texts_scored(n_texts: int, model: str, genre: str = "general") -> None:
    """Count `n_texts` scored by the loaded model `model` with its head for `genre` for the
    current request (a no-op when metrics are off). Model and genre names come from
    FLUENCY_MODELS and the loaded bundles' heads, never from the request: a request naming an
    unknown model or a genre its model has no head for is refused before anything is counted."""
    metrics = current_app.extensions.get(_EXTENSION)
    if metrics is not None and request.url_rule is not None:
        metrics.texts.labels(request.url_rule.rule, model, genre).inc(n_texts)


# Called from gunicorn.conf.py's hooks.


def worker_started(app: Flask | None) -> None:
    """In a new worker (post_fork): its memory series appears before its first request."""
    metrics = app.extensions.get(_EXTENSION) if app is not None else None
    if metrics is not None:
        metrics.update_rss()


def worker_exited(pid: int) -> None:
    """In the master (child_exit): count the exit, drop the worker's live series and archive
    its counters and histograms."""
    counters = _master_counters()
    if counters:
        counters["exits"].inc()
        multiprocess.mark_process_dead(pid)
        archive_dead(pid)


_ARCHIVED = ("counter", "histogram")  # summed over processes; gauges go with their process
_LOCK_FILE = ".scrape.lock"  # no `_`-separated type prefix: the collector never reads it


@contextmanager
def _folder_lock(*, exclusive: bool) -> Iterator[None]:
    """An flock on the metrics folder: scrapes share it, archiving takes it alone, so no scrape
    reads a dead worker's values both in its own file and in the archive (a counter that
    drops back afterwards would look like a reset to Prometheus)."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder:
        yield
        return
    with open(os.path.join(folder, _LOCK_FILE), "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def archive_dead(pid: int) -> None:
    """Add a dead process's counter and histogram values into `counter_archive.db` and
    `histogram_archive.db` and delete its own files. Sums are all a scrape makes of these types,
    so the scrape is unchanged; only the master calls this, one exit at a time.

    prometheus_client keeps every process's files for good (`mark_process_dead` removes only
    live gauges); with workers recycled every thousand requests the folder and each scrape's
    reading would grow without bound. Its `MmapedDict` is the file format, used as it is."""
    from prometheus_client.mmap_dict import MmapedDict

    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder:
        return
    with _folder_lock(exclusive=True):
        for kind in _ARCHIVED:
            dead = os.path.join(folder, f"{kind}_{pid}.db")
            if not os.path.exists(dead):
                continue
            archive = MmapedDict(os.path.join(folder, f"{kind}_archive.db"))
            try:
                for key, value, timestamp, _ in MmapedDict.read_all_values_from_file(dead):
                    old, _ = archive.read_value(key)
                    archive.write_value(key, old + value, timestamp)
            finally:
                archive.close()
            os.remove(dead)


def model_reloaded(ok: bool) -> None:
    """In the master (on_reload): count a model reload and its result."""
    counters = _master_counters()
    if counters:
        counters["reloads"].labels("ok" if ok else "failed").inc()
