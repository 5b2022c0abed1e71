# `make demo` and `make test` set up their own virtual environment on a machine with Python 3.11+.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
DOCS_STAMP := $(VENV)/.installed-docs

# the tests run on every core (at most 8 workers), a test file to a worker: its module fixtures and
# numba kernels are then built once (pytest-xdist; `make test PYTEST_WORKERS=0` runs them serially);
# the 15 slowest tests are listed at the end, to keep the run within its budget (README)
PYTEST_WORKERS ?= auto
PYTEST := $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --maxprocesses=8 --dist loadfile --durations=15

.PHONY: demo test test-slow test-all test-boundscheck bench lint docs wheel-check clean clean-numba

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

# ruff, mypy, pre-commit, build and twine (the `dev` extra), for `make lint` and `make wheel-check`
$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,dev]"
	touch $(DEV_STAMP)

# Sphinx, pydata-sphinx-theme, myst-nb and numpydoc (the `docs` extra), for `make docs`
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,docs]"
	touch $(DOCS_STAMP)

demo: $(STAMP)
	$(BIN)/python -m pymc_knn demo --out demo-output

test: $(STAMP)
	$(PYTEST) -m "not slow"

test-slow: $(STAMP)
	$(PYTEST) -m slow

# the default tests, then the slow statistical suite (the two speeds of the README)
test-all: test test-slow

# the default tests with every numba array access bounds-checked (own cache: other machine code)
test-boundscheck: $(STAMP)
	NUMBA_BOUNDSCHECK=1 NUMBA_CACHE_DIR=$(VENV)/numba-boundscheck $(PYTEST) -m "not slow"

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_kernels.py

# ruff's rules (pyproject.toml [tool.ruff]) on the code, then mypy on the package
lint: $(DEV_STAMP)
	$(BIN)/ruff check pymc_knn tests benchmarks docs .ci
	$(BIN)/ruff format --check pymc_knn tests benchmarks docs/conf.py .ci
	$(BIN)/mypy

# the documentation site in docs/_build/html; every warning is an error (intersphinx needs the
# network). The notebooks are rendered with their stored outputs, not executed.
docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

# build the wheel and sdist, twine check, install each in a clean venv and run .ci/smoke.py
wheel-check: $(DEV_STAMP)
	BUILD_PYTHON=$(BIN)/python PYTHON=$(PYTHON) .ci/wheel_check.sh

clean: clean-numba
	rm -rf $(VENV) demo-output dist docs/_build docs/generated

# numba's cache is not invalidated when a kernel *called* by a cached function changes (only
# when the cached function's own file does): clear it after editing a kernel, before measuring
clean-numba:
	find pymc_knn benchmarks -name '*.nbi' -delete -o -name '*.nbc' -delete
