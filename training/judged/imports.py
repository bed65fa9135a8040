"""`fluency import-judgements`: human judgements published in other formats, written as the
JSON-lines judgement files that `fluency benchmark`, `evaluate` and `calibrate` read (`text`,
`score`, `scores`, `refs`, `group`, `system`, `is_reference`), so that agreement can be checked on
data beyond the development files.

- `mqm`: MQM error annotations as Google's WMT MQM releases give them (a TSV of one error a row:
  `system`, `doc`, `doc_id`, `seg_id`, `rater`, `source`, `target`, `category`, `severity`; error
  spans marked `<v>...</v>` in the target). A segment's penalty is the sum of its errors' weights
  (Freitag et al. 2021: Major 5, Minor 1, a minor `Fluency/Punctuation` error 0.1,
  `Non-translation` 25, `Neutral` and `No-error` 0), averaged over its raters. `scores.mqm` is
  minus the penalty of every error; `scores.fluency`, the default `score`, minus that of the
  fluency errors alone (`Fluency/*` and `Style/Awkward`), as in the development MQM files.
- `webnlg2020`: the WebNLG 2020 challenge's English human evaluation, from a checkout of its
  repository: each rated output's text is line `sample_id` of its team's `primary.en`; `score`
  is the organisers' fluency rating of it, the other four criteria in `scores`. The human
  references, rated as a team of their own, have no file there and are left out.
- `cola`: a file of the Corpus of Linguistic Acceptability (Warstadt et al. 2019; `raw/*.tsv`:
  source, label, the author's mark, sentence): `score` is the label, 1 acceptable, 0 not; every
  sentence is an input of its own, so agreement is rho and pairwise accuracy, not per-input tau.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from features.errors import InputError
from scorer.textio import read_lines

__all__ = [
    "add_commands",
    "cola_judgements",
    "mqm_judgements",
    "mqm_weight",
    "webnlg2020_judgements",
]

MQM_COLUMNS = ("system", "seg_id", "rater", "target", "category", "severity")
FLUENCY_CATEGORIES = ("Fluency/", "Style/Awkward")
_SPAN = re.compile(r"</?v>")


def mqm_weight(category: str, severity: str) -> float:
    """One error's weight in the MQM penalty (Freitag et al. 2021, table 2)."""
    severity = severity.strip().lower()
    if category.startswith("Non-translation"):
        return 25.0
    if severity == "major":
        return 5.0
    if severity == "minor":
        return 0.1 if category.startswith("Fluency/Punctuation") else 1.0
    return 0.0  # Neutral, No-error


def _is_fluency(category: str) -> bool:
    return category.startswith(FLUENCY_CATEGORIES)


def mqm_judgements(path: str | Path) -> list[dict[str, Any]]:
    """One judgement per (system, segment) of an MQM annotation TSV, in the file's order."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    missing = [c for c in MQM_COLUMNS if rows and c not in rows[0]]
    if not rows or missing:
        raise InputError(
            f"{path}: not an MQM annotation file (missing columns: {missing or 'all'})"
        )
    texts: dict[tuple[str, str], str] = {}
    penalty: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(lambda: [0.0, 0.0])
    )
    for row in rows:
        key = (row["system"], row["seg_id"])
        texts.setdefault(key, _SPAN.sub("", row["target"] or ""))
        weight = mqm_weight(row["category"] or "", row["severity"] or "")
        both = penalty[key][row["rater"]]
        both[0] += weight
        both[1] += weight if _is_fluency(row["category"] or "") else 0.0
    out = []
    for key, text in texts.items():
        per_rater = list(penalty[key].values())
        mqm = sum(p[0] for p in per_rater) / len(per_rater)
        fluency = sum(p[1] for p in per_rater) / len(per_rater)
        system, segment = key
        out.append(
            {
                "text": text,
                "score": -fluency,
                "scores": {"fluency": -fluency, "mqm": -mqm},
                "refs": [],
                "group": segment,
                "system": system,
                "is_reference": system.lower().startswith(("ref", "human")),
            }
        )
    return out


WEBNLG_RATINGS = "evaluation/human-evaluation/results/en/english_humeval_data_all_teams.json"
WEBNLG_OUTPUTS = "submissions/rdf2text/en/{team}/primary.en"
WEBNLG_REFERENCE_TEAM = "WebNLG-2020-reference"
WEBNLG_CRITERIA = ("Fluency", "Correctness", "DataCoverage", "Relevance", "TextStructure")


def webnlg2020_judgements(folder: str | Path) -> list[dict[str, Any]]:
    """The rated outputs of the WebNLG 2020 English human evaluation, from a checkout of the
    challenge's repository at `folder`."""
    folder = Path(folder)
    try:
        ratings = json.loads((folder / WEBNLG_RATINGS).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {folder / WEBNLG_RATINGS}: {exc}") from None
    outputs: dict[str, list[str]] = {}
    out = []
    if not isinstance(ratings, list):
        raise InputError(f"{folder / WEBNLG_RATINGS}: not a list of ratings")
    for k, r in enumerate(ratings):
        try:
            team, line = r["submission_id"], int(r["sample_id"])
            scores = {c.lower(): float(r[c]) for c in WEBNLG_CRITERIA}
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"{folder / WEBNLG_RATINGS}: rating {k} is unusable ({exc!r})"
            ) from None
        if team == WEBNLG_REFERENCE_TEAM:
            continue
        if team not in outputs:
            path = folder / WEBNLG_OUTPUTS.format(team=team)
            try:
                outputs[team] = read_lines(str(path))
            except InputError as exc:
                raise InputError(f"no outputs for {team!r}: {exc}") from None
        if not 1 <= line <= len(outputs[team]):
            raise InputError(f"{team}: sample {line} is not a line of its {len(outputs[team])}")
        out.append(
            {
                "text": outputs[team][line - 1],
                "score": scores["fluency"],
                "scores": scores,
                "refs": [],
                "group": str(line),
                "system": team,
                "is_reference": False,
            }
        )
    return out


def cola_judgements(path: str | Path) -> list[dict[str, Any]]:
    """One judgement per sentence of a CoLA TSV (four columns, no header)."""
    out = []
    for number, line in enumerate(read_lines(str(path)), 1):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != 4 or cells[1] not in ("0", "1"):
            raise InputError(f"{path}:{number}: not a CoLA line (source, 0 or 1, mark, sentence)")
        source, label, _, sentence = cells
        out.append(
            {
                "text": sentence,
                "score": float(label),
                "scores": {"acceptable": float(label)},
                "refs": [],
                "group": str(number),
                "system": source,
                "is_reference": False,
            }
        )
    return out


READERS = {"cola": cola_judgements, "mqm": mqm_judgements, "webnlg2020": webnlg2020_judgements}


def cmd_import(args: argparse.Namespace, config: dict) -> int:
    rows = READERS[args.format](args.source)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    groups = len({r["group"] for r in rows})
    systems = len({r["system"] for r in rows})
    refs = sum(r["is_reference"] for r in rows)
    print(f"wrote {out}: {len(rows)} judgements of {groups} inputs by {systems} systems "
          f"({refs} human references)")  # fmt: skip
    return 0


def add_commands(sub) -> None:
    imp = sub.add_parser(
        "import-judgements",
        help="human judgements from another format, as a judgement file for benchmark",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imp.add_argument("format", choices=sorted(READERS), help="the source's format")
    imp.add_argument("source", help="mqm, cola: the TSV file; webnlg2020: the repository folder")
    imp.add_argument("--out", required=True, help="the JSON-lines judgement file to write")
    imp.set_defaults(func=cmd_import)
