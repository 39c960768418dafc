# Two commands do all the set-up on a fresh machine:
#   make demo   builds the readout of the embedded offline example (examples/l03), no model needed
#   make test   runs the whole test suite (then the suite without the evaluation stack on
#               Python 3.12 and 3.13, where the machine has them: .ci/other-pythons)
VENV ?= .venv
PYTHON ?= python3
BIN = $(VENV)/bin

# The browser test opens the readout in Debian's Chromium (a test tool's own browser download
# cannot work offline): `make test` installs it when it is missing and make runs as root.
CHROMIUM ?= $(or $(READOUT_CHROMIUM),/usr/bin/chromium)

.PHONY: demo test test-fast test-pythons selftest bench clean-venv chromium

# Installed without compiling bytecode (--no-compile): pip compiled every module of torch, Ray,
# SciPy and transformers, two of the three minutes of an install here, and a run imports a small
# part of them. Python compiles a module when it is first imported and keeps the bytecode beside
# it, so the first run pays for what it uses, once; a setting that would make every interpreter
# compile again each time is not passed on to what make runs.
unexport PYTHONDONTWRITEBYTECODE

$(BIN)/readout: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The CPU build of torch first: a looser requirement resolved alone pulls multi-GB CUDA wheels.
	$(BIN)/python -m pip install --quiet --no-compile torch==2.13.0
	$(BIN)/python -m pip install --quiet --no-compile -e ".[test]"
	touch $(BIN)/readout

demo: $(BIN)/readout
	$(BIN)/readout build examples/l03
	@echo "readout is installed in $(BIN): run $(BIN)/readout, or activate it with . $(BIN)/activate"

chromium:
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; \
	  else \
	    echo "Chromium is missing at $(CHROMIUM): run 'sudo apt-get install -y chromium' (or set READOUT_CHROMIUM)" >&2; \
	    exit 2; \
	  fi; \
	fi

# On every core; a module's tests share a worker, so its fixtures (the SciFact evaluation) are built once.
PYTEST_PARALLEL = -n auto --dist loadscope --no-loadscope-reorder

test: $(BIN)/readout chromium
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) --durations=10
	.ci/other-pythons

# The fast loop while working: every test that needs no model, no SciFact and no browser (most of
# the suite, in about half its time); `make test` is what CI runs.
test-fast: $(BIN)/readout
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) -m "not integration and not browser and not model" --durations=5

# Python 3.12 and 3.13, without the evaluation stack (no CPU torch for them here; see the script).
test-pythons:
	.ci/other-pythons

selftest: $(BIN)/readout
	$(BIN)/readout selftest

bench: $(BIN)/readout
	$(BIN)/python bench/bench_evaluation.py
	$(BIN)/python bench/bench_checker.py

clean-venv:
	rm -rf $(VENV) .venv-3.12 .venv-3.13
