"""The heads of a bundle: its second stages, the GLEU score and features mapped onto people's scale.

A bundle's first stage is its GLEU stage (`scorer.gleu_stage`); its heads, each fitted on
human scores z-normalised within each judgement file, read its GLEU score and a few columns,
so their output reads "standard deviations above the average judged output". The card's
`heads` holds them by genre, the general head under `heads["general"]` (`card_heads`; a card
written by 0.10.0 or earlier keeps the general head in a section `calibration`, still read).

A head is one type, `Head`, whatever fitted it (forward selection, a ridge on SmolLM2's states,
a head plus a ridge on what it leaves): under one reading of a text, each input clipped to the
range it took in the fit, then weighted and summed with an intercept, served as NumPy
arithmetic (no head is unpickled, no scikit-learn imported). Its card section is read and
written by `Head` only: `from_section` and `to_section`, and `lean` and `joined` where a large
head's weights live beside the card (`scorer.head_weights`); the reading is stored as
`"aggregate"`, the name cards have always used.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from features.errors import ModelLoadError
from scorer.readings import DERIVED, READINGS, TEXT_READINGS

__all__ = [
    "GENERAL",
    "GLEU_INPUT",
    "Head",
    "card_heads",
    "head_columns",
    "load_genre_heads",
    "load_head",
    "read_head",
    "without_general_head",
    "without_tables",
]

GLEU_INPUT = "gleu"
GENERAL = "general"  # the head of every genre, in the card's `heads` beside the genre heads
OLD_GENERAL = "calibration"  # where cards written by 0.10.0 or earlier keep the general head
# The section's own keys; every other key (genre, target, regressor, states, selection, files,
# command, ...) says where the head came from and is kept as written (`Head.about`).
OWN = ("aggregate", "inputs", "linear", "clip")
OPEN = "open"  # `Head(clip=OPEN)`: every input unbounded, and the card says so


@dataclass(frozen=True, eq=False)
class Head:
    """A head as a card holds one: under `reading`, each input clipped to `clip` (low, high;
    +-inf: open; None: no clip in the card), then weighted by `coef` and summed with
    `intercept`. `about` is the rest of its card section; `label` and `kind` name it in a
    decision's tables and are not stored."""

    inputs: tuple[str, ...]
    coef: np.ndarray
    intercept: float
    reading: str | None = None  # how a text of several sentences is read (None: the default)
    clip: tuple[np.ndarray, np.ndarray] | str | None = OPEN
    about: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    kind: str = "head"  # "head", "reading", "column", "addition" or "residual ridge"

    def __post_init__(self):
        n = len(self.inputs)
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "coef", np.asarray(self.coef, dtype=np.float64))
        object.__setattr__(self, "intercept", float(self.intercept))
        if len(self.coef) != n:
            raise ModelLoadError(f"a head of {n} inputs has {len(self.coef)} weights")
        clip = self.clip
        if isinstance(clip, str):
            clip = (np.full(n, -np.inf), np.full(n, np.inf))
        elif clip is not None:
            clip = tuple(np.asarray(v, dtype=float) for v in clip)
        object.__setattr__(self, "clip", clip)

    @classmethod
    def from_section(
        cls, section: Mapping[str, Any], *, label: str = "", what: str = "head"
    ) -> Head:
        """The head a card section describes (`to_section` writes it); a ModelLoadError for a
        section without linear weights (a pickled head, never unpickled) or of the wrong sizes."""
        inputs = tuple(section.get("inputs") or ())
        n = len(inputs)
        clip = None
        if bounds := section.get("clip"):
            low = [-np.inf if v is None else float(v) for v in bounds.get("low", [])]
            high = [np.inf if v is None else float(v) for v in bounds.get("high", [])]
            if len(low) != n or len(high) != n:
                raise ModelLoadError(
                    f"the card's {what} clip has {len(low)} and {len(high)} bounds for {n} inputs"
                )
            clip = (np.asarray(low), np.asarray(high))
        linear = section.get("linear")
        if not linear:  # a head pickled beside the card, as early bundles kept one
            raise ModelLoadError(
                f"the card's {what} has no linear weights; a pickled head is not served: "
                "choose the heads again (python -m training.heads --write)"
            )
        coef = linear.get("coef", [])
        if "intercept" not in linear:
            raise ModelLoadError(f"the card's linear {what} has no intercept")
        if len(coef) != n:
            raise ModelLoadError(f"the card's linear {what} has {len(coef)} weights for {n} inputs")
        about = {k: v for k, v in section.items() if k not in OWN}
        return cls(inputs, coef, linear["intercept"], section.get("aggregate"), clip, about, label)

    def to_section(self, genre: str | None = None, **about: Any) -> dict[str, Any]:
        """The card section (`from_section` reads it): the GLEU score first (weight 0 and open
        when the head does not read it), the readings' columns last; `genre` and `about` added
        to (or replacing) what the head says of itself (`about`)."""
        rest = [c for c in self.inputs if c != GLEU_INPUT and c not in READINGS]
        order = [GLEU_INPUT, *rest, *[c for c in self.inputs if c in READINGS]]
        at = {c: k for k, c in enumerate(self.inputs)}
        section: dict[str, Any] = {"genre": genre} if genre is not None else {}
        section.update((k, v) for k, v in self.about.items() if k not in section)
        section["aggregate"] = self.reading
        section["inputs"] = order
        coef = [float(self.coef[at[c]]) if c in at else 0.0 for c in order]
        section["linear"] = {"coef": coef, "intercept": float(self.intercept)}
        if self.clip is not None:

            def bound(values: np.ndarray, open_: float) -> list[float | None]:
                return [
                    None if c not in at or values[at[c]] == open_ else float(values[at[c]])
                    for c in order
                ]

            low, high = self.clip
            section["clip"] = {"low": bound(low, -np.inf), "high": bound(high, np.inf)}
        return section | about

    @staticmethod
    def size(section: Mapping[str, Any]) -> int:
        """How many inputs a card section weighs."""
        return len(section.get("inputs") or ())

    @staticmethod
    def lean(
        section: Mapping[str, Any], mark: str, where: str
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(the section without its inputs, weights and clip, `mark` saying `where` they are;
        those three, for that file beside the card): `joined` puts them back."""
        lean = copy.deepcopy(dict(section))
        weights = {"inputs": lean.pop("inputs"), "coef": lean["linear"].pop("coef")}
        if "clip" in lean:
            weights["clip"] = lean.pop("clip")
        lean[mark] = where
        return lean, weights

    @staticmethod
    def joined(section: Mapping[str, Any], weights: Mapping[str, Any], mark: str) -> dict:
        """A section `lean` took apart, whole again from its `weights`."""
        whole = {k: v for k, v in section.items() if k != mark}
        whole["inputs"] = list(weights["inputs"])
        whole["linear"] = {**(whole.get("linear") or {}), "coef": list(weights["coef"])}
        if "clip" in weights:
            whole["clip"] = weights["clip"]
        return whole

    @staticmethod
    def without_table(section: Any) -> Any:
        """A card section without the held-out tables of its `selection`, its own and those of
        the candidates it kept beside it (`also_tried`): a card of 0.12.1 or earlier kept its
        own there; the heads' report holds them now. Any other value as it is."""
        if not isinstance(section, Mapping) or not isinstance(section.get("selection"), Mapping):
            return section
        return {**section, "selection": without_tables(section["selection"])}

    @property
    def states(self) -> Mapping[str, Any] | None:
        """How a learned head read SmolLM2's states (layer, pooling, alpha, variant, and the
        head a residual one started from), or None for a head of a few columns."""
        return self.about.get("states")

    @property
    def base(self) -> Head | None:
        """The head a residual head started from (`states["base"]`, `base_entry`), or None."""
        entry = (self.states or {}).get("base")
        if entry is None:
            return None
        return Head(entry["inputs"], entry["coef"], entry["intercept"], entry["reading"])

    def base_entry(self) -> dict[str, Any]:
        """This head as a residual head's card section records the head it started from."""
        return {
            "reading": self.reading,
            "inputs": list(self.inputs),
            "coef": [float(c) for c in self.coef],
            "intercept": float(self.intercept),
        }

    @property
    def low(self) -> np.ndarray:
        """Each input's lower bound (-inf: open)."""
        return np.full(len(self.inputs), -np.inf) if self.clip is None else self.clip[0]

    @property
    def high(self) -> np.ndarray:
        """Each input's upper bound (inf: open)."""
        return np.full(len(self.inputs), np.inf) if self.clip is None else self.clip[1]

    def read(self) -> list[str]:
        """The inputs it weighs (a weight not 0; the GLEU score is every head's first, often 0)."""
        return [c for c, w in zip(self.inputs, self.coef, strict=True) if w]

    @property
    def needs_readings(self) -> bool:
        return any(c in READINGS for c in self.inputs)

    @property
    def needs_parsed_readings(self) -> bool:
        """Whether it reads a reading made from parses, not only `TEXT_READINGS`."""
        return any(c in READINGS and c not in TEXT_READINGS for c in self.inputs)

    @property
    def derived(self) -> tuple[str, ...]:
        """The `DERIVED` columns it reads (added to each sentence's row before folding)."""
        return tuple(c for c in self.inputs if c in DERIVED)

    def weight(self, column: str) -> float:
        """The weight on `column` (0 where the head does not read it)."""
        return float(self.coef[self.inputs.index(column)]) if column in self.inputs else 0.0

    def with_weight(self, column: str, weight: float) -> Head:
        """This head with `weight` on `column`, the last input and unbounded (a weight of 0
        takes the column out)."""
        keep = [k for k, c in enumerate(self.inputs) if c != column]
        inputs = [self.inputs[k] for k in keep]
        coef = [float(self.coef[k]) for k in keep]
        clip = None if self.clip is None else [list(v[keep]) for v in self.clip]
        if weight:
            inputs.append(column)
            coef.append(float(weight))
            if clip is not None:
                clip[0].append(-np.inf)
                clip[1].append(np.inf)
        return replace(self, inputs=tuple(inputs), coef=coef, clip=clip)

    def scaled(self, a: float, b: float) -> Head:
        """a x this head + b."""
        return replace(self, coef=a * self.coef, intercept=a * self.intercept + b)

    def combine(self, X: np.ndarray) -> np.ndarray:
        """The head on `X` (a row per text, a column per input, in `inputs`' order)."""
        if self.clip is not None:
            X = np.clip(X, *self.clip)
        return np.asarray(X, dtype=np.float64) @ self.coef + self.intercept

    def predict(self, columns: Mapping[str, Mapping[str, np.ndarray]]) -> np.ndarray:
        """The head on columns by reading ({reading: {input: one value a text}}), as judged
        files and checks hold them."""
        return self.combine(np.column_stack([columns[self.reading][c] for c in self.inputs]))

    def reads(self, columns: Mapping[str, Mapping[str, np.ndarray]]) -> bool:
        """Whether `columns` (by reading) hold every input under this head's reading."""
        cols = columns.get(self.reading, {})
        return all(c in cols for c in self.inputs)

    def apply(
        self,
        gleu: Sequence[float],
        rows: Sequence[Mapping[str, float]],
        readings: Mapping[str, Sequence[float]] | None = None,
    ) -> np.ndarray:
        """Fluency per text, from its GLEU score, its (aggregated) feature row and, when the
        head reads them, its `READINGS` (`scorer.readings.reading_columns`)."""
        if not len(gleu):
            return np.empty(0)
        blocks = [np.asarray(gleu, dtype=float)[:, None]]
        columns = [c for c in self.inputs[1:] if c not in READINGS]
        if columns:
            blocks.append(np.array([[row[c] for c in columns] for row in rows], dtype=float))
        wanted = [c for c in self.inputs[1:] if c in READINGS]
        if wanted:
            if readings is None:
                raise ModelLoadError("this head reads READINGS: pass `readings`")
            blocks.append(np.column_stack([np.asarray(readings[c], dtype=float) for c in wanted]))
        return self.combine(np.hstack(blocks))

    def weights_text(self) -> str:
        """The non-zero weights, a learned head's state columns counted as one group."""
        from scorer.contributions import group_of

        terms, groups = [], {}
        for c, w in zip(self.inputs, self.coef, strict=True):
            label = group_of(c)
            if label is not None and w:
                groups[label] = groups.get(label, 0) + 1
            elif w:
                terms.append(f"{w:+.4g} {c}")
        terms += [f"{g} ({n} weights)" for g, n in groups.items()]
        return f"{' '.join(terms) or '0'} {self.intercept:+.4g}, read {self.reading}"


def head_columns(card: Mapping[str, Any]) -> list[str]:
    """The columns of the extractors only the card's heads read (`head_features`), or a
    ModelLoadError when one is not registered here."""
    from features import registry
    from features.errors import FeatureError

    out = []
    for name in card.get("head_features") or ():
        try:
            out.extend(registry.get(name).columns)
        except FeatureError as exc:
            raise ModelLoadError(f"a head reads {name!r}, not available here: {exc}") from exc
    return out


def card_heads(card: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """{genre: card section} of every head the card holds, the general head first: its
    `heads`, where the general head is `heads["general"]`, or, in a card written by 0.10.0
    or earlier, its `calibration`."""
    heads = card.get("heads") or {}
    if not isinstance(heads, Mapping):
        raise ModelLoadError("the card's heads must map a genre to a head")
    general = heads.get(GENERAL) or card.get(OLD_GENERAL)
    out: dict[str, Mapping[str, Any]] = {GENERAL: general} if general else {}
    out.update((str(genre), section) for genre, section in heads.items() if genre != GENERAL)
    return out


def without_general_head(card: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `card` with its general head removed (new and old places), genre heads kept."""
    out = {k: v for k, v in card.items() if k != OLD_GENERAL}
    if isinstance(out.get("heads"), Mapping):
        out["heads"] = {k: v for k, v in out["heads"].items() if k != GENERAL}
    return out


def load_head(folder: str | Path, card: Mapping[str, Any]) -> Head | None:
    """The bundle's general head (`card_heads`), or None when its card has none."""
    section = card_heads(card).get(GENERAL)
    return read_head(folder, card, section, what="general head") if section else None


def load_genre_heads(folder: str | Path, card: Mapping[str, Any]) -> dict[str, Head]:
    """{genre: head} of the card's genre heads: the second stages fitted for one genre each
    (the general head is `load_head`'s)."""
    return {
        genre: read_head(folder, card, section, what=f"head {genre!r}")
        for genre, section in card_heads(card).items()
        if genre != GENERAL
    }


def read_head(
    folder: str | Path,
    card: Mapping[str, Any],
    section: Mapping[str, Any],
    *,
    what: str = "general head",
) -> Head:
    """One head of a bundle from its card section (`Head.from_section`), checked against the
    card: the GLEU score first, readings last, every column one the bundle gives."""
    try:
        head = Head.from_section(section, label=what, what=what)
    except ModelLoadError as exc:
        raise ModelLoadError(f"{folder}: {exc}") from exc
    inputs = head.inputs
    if not inputs or inputs[0] != GLEU_INPUT:
        raise ModelLoadError(f"{folder}: the card's {what} inputs must start with 'gleu'")
    known = {*card.get("feature_columns", []), *head_columns(card), *READINGS, *DERIVED}
    missing = [c for c in inputs[1:] if c not in known]
    order = [c in READINGS for c in inputs[1:]]
    if order != sorted(order):
        raise ModelLoadError(f"{folder}: the card's {what} inputs put readings last")
    if missing:
        raise ModelLoadError(f"{folder}: the {what} reads columns the model lacks: {missing}")
    return head


TRIED_KEPT = ("decision", "held_out", "reading")  # what a card keeps of a candidate tried


def without_tables(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A decision's entry without its held-out `table`, and of the entries it kept beside it
    (`also_tried`) only what was decided and how it was held out (`TRIED_KEPT`): the decision
    sentence carries their figures; their tables and the rest are the heads' report's."""
    out = {k: v for k, v in entry.items() if k != "table"}
    if isinstance(out.get("also_tried"), list):
        out["also_tried"] = [
            {k: e[k] for k in TRIED_KEPT if k in e} if isinstance(e, Mapping) else e
            for e in out["also_tried"]
        ]
    return out
