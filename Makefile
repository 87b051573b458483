# Two entry points: `make demo` runs the main job, `make test` runs lint and the test suite.
# Both create .venv with the package and its test extras on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	MPLBACKEND=Agg $(BIN)/dynid demo

lint: $(STAMP)
	$(BIN)/ruff check dynid tests benchmarks

test: lint
	MPLBACKEND=Agg $(BIN)/python -m pytest -q

bench: $(STAMP)
	@for f in benchmarks/*.py; do echo "# $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
