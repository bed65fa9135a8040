"""Batch scoring on a Dask cluster (`dask.distributed`): one machine's cores, or many machines.

Each worker process loads the model bundle once, when it joins (`ScorerPlugin`), and checks that
it loaded the very bundle the client named (the card's `model_sha256`; `load_scorer` has already
checked the file against its card). A task scores one whole partition with that scorer: the
parse, the extractors and the SVM run once per row, on one worker. Rows that cannot be scored
get a null score and a `reason` (`scorer.batch`); a worker that dies has its partition retried
elsewhere by Dask, and after `distributed.scheduler.allowed-failures` deaths the error says so.

    >>> from scorer.distributed import connect, score_dataframe
    >>> client = connect("local:2")                     # or "tcp://scheduler:8786"
    >>> scored = score_dataframe("texts.parquet", client=client, text_column="text")
    >>> scored.to_parquet("scored/")                     # every column, plus score and reason

Dask is an optional extra (`pip install 'fluency-scorer[dask]'`): nothing here imports it until
a function is called.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from scorer.batch import Outcome, score_rows
from scorer.errors import GenreError, InputError, ModelLoadError, ScorerError

__all__ = [
    "ScorerPlugin",
    "connect",
    "model_sha256",
    "register_scorer",
    "score_chunks",
    "score_dataframe",
]

logger = logging.getLogger(__name__)

PLUGIN = "fluency-scorer"
WARM_UP = "The company said profits rose in the first quarter."
CONNECT_TIMEOUT = 10.0  # seconds: an unreachable scheduler is an error, not a hang


def _missing(exc: ImportError) -> ScorerError:
    return ScorerError(
        f"Dask is not installed ({exc.name} is missing): pip install 'fluency-scorer[dask]'"
    )


def _distributed():
    try:
        import distributed
    except ImportError as exc:
        raise _missing(exc) from exc
    return distributed


def _dataframe():
    try:
        import dask.dataframe
    except ImportError as exc:
        raise _missing(exc) from exc
    return dask.dataframe


def connect(scheduler: str, *, timeout: float = CONNECT_TIMEOUT, quiet: bool = False):
    """A `distributed.Client`. "local:N" starts a LocalCluster of N worker processes of one
    thread each (the parsers are CPU-bound and hold the GIL: processes, not threads) on the
    loopback interface; anything else is a scheduler's address ("tcp://host:8786"). `quiet`
    keeps Dask's own logs (workers starting and stopping, their tracebacks) off stderr: what
    goes wrong reaches the caller as an exception."""
    distributed = _distributed()
    if quiet:
        logging.getLogger("distributed").setLevel(logging.ERROR)
    if scheduler.startswith("local:"):
        try:
            n = int(scheduler.removeprefix("local:"))
        except ValueError:
            n = 0
        if n < 1:
            raise InputError(f"--dask {scheduler!r}: give local:N with N >= 1 workers")
        cluster = distributed.LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",  # no fixed port: clusters side by side, no warning
            scheduler_kwargs={"dashboard": False},
            silence_logs=logging.CRITICAL if quiet else logging.WARNING,
        )
        return distributed.Client(cluster)
    try:
        client = distributed.Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ScorerError(
            f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s ({exc}); "
            "start one with `dask scheduler` and give its address, or use local:N"
        ) from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (TimeoutError, OSError):
        client.close()
        raise ScorerError(
            f"the Dask scheduler at {scheduler} has no workers after {timeout:g} s; "
            f"start some with `dask worker {scheduler}`"
        ) from None
    return client


def model_sha256(model: str | Path | None, config: Mapping[str, Any]) -> str:
    """The bundle's `model_sha256`, read from its card on the client (the model is not loaded
    here: only the workers need it)."""
    from scorer.bundle import CARD_FILE

    path = Path(model or config["MODEL_PATH"])
    if not path.is_absolute() and not path.exists():
        path = Path(config["MODELS_DIR"]) / path
    try:
        card = json.loads((path / CARD_FILE).read_text())
        return str(card["model_sha256"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelLoadError(
            f"no model card with a model_sha256 at {path / CARD_FILE} ({exc}); give --model"
        ) from None


def _plugin_class():
    distributed = _distributed()

    class ScorerPlugin(distributed.WorkerPlugin):
        """Loads the scorer once per worker, off the worker's event loop (a load takes seconds
        and the worker must keep answering the scheduler), and keeps why it failed."""

        name = PLUGIN

        def __init__(self, model, config: Mapping[str, Any], sha256: str):
            self.model, self.config, self.sha256 = model, dict(config), sha256
            self.scorer = None
            self.error: str | None = None

        async def setup(self, worker) -> None:
            # In the thread that will run the tasks: the parsers then stay in one thread.
            executor = worker.executors.get("default")
            try:
                loop = asyncio.get_running_loop()
                self.scorer = await loop.run_in_executor(executor, self._load)
            except Exception as exc:
                self.error = f"worker {worker.address} cannot load the model: {exc}"
                raise ModelLoadError(self.error) from None

        @staticmethod
        def _here(config: Mapping[str, Any]) -> dict[str, Any]:
            """The client's settings, except a models folder this machine lacks: then the
            bundle is looked for where this worker's installation keeps its models (the same
            wheel installed everywhere ships the same default bundle; the hash says so)."""
            from scorer.config import DEFAULTS

            config = dict(config)
            if not Path(config["MODELS_DIR"]).is_dir():
                ours = Path(DEFAULTS["MODELS_DIR"])
                if Path(config["MODEL_PATH"]).parent == Path(config["MODELS_DIR"]):
                    config["MODEL_PATH"] = str(ours / Path(config["MODEL_PATH"]).name)
                config["MODELS_DIR"] = str(ours)
            return config

        def _load(self):
            from features.resources import one_thread_per_process
            from scorer.scoring import load_configured

            one_thread_per_process()
            scorer = load_configured(self.model, self._here(self.config))
            # The parsers and the LM load on first use: one sentence loads them now, so the
            # first partition is not slower and a missing resource fails here, not mid-run.
            scorer.score_texts([WARM_UP])
            found = str(scorer.card.get("model_sha256"))
            if found != self.sha256:
                raise ModelLoadError(
                    f"its bundle {self.model or self.config['MODEL_PATH']} has model_sha256 "
                    f"{found[:12]}..., the client's has {self.sha256[:12]}...: give every worker "
                    "the same bundle (shared storage, or the same installed version)"
                )
            return scorer

    return ScorerPlugin


def ScorerPlugin(model, config: Mapping[str, Any], sha256: str):  # noqa: N802 - a class to users
    """The worker plugin (built on first use, so importing this module needs no Dask)."""
    return _plugin_class()(model, config, sha256)


def register_scorer(client, model: str | Path | None, config: Mapping[str, Any]) -> str:
    """Make every worker (and every one that joins later) load the model; raises if one cannot.
    Returns the bundle's hash."""
    sha = model_sha256(model, config)
    plugin = ScorerPlugin(str(model) if model else None, config, sha)
    try:
        client.register_plugin(plugin, name=PLUGIN)
    except ScorerError:
        raise
    except Exception as exc:
        raise ModelLoadError(f"a Dask worker cannot load the model: {exc}") from None
    return sha


def _worker_scorer():
    from distributed import get_worker

    try:
        worker = get_worker()
    except ValueError:
        raise ModelLoadError(
            "scoring ran outside a Dask worker: compute the result with the client given to "
            "score_dataframe (client.compute(frame), or frame.compute() with it as default)"
        ) from None
    plugin = worker.plugins.get(PLUGIN)
    if plugin is None or plugin.scorer is None:
        raise ModelLoadError(
            (plugin.error if plugin is not None else None)
            or "this worker has no model loaded: call register_scorer(client, model, config)"
        )
    return plugin.scorer


def score_partition(
    texts: list,
    with_features: bool = False,
    aggregate: str | None = None,
    genre: str | None = None,
):
    """Run on a worker: one `Outcome` per text, with the worker's scorer and its head for
    `genre` (None: the head it scores with already)."""
    try:
        scorer = _worker_scorer().for_genre(genre)
    except GenreError as exc:  # its arguments do not survive pickling back to the client
        raise InputError(str(exc)) from None
    return score_rows(scorer, texts, with_features=with_features, aggregate=aggregate)


def _result(future, index: int):
    from distributed import KilledWorker

    try:
        return future.result()
    except KilledWorker as exc:
        raise ScorerError(
            f"Dask workers died while scoring partition {index} ({exc}); it was retried on "
            "other workers each time. Look at the workers' logs (out of memory?)"
        ) from None


def score_chunks(
    client,
    chunks: Iterable[list[dict]],
    text_column: str,
    *,
    window: int,
    with_features: bool = False,
    aggregate: str | None = None,
    genre: str | None = None,
) -> Iterator[tuple[list[dict], list[Outcome]]]:
    """(rows, outcomes) per chunk, in input order, as the workers finish them, scored with the
    model's head for `genre` (None: the one it scores with already). At most `window` chunks
    are in flight, so input of any length takes bounded memory on the client."""
    pending: deque = deque()
    try:
        for index, rows in enumerate(chunks):
            texts = [row.get(text_column) for row in rows]
            future = client.submit(
                score_partition, texts, with_features, aggregate, genre, pure=False
            )
            pending.append((index, rows, future))
            if len(pending) >= window:
                index, rows, future = pending.popleft()
                yield rows, _result(future, index)
        while pending:
            index, rows, future = pending.popleft()
            yield rows, _result(future, index)
    finally:
        for _, _, future in pending:
            future.cancel()


def _score_frame(frame, text_column: str, aggregate: str | None, genre: str | None = None):
    import pandas as pd

    texts = frame[text_column].tolist() if len(frame) else []
    texts = [t if isinstance(t, str) else None for t in texts]
    outcomes = score_partition(texts, False, aggregate, genre)
    return frame.assign(
        score=pd.Series(
            [o.score.score if o.score else None for o in outcomes],
            index=frame.index,
            dtype="float64",
        ),
        reason=pd.Series([o.reason for o in outcomes], index=frame.index, dtype="string"),
    )


def read_dataframe(path: str, *, text_column: str = "text", blocksize: int = 1 << 22):
    """A Dask DataFrame from Parquet, JSON Lines or plain text (one text a line, in
    `text_column`). The workers read it: the path must be one they can see."""
    from scorer.tables import format_of

    dd = _dataframe()
    fmt = format_of(path)
    if fmt == "parquet":
        return dd.read_parquet(path)
    if fmt == "jsonl":
        return dd.read_json(path, lines=True, blocksize=blocksize)
    import dask.bag

    lines = dask.bag.read_text(path, blocksize=blocksize)
    return lines.map(lambda line: {text_column: line.rstrip("\n").rstrip("\r")}).to_dataframe()


def score_dataframe(
    data,
    *,
    client,
    model: str | Path | None = None,
    config: Mapping[str, Any] | None = None,
    text_column: str = "text",
    aggregate: str | None = None,
    genre: str | None = None,
):
    """`data` (a Dask DataFrame, or a path for `read_dataframe`) with two more columns: `score`
    (float, null when the row could not be scored) and `reason` (why not; null otherwise),
    scored with the model's head for `genre` (None: the one it scores with already).
    Lazy, as Dask DataFrames are; every worker of `client` loads the model now. Scores equal
    `fluency score`'s when the partitions are the same batches (`--chunk` rows each); other
    batchings may differ in the last bits of a float."""
    import pandas as pd

    from scorer.config import DEFAULTS

    dd = _dataframe()
    config = dict(DEFAULTS if config is None else config)
    register_scorer(client, model, config)
    frame = (
        data
        if isinstance(data, dd.DataFrame)
        else read_dataframe(str(data), text_column=text_column)
    )
    if text_column not in frame.columns:
        raise InputError(
            f"no column {text_column!r}; the columns are {', '.join(map(str, frame.columns))}"
        )
    meta = frame._meta.assign(score=pd.Series(dtype="float64"), reason=pd.Series(dtype="string"))
    return frame.map_partitions(_score_frame, text_column, aggregate, genre, meta=meta)
