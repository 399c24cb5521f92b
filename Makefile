# promptdojo: `make serve` to run the lesson locally, `make test` to check everything.
# Every target is incremental: re-running with nothing changed does no work.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000
TEST_JOBS ?= 2

INSTALLED := $(VENV)/.installed
NODE_OK   := node_modules/.installed
ASSETS    := static/build/manifest.json
FRONTEND_SOURCES := $(wildcard static/js/*/*.js static/css/*.css) scripts/build.mjs \
  promptdojo/pyodide/core_files.json

.PHONY: all install build serve test lint format test-fast test-js test-pyodide bench clean help
.DEFAULT_GOAL := help

help:
	@echo "make serve   set up, build, and serve the lessons at http://$(HOST):$(PORT)"
	@echo "make test    set up, build, lint, and run every test (browser tests included)"
	@echo "make build   build the front-end assets and the memory snapshot"
	@echo "make test-pyodide  run the library's tests in real Pyodide 0.29.0 with numpy"
	@echo "make bench   run every benchmark under bench/ and rewrite BENCHMARKS.md"
	@echo "make clean   remove the venv, node_modules and built assets"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(INSTALLED): pyproject.toml $(ASSETS) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	@touch $@

$(NODE_OK): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

$(ASSETS): $(NODE_OK) $(FRONTEND_SOURCES)
	npm run --silent build

# The memory snapshot pages restore (promptdojo.pyodide.snapshot): made once per Pyodide build and
# library version, in .cache/snapshots/; this prints its name and size.
build: $(ASSETS) $(INSTALLED)
	$(BIN)/promptdojo pyodide snapshot

install: $(INSTALLED) $(ASSETS)
	@$(BIN)/promptdojo pyodide snapshot

serve: install
	$(BIN)/promptdojo serve lessons --host $(HOST) --port $(PORT)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The page modules' rules (store.js merges, output sanitising, the kernel session) under Node.
test-js:
	node --test tests/js/*.test.mjs

# The tests run in TEST_JOBS processes (pytest-xdist), each test file whole in one of them, so that a
# file's servers, exports and browsers start once; much of a browser test is waiting on timers and
# links, which the other process fills. `make test TEST_JOBS=1` runs them one after another.
test: lint test-js
	$(BIN)/promptdojo validate lessons
	$(BIN)/promptdojo check lessons --check-outputs
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadfile

# The library's tests inside Pyodide 0.29.0 with its official numpy (test data: tests/support/numpy_release.py).
test-pyodide: install
	release="$$($(BIN)/python -m tests.support.numpy_release)" && \
	  $(BIN)/python scripts/test_pyodide.py --pyodide-dir "$$release"

bench: install
	$(BIN)/python bench/library.py
	$(BIN)/python bench/check.py
	$(BIN)/python bench/server.py
	$(BIN)/python bench/browser.py --runs 5
	$(BIN)/python bench/snapshot_boot.py --runs 5
	$(BIN)/python bench/controls.py --changes 30
	$(BIN)/python bench/profile_boot.py
	$(BIN)/python bench/lesson_cells.py --runs 3
	$(BIN)/python bench/first_run.py --engine chromium
	$(BIN)/python bench/first_run.py --engine firefox
	$(BIN)/python bench/first_run.py --engine webkit
	$(BIN)/python bench/first_run.py --engine chromium --read-for 3
	$(BIN)/python bench/first_run.py --engine firefox --read-for 3
	$(BIN)/python bench/first_run.py --engine webkit --read-for 3
	$(BIN)/python bench/export_boot.py --runs 5
	$(BIN)/python bench/shaped_link.py --runs 3
	$(BIN)/python bench/course_scale.py
	$(BIN)/python bench/engines.py --runs 3
	$(BIN)/python bench/first_visits.py --engine firefox --visits 50
	$(BIN)/python bench/report.py

test-fast: install
	$(BIN)/python -m pytest -m "not browser and not slow"

clean:
	rm -rf $(VENV) node_modules static/build .pytest_cache .ruff_cache
