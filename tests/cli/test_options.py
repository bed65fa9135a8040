"""The options declared once in `scorer.commands.options` read the same in every command."""

from __future__ import annotations

import pytest

from features.segment import AGGREGATES
from scorer.cli import build_parser, main

JOBS = ["score", "features --out x.csv", "accuracy", "benchmark"]
AGGREGATE = ["score", "explain"]
MODEL = ["score", "explain", "compare", "evaluate --judgements j.jsonl"]


def _parse(command: str, *extra: str):
    return build_parser().parse_args([*command.split(), *extra])


@pytest.mark.parametrize("command", JOBS)
def test_jobs_is_a_positive_integer_defaulting_to_one(command, capsys):
    assert _parse(command).jobs == 1
    assert _parse(command, "--jobs", "3").jobs == 3
    for bad in ("0", "-2", "two"):
        with pytest.raises(SystemExit) as exit_:
            _parse(command, "--jobs", bad)
        assert exit_.value.code == 2
        assert "--jobs" in capsys.readouterr().err


@pytest.mark.parametrize("command", AGGREGATE)
def test_aggregate_takes_one_way_and_defaults_to_the_scorers(command, capsys):
    assert _parse(command).aggregate is None
    for way in AGGREGATES:
        assert _parse(command, "--aggregate", way).aggregate == way
    with pytest.raises(SystemExit):
        _parse(command, "--aggregate", "all")
    assert "invalid choice" in capsys.readouterr().err


def test_benchmark_aggregate_repeats_and_takes_all():
    assert _parse("benchmark").aggregate is None
    args = _parse("benchmark", "--aggregate", "min", "--aggregate", "all")
    assert args.aggregate == ["min", "all"]


@pytest.mark.parametrize("command", MODEL)
def test_model_is_one_name_or_none(command):
    assert _parse(command).model is None
    assert _parse(command, "--model", "small").model == "small"


def test_benchmark_model_repeats():
    assert _parse("benchmark").model == []
    assert _parse("benchmark", "--model", "a", "--model", "b").model == ["a", "b"]


def test_evaluate_model_excludes_another_source_of_scores(capsys):
    argv = ["evaluate", "--judgements", "j.jsonl", "--model", "a", "--score-field", "auto.bleu"]
    with pytest.raises(SystemExit):
        main(argv)
    assert "not allowed with argument" in capsys.readouterr().err
