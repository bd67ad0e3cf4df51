# Talorys: `make run` and `make test` work on a fresh clone (see README.md).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.run-installed
DEV_STAMP := $(VENV)/.dev-installed

.DEFAULT_GOAL := help
.PHONY: help run test lint format check-imports bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q .
	@touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q ".[dev]"
	@touch $@ $(RUN_STAMP)

run: $(RUN_STAMP) ## Install, migrate and start web + worker + beat (embedded defaults)
	$(BIN)/python manage.py talorys_run

test: $(DEV_STAMP) ## Lint, check the layers and run the whole suite
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(DEV_STAMP) ## ruff lint and format check only
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

format: $(DEV_STAMP) ## Format the code with ruff
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .

check-imports: $(DEV_STAMP) ## Check the layers of DESIGN.md
	$(BIN)/lint-imports

bench: $(DEV_STAMP) ## Run the benchmarks in benchmarks/
	@for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean: ## Remove the virtualenv (keeps ./data)
	rm -rf $(VENV)
