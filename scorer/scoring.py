"""`FluencyScorer`: texts in, fluency scores out.

A bundle has two stages. The GLEU stage (`scorer.gleu_stage`) gives the GLEU score, the SVM's
signed distance to its hyperplane; a head, the second stage (`scorer.heads`: a general
one and one per genre), maps it and a few columns onto people's scale, and that is then the
fluency score. Loading a bundle: `load_scorer`; the files its features read: `scorer.artefacts`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from features.placeholders import DEFAULT_PLACEHOLDERS, fill_placeholders, parse_placeholders
from features.resources import MODELS_DIR, Resources
from features.rows import FeatureCache, FeatureRows
from features.segment import resolve_aggregate, segment
from features.sentence import Sentence
from scorer.artefacts import recorded_artefacts
from scorer.bundle import read_card
from scorer.errors import GenreError, ModelLoadError
from scorer.gleu_stage import PipelineGleuStage, load_gleu_stage
from scorer.head_features import reads_head_features_only, score_by_head_features
from scorer.heads import Head, load_genre_heads, load_head, without_general_head
from scorer.heads_report import read_heads_report
from scorer.limits import check_texts
from scorer.readings import bundle_readings, with_derived

__all__ = [
    "ALIASES",
    "FeatureCache",
    "FluencyScorer",
    "Score",
    "load_configured",
    "load_scorer",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Score:
    text: str
    # Fluency, larger is more fluent: the head's score where the bundle has heads (standard
    # deviations above the average judged output), else the GLEU score.
    score: float
    features: dict[str, float] = field(default_factory=dict)
    n_sentences: int = 1  # sentences the text was read as (1 when read whole)
    gleu: float = float("nan")  # the SVM's signed distance: > 0 on the side of real sentences


class FluencyScorer:
    """A loaded model with the resources (LM, parsers) its features need, loaded once.

    `model` is the GLEU stage, held as `gleu_svm`: a `scorer.gleu_stage.LinearGleuStage` (NumPy
    only), or a fitted sklearn pipeline (wrapped in a `PipelineGleuStage`). `pipeline` gives
    the fitted pipeline itself, loaded on first use when the scorer was built from the linear
    stage (`pipeline_loader`). `head` is the second stage it scores with (`scorer.heads`)."""

    def __init__(
        self,
        model,
        card: dict[str, Any],
        *,
        spacy_model: str | None = None,
        resources: Resources | None = None,
        cache_size: int = 0,
        placeholders: Sequence[str] = DEFAULT_PLACEHOLDERS,
        head: Head | None = None,
        pipeline_loader: Callable[[], Any] | None = None,
        heads: Mapping[str, Head] | None = None,
        folder: str | Path | None = None,
    ):
        self.gleu_svm = model if hasattr(model, "standardize") else PipelineGleuStage(model)
        self._pipeline_loader = pipeline_loader
        self.head = head
        # `heads`: one a genre (`for_genre`); `general` the bundle's own; `genre` None: general.
        self.general = head
        self.heads: dict[str, Head] = dict(heads or {})
        self.genre: str | None = None
        # Whole-token slot placeholders read as a name before parsing (features/placeholders.py).
        self.placeholders = tuple(placeholders)
        self.card = card
        # The bundle's folder (None: built in memory), where its held-out tables are read from.
        self.folder = None if folder is None else Path(folder)
        self.spacy_model = spacy_model
        self.resources = resources or Resources(spacy_model=spacy_model)
        # Every feature row this scorer reads comes from here (features/rows.py), kept in
        # memory for `cache_size` texts: a repeated candidate costs no parsing at all.
        self.rows = FeatureRows(self.features, self.resources, memory=cache_size)
        # Rows of the features only the heads read (`scorer.head_features`), shared by copies.
        self.head_rows: dict[tuple, FeatureRows] = {}

    def share_rows(self, rows: FeatureRows) -> None:
        """Read feature rows through `rows` (and its resources), which other scorers of the same
        extractors and artefacts may hold too (`scorer.bundles.load_scorers`): a text parsed for
        one of them is then not parsed again for another while it is in memory."""
        if tuple(rows.features) != tuple(self.features):
            raise ModelLoadError(
                f"model {self.name} reads {list(self.features)}, the rows given are of "
                f"{list(rows.features)}"
            )
        self.rows, self.resources = rows, rows.resources

    @property
    def genres(self) -> list[str]:
        """The genres a request may name: "general" (the bundle's own second stage, or its
        GLEU stage alone where it has none), then each genre head."""
        return ["general", *self.heads]

    def for_genre(self, genre: str | None) -> FluencyScorer:
        """This bundle scoring with the head of `genre` ("general": its general head; None:
        the head it scores with already), on the same GLEU stage, resources and feature rows;
        `GenreError` for a genre it has no head for, saying why when its card does."""
        if genre is None or genre == (self.genre or "general"):
            return self
        if genre == "general" and self.general is not None:
            head = self.general
        elif genre in self.heads:
            head = self.heads[genre]
        else:
            report = (self.card.get("heads_report") or {}).get(genre) or {}
            reason = report.get("decision") if isinstance(report, dict) else None
            if not reason:
                from scorer.evidence.genres import GENRE_NAMES

                known = genre in GENRE_NAMES or genre == "general"
                reason = "no head was fitted for it" if known else "not a genre this project knows"
            raise GenreError(self.name, genre, self.genres, str(reason))
        import copy

        scorer = copy.copy(self)
        scorer.head = head
        scorer.genre = None if genre == "general" else genre
        return scorer

    def gleu_stage(self) -> FluencyScorer:
        """This bundle without its heads: the GLEU stage alone, on the same resources and
        feature rows (nothing is loaded again). What a new head is fitted on (`fluency
        calibrate`, `fluency benchmark --protocol lodo`). Its card keeps the genre heads but
        not the general head, nor the summary that describes them."""
        import copy

        if self.head is None:
            return self
        bare = copy.copy(self)
        bare.head, bare.general, bare.heads, bare.genre = None, None, {}, None
        bare.card = without_general_head(self.card)
        bare.card.pop("summary", None)
        if bare.card.pop("head_features", None):  # the GLEU stage's own rows, not the heads'
            bare.rows = FeatureRows(bare.features, self.resources, memory=self.rows.memory.size)
        bare.card["name"] = f"{self.name} GLEU"
        return bare

    def heads_report(self) -> dict[str, Any]:
        """{genre: decision and full held-out table} of every head the card reports
        (`scorer.heads_report.read_heads_report`): read when asked, never to score."""
        return read_heads_report(self.folder, self.card)

    @property
    def cache(self) -> FeatureCache:
        """The rows kept in memory (`FLUENCY_FEATURE_CACHE` texts)."""
        return self.rows.memory

    @property
    def name(self) -> str:
        return str(self.card.get("name", "unnamed"))

    @property
    def features(self) -> tuple[str, ...]:
        """The extractors the model reads, by versioned name: its GLEU stage's, then those
        only its heads read (the card's `head_features`: SmolLM2's states on the neural tier)."""
        extra = [f for f in self.card.get("head_features") or () if f not in self.gleu_svm.features]
        return (*self.gleu_svm.features, *extra)

    @property
    def pipeline(self):
        """The fitted sklearn pipeline (imports scikit-learn when the scorer holds the linear
        GLEU stage)."""
        if isinstance(self.gleu_svm, PipelineGleuStage):
            return self.gleu_svm.pipeline
        if self._pipeline_loader is None:
            raise ModelLoadError(
                f"model {self.name} was given as a linear GLEU stage, without its pipeline"
            )
        self.gleu_svm = PipelineGleuStage(self._pipeline_loader())
        return self.gleu_svm.pipeline

    def decision(self, rows: Sequence[Mapping[str, float]]):
        """The GLEU score (signed distance) of each feature row."""
        return self.gleu_svm.decision_function(rows) if rows else []

    def annotate(self, texts: Sequence[str]) -> list[Sentence]:
        """Parse texts as this scorer's rows are parsed (spaCy without lemmas)."""
        return self.rows.annotate(texts)

    def sentence_rows(
        self,
        sentences: Sequence[str],
        parsed: Mapping[str, Sentence] | None = None,
        **options: Any,
    ) -> list[dict[str, float]]:
        """Feature rows of single sentences (`features.rows.FeatureRows.rows`: from memory, a
        store under `cache_dir`, `parsed` (keyed by text), else parsed and extracted);
        `options`: `cache_dir`, `n_jobs`, `progress`."""
        return self.rows.rows(sentences, parsed=parsed, **options)

    def score_texts(
        self,
        texts: Sequence[str],
        *,
        with_features: bool = False,
        parsed: Mapping[str, Sentence] | None = None,
        by_sentence: bool | None = None,
        aggregate: str | None = None,
        genre: str | None = None,
    ) -> list[Score]:
        """Score raw texts (callers check the input); texts and sentences in the cache are not
        parsed again, nor is one found in `parsed` (text -> Sentence). `genre`: score with the
        bundle's head for it (`for_genre`; None: the head it scores with already).

        `aggregate` says how a text of several sentences is read (`features.segment`): "whole"
        (as one sentence), or split at its own sentence-final punctuation and folded into one
        value, "weighted" (token-weighted mean), "mean" or "min" (its least fluent sentence);
        feature values are folded the same way. Unset: `by_sentence` (True "weighted", False
        "whole"), else `features.segment.DEFAULT_AGGREGATE`, chosen with `fluency benchmark`
        (docs/agreement.md). A text of one sentence scores the same under every choice.

        Slot placeholders (`self.placeholders`) are read as a name first; each Score keeps the
        text as given."""
        scorer = self.for_genre(genre)
        if scorer is not self:
            return scorer.score_texts(
                texts,
                with_features=with_features,
                parsed=parsed,
                by_sentence=by_sentence,
                aggregate=aggregate,
            )
        how = self.aggregate_for(by_sentence, aggregate)
        if not with_features and parsed is None and reads_head_features_only(self, how):
            found = score_by_head_features(self, texts, how)  # gleu not run: NaN
            return [Score(t, f, {}, n) for t, (f, n) in zip(texts, found, strict=True)]
        filled = fill_placeholders(texts, self.placeholders)
        seg = segment(filled, by_sentence=how != "whole")
        rows = self.sentence_rows(seg.sentences, parsed)
        values = self.decision(rows)
        if self.head is not None and self.head.derived:
            rows = with_derived(rows, self.head.derived)
        gleu = seg.aggregate(values, how)
        need_rows = with_features or self.head is not None
        text_rows = seg.aggregate_rows(rows, how, values) if need_rows else [{} for _ in texts]
        fluency = gleu
        if self.head is not None:
            readings = None
            if self.head.needs_readings:
                parse = self.head.needs_parsed_readings
                split = seg if how != "whole" else None
                readings = self.readings(filled, parsed, parse=parse, split=split)
            fluency = self.head.apply(gleu, text_rows, readings)
        if not with_features:
            text_rows = [{} for _ in texts]
        return [
            Score(t, float(f), row, len(i), float(g))
            for t, f, g, row, i in zip(texts, fluency, gleu, text_rows, seg.index, strict=True)
        ]

    def aggregate_for(self, by_sentence: bool | None = None, aggregate: str | None = None) -> str:
        """How a text of several sentences is read: as asked, else as the head was fitted,
        else `features.segment.DEFAULT_AGGREGATE`."""
        if by_sentence is None and aggregate is None and self.head is not None:
            aggregate = self.head.reading
        return resolve_aggregate(by_sentence, aggregate)

    def readings(self, filled: Sequence[str], parsed=None, **options: Any) -> dict[str, Any]:
        """`scorer.readings.READINGS` of texts whose placeholders are filled: each read whole
        and sentence by sentence (a one-sentence text is parsed once for both); `options`:
        `parse` (False: only `TEXT_READINGS`, which read the text alone), `split` (the texts'
        segmentation by sentence where the caller has it) and `sentence_rows`'s."""
        return bundle_readings(self, filled, parsed, **options)

    def score_sentences(
        self, sentences: Sequence[Sentence], *, with_features: bool = False
    ) -> list[Score]:
        """Score already-parsed texts, so a caller that also needs the parse shares it: a
        one-sentence text reuses its parse; the sentences of a longer one are parsed apart."""
        return self.score_texts(
            [s.text for s in sentences],
            with_features=with_features,
            parsed={s.text: s for s in sentences},
        )

    def score(
        self,
        texts: Sequence[str],
        *,
        by_sentence: bool | None = None,
        aggregate: str | None = None,
        genre: str | None = None,
    ) -> list[float]:
        """One fluency score per text, same order (see `score_texts`), from the bundle's head
        for `genre` (`for_genre`; None: the head it scores with already)."""
        scorer = self.for_genre(genre)
        scored = scorer.score_texts(
            check_texts(texts), by_sentence=by_sentence, aggregate=aggregate
        )
        return [s.score for s in scored]

    def score_detailed(self, texts: Sequence[str], *, genre: str | None = None) -> list[Score]:
        return self.for_genre(genre).score_texts(check_texts(texts), with_features=True)


# Names that were bundles of their own and are now a head of another: name -> (bundle, genre);
# `models/data-to-text` is the default's data-to-text head, still served under its old name.
ALIASES: dict[str, tuple[str, str]] = {"data-to-text": ("default", "data-to-text")}


def load_scorer(
    path: str | Path,
    *,
    models_dir: str | Path = MODELS_DIR,
    spacy_model: str | None = None,
    cache_size: int = 0,
    placeholders: Sequence[str] = DEFAULT_PLACEHOLDERS,
) -> FluencyScorer:
    """Load a model bundle (checked: place, hash, feature set) and the artefacts its features
    are loaded from, as its card recorded them in training (`scorer.artefacts`). A name of
    `ALIASES`, or "BUNDLE:GENRE", with no folder of its own loads the bundle it names, scoring
    with that genre's head, under the name given."""
    from scorer.bundle import bundle_folder

    alias = ALIASES.get(str(path))
    base, colon, genre = str(path).rpartition(":")
    if alias is None and colon and base and genre:
        alias = (base, genre)
    if alias is not None and not bundle_folder(path, models_dir).exists():
        base, genre = alias
        scorer = load_scorer(
            base,
            models_dir=models_dir,
            spacy_model=spacy_model,
            cache_size=cache_size,
            placeholders=placeholders,
        ).for_genre(genre)
        scorer.card = {**scorer.card, "name": str(path), "alias_of": f"{base}, genre {genre}"}
        return scorer
    folder, card = read_card(path, models_dir)
    general = load_head(folder, card)
    heads = load_genre_heads(folder, card)
    linear = load_gleu_stage(folder, card)

    def pipeline():
        from scorer.model import load_model  # scikit-learn: only when the pipeline is asked for

        return load_model(folder, models_dir)[0]

    # A tier whose extra is not installed is refused here, naming it, before anything loads.
    from features.optional_imports import require_features

    require_features(card.get("features", []), str(card.get("name") or Path(path).name))
    paths = recorded_artefacts(path, card, models_dir)
    return FluencyScorer(
        linear if linear is not None else pipeline(),
        card,
        spacy_model=spacy_model,
        resources=Resources(spacy_model=spacy_model, **paths),
        cache_size=cache_size,
        placeholders=placeholders,
        head=general,
        pipeline_loader=pipeline,
        heads=heads,
        folder=folder,
    )


def load_configured(model: str | Path | None, config: dict) -> FluencyScorer:
    """`load_scorer` with the settings of `scorer.config` (the CLI's `--model`, else the
    configured MODEL_PATH)."""
    return load_scorer(
        model or config["MODEL_PATH"],
        models_dir=config["MODELS_DIR"],
        spacy_model=config["SPACY_MODEL"],
        cache_size=config.get("FEATURE_CACHE", 0),
        placeholders=parse_placeholders(config.get("PLACEHOLDERS", DEFAULT_PLACEHOLDERS)),
    )
