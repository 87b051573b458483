# Two entry points: `make demo` runs the main job, `make test` runs lint and the test suite.
# Both create .venv with the package and its test extras on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint fuzz bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# pyOptSparse is not on the package index: its wheel comes from ../shared/wheels when that
# folder holds one (the newest by name), and is skipped where it does not.
PYOPTSPARSE_WHEEL := $(lastword $(sort $(wildcard ../shared/wheels/pyoptsparse-*.whl)))

$(STAMP): pyproject.toml $(PYOPTSPARSE_WHEEL) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]' $(PYOPTSPARSE_WHEEL)
	touch $(STAMP)

demo: $(STAMP)
	MPLBACKEND=Agg $(BIN)/dynid demo

lint: $(STAMP)
	$(BIN)/ruff check dynid tests benchmarks notebooks

# One test process per core (pytest-xdist), a file's tests in one process so that its
# module-scoped fixtures are built once; one BLAS thread per process, not one per core each.
test: lint
	MPLBACKEND=Agg OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 \
		$(BIN)/python -m pytest -q -n auto --dist loadfile

fuzz: $(STAMP)
	DYNID_FUZZ=1 $(BIN)/python -m pytest -q -m fuzz

bench: $(STAMP)
	@for f in benchmarks/*.py; do echo "# $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
