"""The development files' outputs with SmolLM2's states, for `training.heads.learned.ridge`: each
file cut by whole inputs to what a head is fitted on, its texts filled and read whole as the scorer
reads them, the states of every layer the graph returns and both poolings
(`features.neural_states.pooled_states`) computed in worker processes and kept under
`build/states` by the file's SHA-256, the cut and the graph's layers."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from training.heads.data.judged import HeadFile
from training.heads.learned.store import load_stored, store_folder, text_states

__all__ = [
    "StateFile",
    "state_files",
    "state_files_from_rows",
]


@dataclass
class StateFile:
    """One judged file's fitted outputs (`--train-outputs`): human scores, groups, pooled
    states [n, layers, poolings, 576], SmolLM2's summed log-probability; and the positions of
    its judged outputs (`--max-outputs`) among them."""

    name: str
    genre: str
    human: np.ndarray
    states: np.ndarray
    logprob: np.ndarray
    judged: np.ndarray  # positions of the judged HeadFile's outputs in these

    @property
    def target(self) -> np.ndarray:
        sd = float(np.std(self.human))
        return (self.human - self.human.mean()) / (sd if sd > 0 else 1.0)


def state_files(
    scorer,
    paths: Sequence[Path],
    genres: Mapping[str, str],
    judged: Sequence[HeadFile],
    *,
    train_outputs: int,
    train_words: int,
    max_outputs: int,
    max_words: int,
    seed: int,
    jobs: int,
    cache_dir: Path,
) -> list[StateFile]:
    """Each file cut to `train_outputs`/`train_words` by whole inputs (`train_outputs` below 0:
    every output), with its states, texts filled and read whole as the scorer reads them: taken
    from the store of every rated output (`cache_dir / "store"`,
    `training.heads.learned.store`) where the file's entry is complete, else kept under
    `cache_dir` by the file's SHA-256, the cut and the graph."""
    from features.neural_lm import load_neural
    from features.placeholders import fill_placeholders
    from scorer.evidence.benchmark_data import read_judged, sample_outputs
    from scorer.evidence.genres import FLUENCY_FIELDS

    lm = scorer.resources.get("neural", load_neural)
    by_name = {f.name: f for f in judged}
    out = []
    for path in paths:
        data = read_judged(path, human_field=FLUENCY_FIELDS.get(path.stem, "score"))
        words = [len(t.split()) for t in data.texts]
        every = train_outputs < 0  # every rated output, whatever its words
        keep = sample_outputs(
            data.groups, max(train_outputs, 0), seed, words, 0 if every else train_words
        )
        shown = sample_outputs(data.groups, max_outputs, seed, words, max_words)
        where = {int(i): k for k, i in enumerate(keep)}
        if any(int(i) not in where for i in shown):
            raise RuntimeError(f"{data.name}: the judged outputs are not among the fitted ones")
        texts = fill_placeholders([data.texts[i] for i in keep], scorer.placeholders)
        key = json.dumps(
            [data.sha256, train_outputs, train_words, seed, lm.layers, scorer.placeholders]
        )
        file = cache_dir / f"{data.name}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.npz"
        stored = store_folder(cache_dir / "store", path, scorer.placeholders, lm.layers)
        if stored.complete:  # every rated output read once: the cut is a choice of rows
            states, logprob = load_stored(stored, keep)
        elif file.is_file():
            with np.load(file) as z:
                states, logprob = z["states"], z["logprob"]
        else:
            states, logprob, _ = text_states(texts, jobs)
            cache_dir.mkdir(parents=True, exist_ok=True)
            np.savez(file, states=states, logprob=logprob)
        judged_rows = np.array([where[int(i)] for i in shown])
        if not np.array_equal(by_name[data.name].human, data.human[keep][judged_rows]):
            raise RuntimeError(f"{data.name}: the judged outputs differ from the head files'")
        out.append(
            StateFile(
                data.name,
                genres.get(data.name, data.name),
                np.asarray(data.human, dtype=float)[keep],
                states,
                logprob,
                judged_rows,
            )
        )
    return out


def state_files_from_rows(
    fitted: Sequence[HeadFile],
    judged: Sequence[HeadFile],
    paths: Sequence[Path],
    *,
    fit_cut: tuple[int, int],
    judged_cut: tuple[int, int],
    seed: int,
) -> list[StateFile]:
    """Each file's `fitted` outputs (read with the columns only a learned head reads, cut to
    `fit_cut` outputs and words) as a `StateFile` of the one layer and pooling the states
    extractor gives (`neural_states.v1`, the whole text read at once) and the summed
    log-probability: no pass of SmolLM2 beyond the rows'. The `judged` outputs (`judged_cut`,
    the same seed) are located among them as `state_files` locates them."""
    from features.neural_states import STATE_NAMES
    from scorer.evidence.benchmark_data import read_judged, sample_outputs
    from scorer.evidence.genres import FLUENCY_FIELDS

    by_name = {f.name: f for f in fitted}
    shown_by = {f.name: f for f in judged}
    columns = [f"neural_states.v1/{n}" for n in STATE_NAMES]
    out = []
    for path in paths:
        data = read_judged(path, human_field=FLUENCY_FIELDS.get(path.stem, "score"))
        words = [len(t.split()) for t in data.texts]
        keep = sample_outputs(data.groups, fit_cut[0], seed, words, fit_cut[1])
        shown = sample_outputs(data.groups, judged_cut[0], seed, words, judged_cut[1])
        where = {int(i): k for k, i in enumerate(keep)}
        if any(int(i) not in where for i in shown):
            raise RuntimeError(f"{data.name}: the judged outputs are not among the fitted ones")
        f = by_name[data.name]
        if len(f.human) != len(keep):
            raise RuntimeError(f"{data.name}: {len(f.human)} rows read, {len(keep)} cut")
        whole = f.columns["whole"]
        states = np.column_stack([whole[c] for c in columns])[:, None, None, :]
        rows = np.array([where[int(i)] for i in shown])
        if not np.array_equal(shown_by[data.name].human, f.human[rows]):
            raise RuntimeError(f"{data.name}: the judged outputs differ from the head files'")
        out.append(
            StateFile(f.name, f.genre, f.human, states, whole["neural.v2/logprob_sum"], rows)
        )
    return out
