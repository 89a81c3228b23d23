# Every target creates .venv on first use and re-installs only when pyproject.toml changes.
# `demo` and `serve` install the project with the reference service's extra and nothing else;
# the other targets install the development tools too (the dev extra includes the service's).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SERVICE_STAMP := $(VENV)/.installed-service

.PHONY: demo test lint typecheck serve bench screenshots clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(SERVICE_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[service]'
	touch $(SERVICE_STAMP)

demo: $(SERVICE_STAMP)
	$(BIN)/tracker-tui demo

serve: $(SERVICE_STAMP)
	$(BIN)/tracker-server serve --db .demo/tracker.db --demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache

typecheck: $(STAMP)
	$(BIN)/mypy

# Most of the suite waits (on servers, subprocesses, terminals), so four workers keep two cores
# busy; a file's tests stay on one worker, which keeps its module fixtures shared.
TEST_WORKERS ?= 4

test: lint typecheck
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

screenshots: $(STAMP)
	$(BIN)/python -m demo.screenshots screenshots

clean:
	rm -rf $(VENV) .demo .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
