# Two entry points, each does its own set-up on a fresh machine (Python 3.11, git, make):
#   make run   lint the bundled fixtures and print the findings (exit 0)
#   make test  run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test bench bench-check clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/mgpu-lint --exit-zero fixtures/

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python bench/run.py

# quick benchmark; fails only on a gross regression against bench/baseline.json (ratios, not times)
bench-check: $(STAMP)
	$(BIN)/python bench/check_regression.py

clean:
	rm -rf $(VENV) build *.egg-info
