# `make demo` and `make test` set up their own virtual environment on a machine with Python 3.11+.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-slow test-boundscheck bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m pymc_knn demo --out demo-output

test: $(STAMP)
	$(BIN)/python -m pytest -m "not slow"

test-slow: $(STAMP)
	$(BIN)/python -m pytest -m slow

# the default tests with every numba array access bounds-checked (own cache: other machine code)
test-boundscheck: $(STAMP)
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(VENV)/numba-boundscheck $(BIN)/python -m pytest -m "not slow"

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_kernels.py

clean:
	rm -rf $(VENV) demo-output
