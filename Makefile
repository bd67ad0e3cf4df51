# Talorys: `make run` and `make test` work on a fresh clone (see README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
UV := $(BIN)/uv
RUN_LOCK := requirements/runtime.lock
RUN_STAMP := $(VENV)/.run-installed
DEV_STAMP := $(VENV)/.dev-installed
# The locks are for the one platform Talorys runs on: Linux x86_64 (glibc 2.28+), CPython 3.11.
LOCK_TARGET := --python-version 3.11 --python-platform x86_64-manylinux_2_28
# `make lock` re-resolves everything to the newest releases within pyproject.toml's ranges;
# `make lock LOCK_ARGS=` only follows a change of pyproject.toml and keeps the other pins.
LOCK_ARGS ?= --upgrade

.DEFAULT_GOAL := help
.PHONY: help run test test-fast fuzz load soak lint check-length format check-imports check-lock typecheck lock bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

# No pip in .venv (ensurepip costs seconds): the interpreter's own pip puts the installer, uv,
# pinned by hash, into it; without a usable pip there, .venv gets its own. uv then installs a lock
# exactly (it also removes what the lock no longer lists) and compiles it to bytecode as pip did
# (else web, worker and beat each compile at their first start, or at every start under
# PYTHONDONTWRITEBYTECODE). A stamp older than its lock reinstalls. Add a package by hand with
# `.venv/bin/uv pip install NAME`. uv downloads from PyPI (UV_DEFAULT_INDEX names a mirror;
# pip.conf is not read); the hashes hold wherever the files come from.
SYNC := $(UV) pip sync -q --python $(BIN)/python --require-hashes --compile-bytecode

$(BIN)/python:
	$(PYTHON) -m venv --without-pip $(VENV)

$(UV): requirements/bootstrap.lock | $(BIN)/python
	$(PYTHON) -m pip --python $(BIN)/python install -q --disable-pip-version-check \
		--require-hashes -r requirements/bootstrap.lock 2>/dev/null \
	|| { $(BIN)/python -m ensurepip >/dev/null && $(BIN)/python -m pip install -q \
		--disable-pip-version-check --require-hashes -r requirements/bootstrap.lock; }
	@touch $@

$(RUN_STAMP): $(RUN_LOCK) | $(UV)
	$(SYNC) $(RUN_LOCK)
	@rm -f $(DEV_STAMP)
	@touch $@

$(DEV_STAMP): requirements/dev.lock requirements/runtime.lock | $(UV)
	$(SYNC) requirements/dev.lock
	@touch $@ $(VENV)/.run-installed

run: $(RUN_STAMP) ## Install, migrate and start web + worker + beat + embedder (embedded defaults)
	$(BIN)/python manage.py talorys_run

# The suite runs on TEST_WORKERS pytest-xdist workers, each with its own test database, Redis
# database and data dir; worksteal evens out the long tests (the fuzz, the browser pages).
# Three workers on two cores: about a third of the suite's time is spent waiting on servers,
# subprocesses and timers, which a third worker fills (pytest from a fresh clone, quiet 2-core
# machine, PostgreSQL: 748 s with two workers, 727-736 s with three at 3,109 tests; 586-644 s
# with three at 3,252 and the bytecode cache). `make test TEST_WORKERS=0` runs it in one process.
TEST_WORKERS ?= 3
PYTEST_ARGS ?= -n $(TEST_WORKERS) --dist worksteal
# The suite and the ~160 processes it starts (daphnes, workers, commands) cache the project's
# bytecode in __pycache__ (git-ignored) even where PYTHONDONTWRITEBYTECODE is set, else each one
# compiles the app again and every worker rewrites every test module (a full run, empty caches,
# quiet 2-core machine, PostgreSQL: pytest 695 -> 651 s, 1,316 -> 1,254 s of CPU).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest
test: check-lock check-length ## Lint, check the layers, the lock and the types, run the whole suite
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(PYTEST) $(PYTEST_ARGS)

# The change loop's lane: the whole suite minus the slow lanes (tests/conftest.py SLOW_LANES:
# browsers, fuzzing, fault injection, subprocess end-to-end runs), under 3 minutes on 2 cores.
# No lint or type checks: `make lint`, `make typecheck`. `make test` stays the whole suite.
FAST_LANE := -m "not browser and not fuzz and not faults and not subprocess"
test-fast: $(DEV_STAMP) ## The suite without browsers, fuzzing, faults and subprocess runs
	$(PYTEST) $(PYTEST_ARGS) $(FAST_LANE)

# The long variant of the API fuzzing in `make test` (tests/api/test_api_fuzz.py): 1,000
# examples per operation as the owner (500 valid, 500 invalid; `make test` runs 30 and 30) and
# 400 with each token, on PostgreSQL (when it answers) and on SQLite. FUZZ_EXAMPLES=N and
# FUZZ_TOKEN_EXAMPLES=N change the counts per kind.
FUZZ_EXAMPLES ?= 500
FUZZ_TOKEN_EXAMPLES ?= 200
FUZZ_ENV = TALORYS_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) TALORYS_FUZZ_TOKEN_EXAMPLES=$(FUZZ_TOKEN_EXAMPLES)
fuzz: $(DEV_STAMP) ## Fuzz every API operation at length, on PostgreSQL and SQLite
	$(FUZZ_ENV) $(PYTEST) --timeout=0 tests/api/test_api_fuzz.py
	$(FUZZ_ENV) TALORYS_TEST_SQLITE=1 $(PYTEST) --timeout=0 tests/api/test_api_fuzz.py

load: $(DEV_STAMP) ## 50 chat turns over the WebSocket + 10 API clients for 60 s, then 200 turns at once
	$(BIN)/python benchmarks/load.py

soak: $(DEV_STAMP) ## The load for 30 minutes: RSS, open files and PostgreSQL connections each minute
	$(BIN)/python benchmarks/load.py --soak-minutes 30

lint: $(DEV_STAMP) check-length ## ruff lint and format check, and the module length
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

# ruff keeps the functions small (C901, PLR0915 in pyproject.toml) but has no rule for a module's
# length: an app module (migrations aside) over 400 lines is split by purpose.
APP_PACKAGES := config talorys agent files memory approvals automations backup imports
check-length: ## Every app module within 400 lines
	@find $(APP_PACKAGES) -name '*.py' -not -path '*/migrations/*' | xargs wc -l | awk \
		'$$2 != "total" && $$1 > 400 {print $$2 ": " $$1 " lines, over 400: split it by purpose"; n++} END {exit n > 0}'

format: $(DEV_STAMP) ## Format the code with ruff
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .

check-imports: $(DEV_STAMP) ## Check the layers (docs/architecture.md)
	$(BIN)/lint-imports

# mypy with django-stubs ([tool.mypy] in pyproject.toml names the packages); its plugin loads
# config.settings, which makes the data directory (./data, or TALORYS_DATA_DIR) as `make run` does.
typecheck: $(DEV_STAMP) ## Type-check the code (mypy, django-stubs)
	$(BIN)/mypy

# The locks against pyproject.toml's ranges (requirements/check_locks.py), then deptry
# ([tool.deptry] in pyproject.toml): the apps import only [project] dependencies; tests,
# benchmarks and requirements/ may import any dependency.
DEPTRY := $(BIN)/deptry --no-ansi
check-lock: $(DEV_STAMP) ## Check the locks against pyproject.toml and the code's imports
	$(BIN)/python requirements/check_locks.py
	$(DEPTRY) .
	$(DEPTRY) tests benchmarks requirements --exclude '\.venv' --ignore DEP002,DEP004 \
		--known-first-party tests --known-first-party benchmarks --known-first-party config \
		--known-first-party talorys

lock: | $(UV) ## Refresh requirements/*.lock from pyproject.toml (hashes; Linux x86_64, Python 3.11)
	$(UV) pip compile -q $(LOCK_ARGS) $(LOCK_TARGET) --generate-hashes --no-strip-markers \
		--custom-compile-command "make lock" -o requirements/bootstrap.lock requirements/bootstrap.in
	$(UV) pip compile -q $(LOCK_ARGS) $(LOCK_TARGET) --generate-hashes --no-strip-markers \
		--custom-compile-command "make lock" --extra dev -o requirements/dev.lock pyproject.toml
	$(UV) pip compile -q $(LOCK_ARGS) $(LOCK_TARGET) --generate-hashes --no-strip-markers \
		--custom-compile-command "make lock" -c requirements/dev.lock \
		-o requirements/runtime.lock pyproject.toml

# Every benchmark, one table beside the floors, benchmarks/results.json (benchmarks/run.py);
# BENCH_ARGS="--only pages,load" or "--full" (10,000 automations due at once, a cold make run).
bench: $(DEV_STAMP) ## Run every benchmark: one table of figures beside their floors
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

clean: ## Remove the virtualenv (keeps ./data)
	rm -rf $(VENV)
