"""`fluency benchmark --results DIR`: the generated pages of a real run (the shipped default and
fast models on two small judgement files written here), their marker and command, and tables
whose figures are the run's."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest

from scorer.cli import build_parser, main
from scorer.config import from_env
from scorer.evidence.benchmark_pages import GENERATED, command_line, write_results
from scorer.evidence.benchmark_run import judgement_files, run_benchmark
from scorer.scoring import load_configured

SENTENCES = {
    "news": [
        "The company said its profit rose sharply in the first quarter.",
        "Shares of the bank fell after it reported a loss.",
        "The government expects inflation to slow next year.",
        "Analysts said the agreement would strengthen the dollar.",
        "The board approved a new dividend payable in June.",
        "Traders said the market was quiet ahead of the meeting.",
    ],
    "food": [
        "The restaurant serves Italian food near the river.",
        "It is a cheap family friendly pub in the city centre.",
        "The hotel has free wifi and accepts dogs.",
        "Aromi is a coffee shop with a low customer rating.",
        "The Eagle is an expensive restaurant with French food.",
        "Green Man is a pub near All Bar One.",
    ],
}
MODELS = ("default", "fast")
AGGREGATES = ("whole", "weighted")


def _variants(sentence: str) -> list[tuple[str, float]]:
    """The sentence, then ever worse versions of it, with a score people might give each."""
    words = sentence.rstrip(".").split()
    return [
        (sentence, 5.0),
        (sentence.lower().rstrip(".") + " the the.", 3.5),
        (" ".join(words[::2]) + ".", 2.5),
        (" ".join(reversed(words)) + ".", 1.0),
    ]


@pytest.fixture(scope="module")
def dev(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dev")
    rng = np.random.default_rng(11)
    for name, sentences in SENTENCES.items():
        rows = []
        for g, sentence in enumerate(sentences):
            for k, (text, score) in enumerate(_variants(sentence)):
                rows.append(
                    {
                        "text": text,
                        "score": score + rng.normal(scale=0.3),
                        "scores": {},
                        "refs": [sentence],
                        "group": f"g{g}",
                        "system": f"s{k}",
                    }
                )
        rows.append(
            {"text": "", "score": 1.0, "scores": {}, "refs": ["x"], "group": "g0", "system": "z"}
        )
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.fixture(scope="module")
def runs(dev, tmp_path_factory):
    config = from_env()
    scorers = [load_configured(m, config) for m in MODELS]
    cache = tmp_path_factory.mktemp("rows")
    runs = run_benchmark(
        scorers,
        judgement_files(dev),
        aggregates=AGGREGATES,
        names=list(MODELS),
        cache_dir=cache,
        n_samples=200,
        seed=3,
    )
    return runs, {m: s.card["model_sha256"] for m, s in zip(MODELS, scorers, strict=True)}


def _tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Every Markdown table of a page under the last line that introduced one (a heading or a
    line ending in ':'), as rows keyed by the header."""
    out: dict[str, list[dict[str, str]]] = {}
    title, header = "", None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if header is None:
                header = cells
                out[title] = []
            elif not set(line) <= set("|-"):
                out[title].append(dict(zip(header, cells, strict=True)))
        else:
            header = None
            if line.startswith("#") or line.endswith(":"):
                title = line.lstrip("# ").rstrip(":")
    return out


def _fmt(value: float) -> str:
    return f"{value:.3f}" if np.isfinite(value) else "–"


COMMAND = "fluency benchmark --model default --model fast --aggregate whole --aggregate weighted"


def test_pages_carry_the_marker_the_command_the_date_and_the_models(runs, tmp_path):
    runs_, shas = runs
    pages = write_results(runs_, tmp_path, COMMAND, models=shas, date="2026-11-25")
    names = [p.name for p in pages]
    assert names == [
        "index.md",
        "summary.md",
        "aggregates.md",
        "aggregate-whole.md",
        "aggregate-weighted.md",
    ]
    for page in pages:
        text = page.read_text()
        assert text.splitlines()[0] == GENERATED.format(command=COMMAND)
        assert f"Generated on 2026-11-25 by `{COMMAND}`" in text
        for model, sha in shas.items():
            assert f"`{model}` (model_sha256 `{sha}`)" in text
        assert "fluency-scorer " in text and "spacy " in text and "seed 3" in text
    index = pages[0].read_text()
    assert all(f"]({name})" in index for name in names[1:])


def test_summary_figures_are_the_runs(runs, tmp_path):
    runs_, shas = runs
    write_results(runs_, tmp_path, COMMAND, models=shas)
    # One table per statistic and aggregate, in the runs' order; titles repeat per aggregate.
    text = (tmp_path / "summary.md").read_text()
    sections = text.split("## Aggregate ")[1:]
    assert [s.split("`")[1] for s in sections] == list(AGGREGATES)
    for run, section in zip(runs_, sections, strict=True):
        tables = _tables(section)
        rho = tables["Spearman's rho over all outputs"]
        tau = tables["mean per-input Kendall tau-b"]
        assert len(rho) == len(tau) == len(run.files) + 1  # and the mean
        for f, row_rho, row_tau in zip(run.files, rho, tau, strict=False):
            assert row_rho["file"] == f.name and row_rho["n kept"] == str(f.counts["n_kept"])
            for m in MODELS:
                assert row_rho[m] == _fmt(f.table[m].spearman)
                assert row_tau[m] == _fmt(f.table[m].kendall)
            best = f.best["spearman"]
            assert row_rho["best baseline of the file"] == f"{best} {_fmt(f.table[best].spearman)}"
        mean = rho[-1]
        assert mean["file"] == f"mean ({len(run.files)} files)"
        for m in MODELS:
            assert mean[m] == _fmt(np.mean([f.table[m].spearman for f in run.files]))
        versus = tables["Each model minus `default` [95% CI], same draws"]
        d = run.files[0].versus_first_model["fast"]["spearman"]
        assert versus[0]["model: statistic"] == "fast: Spearman's rho over all outputs"
        cell = f"{d.difference:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]"
        assert versus[0][run.files[0].name] == cell


def test_aggregate_pages_hold_every_column_on_every_file(runs, tmp_path):
    runs_, shas = runs
    write_results(runs_, tmp_path, COMMAND, models=shas)
    for run in runs_:
        tables = _tables((tmp_path / f"aggregate-{run.aggregate}.md").read_text())
        for statistic, title in (
            ("spearman", "Spearman's rho over all outputs"),
            ("kendall", "mean per-input Kendall tau-b"),
            ("pairwise", "pairwise accuracy inside inputs"),
        ):
            rows = {r["column"].strip("*"): r for r in tables[title]}
            columns = {k for f in run.files for k in f.table}
            assert set(rows) == columns
            for f in run.files:
                for k, a in f.table.items():
                    assert rows[k][f.name] == _fmt(getattr(a, statistic)), (k, f.name)
        summary = tables["default: the model beside the best baseline of each file"]
        for f, row in zip(run.files, summary, strict=True):
            d = f.differences["default"]["spearman"]
            cell = f"{d.difference:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]"
            assert row["rho: model - best [95% CI]"] == cell
    side = _tables((tmp_path / "aggregates.md").read_text())
    diffs = side["Spearman's rho over all outputs, difference from `whole` [95% CI]"]
    weighted = runs_[1]
    d = weighted.versus_first["fast"][weighted.files[1].name]["spearman"]
    assert diffs[1]["model, aggregate"] == "fast `weighted` - `whole`"
    cell = f"{d.difference:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}]"
    assert diffs[1][weighted.files[1].name] == cell


def test_a_rerun_removes_the_pages_it_no_longer_generates_and_nothing_else(runs, tmp_path):
    runs_, shas = runs
    write_results(runs_, tmp_path, COMMAND, models=shas)
    (tmp_path / "notes.md").write_text("# Notes\n\nwritten by hand\n")
    pages = write_results(runs_[:1], tmp_path, "fluency benchmark --aggregate whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "aggregate-whole.md",
        "index.md",
        "notes.md",
        "summary.md",
    ]
    assert [p.name for p in pages] == ["index.md", "summary.md", "aggregate-whole.md"]
    assert "aggregates.md" not in pages[0].read_text()


def _parsed(argv: list[str]) -> dict:
    args = vars(build_parser().parse_args(argv))
    return {k: v for k, v in args.items() if k not in ("func", "benchmark_parser")}


def test_command_line_parses_back_to_the_same_arguments():
    argv = ["benchmark", "--model", "default", "--model", "my models/x", "--aggregate", "all"]
    argv += ["--jobs", "2", "--files", "a.jsonl", "b.jsonl", "--no-robustness"]
    argv += ["--results", "docs/results"]
    args = build_parser().parse_args(argv)
    line = command_line(args.benchmark_parser, args)
    assert line == (
        "fluency benchmark --model default --model 'my models/x' --files a.jsonl b.jsonl "
        "--aggregate all --jobs 2 --no-robustness --results docs/results"
    )
    assert _parsed(shlex.split(line)[1:]) == _parsed(argv)
    args = build_parser().parse_args(["--placeholders", "X,Y", *argv])
    line = command_line(args.benchmark_parser, args, {"--placeholders": args.placeholders})
    assert line.startswith("fluency --placeholders X,Y benchmark --model default")
    assert _parsed(shlex.split(line)[1:]) == _parsed(["--placeholders", "X,Y", *argv])


def test_benchmark_command_writes_the_pages_with_its_own_command(dev, tmp_path, capsys):
    results = tmp_path / "results"
    argv = ["benchmark", "--model", "fast", "--dev", str(dev), "--aggregate", "whole"]
    argv += ["--samples", "100", "--cache", str(tmp_path / "rows"), "--no-robustness"]
    assert main([*argv, "--results", str(results)]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(results / n) for n in ("index.md", "summary.md", "aggregate-whole.md")]
    first = (results / "summary.md").read_text().splitlines()[0]
    command = shlex.join(["fluency", *argv, "--results", str(results)])
    assert first == GENERATED.format(command=command)
    out = tmp_path / "new" / "out.md"  # --out still works, into a folder it makes
    assert main([*argv, "--results", str(results), "--out", str(out)]) == 0
    assert out.read_text().startswith("### Aggregate `whole`")
    assert "| news |" in (results / "aggregate-whole.md").read_text()
