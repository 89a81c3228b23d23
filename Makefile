# Every target creates .venv on first use and re-installs only when pyproject.toml changes.
# `demo` and `serve` install the project with the reference service's extra and nothing else;
# the other targets install the development tools too (the dev extra includes the service's).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SERVICE_STAMP := $(VENV)/.installed-service

.PHONY: demo test lint typecheck serve bench screenshots man config-schema clean

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
# busy; tests go to whichever worker is free (by file, the model's file alone took five minutes
# on one worker while the others idled).
TEST_WORKERS ?= 4
# The tests' files (tmp_path, the model's worlds) go to a RAM disk where there is one: each test
# seeds a service and opens caches, SQLite syncs every commit, and on a shared disk those syncs
# took a quarter of the tests' time (tests/sync, serially: 382 s on /tmp, 286 s on /dev/shm,
# the same CPU). Only a failed test's folder is kept (a RAM disk holds them).
# A small RAM disk (a container's 64 MB /dev/shm) would fill: it needs 2 GB free.
TEST_TMPDIR ?= $(shell test -d /dev/shm -a -w /dev/shm \
	&& test "$$(df -Pk /dev/shm | awk 'NR==2 {print $$4}')" -ge 2097152 \
	&& echo /dev/shm || echo $${TMPDIR:-/tmp})

test: lint typecheck
	TMPDIR=$(TEST_TMPDIR) $(BIN)/python -m pytest -q -p no:cacheprovider \
		-o tmp_path_retention_policy=failed -n $(TEST_WORKERS) --dist load

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

screenshots: $(STAMP)
	$(BIN)/python -m demo.screenshots screenshots

# The manual page, generated from the command line's parser (`tracker-tui man` prints it too).
man: $(STAMP)
	mkdir -p build/man
	$(BIN)/tracker-tui man > build/man/tracker-tui.1

# config.toml's JSON Schema lists every binding and column; regenerate it after adding one
# (tests/test_config_schema.py fails until then).
config-schema: $(STAMP)
	$(BIN)/python -m tracker_tui.config_schema

clean:
	rm -rf $(VENV) build .demo .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
