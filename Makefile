# Croupier: every target installs what it needs into .venv by itself.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help install run replay-sample test test-unit test-kafka check lint types schemas bench \
        kafka-up kafka-down kafka-status topics worker bench-kafka chaos clean

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt
	@command -v $(PY) >/dev/null || { echo "error: $(PY) not found; install Python 3.11 or set PY=" >&2; exit 1; }
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	@touch $@

install: $(STAMP) ## create .venv with croupier and its tools (nothing else)

run: $(STAMP) ## the main job (see README)
	$(BIN)/croupier run

replay-sample: $(STAMP) ## replay the bundled sample stream and print records and table statistics
	$(BIN)/croupier replay --stats services/samples/sample.jsonl

test: $(STAMP) ## all tests (the Kafka ones need the local broker: make kafka-up, or KAFKA_BOOTSTRAP)
	$(BIN)/pytest -q

test-unit: $(STAMP) ## the pure tests only, no broker
	$(BIN)/pytest -q tests/unit

lint: $(STAMP) ## ruff check and format check
	$(BIN)/ruff check schemas services tests
	$(BIN)/ruff format --check schemas services tests

types: $(STAMP) ## mypy strict on schemas/ and services/
	$(BIN)/mypy

check: lint types test ## lint, types and tests

schemas: $(STAMP) ## regenerate the committed JSON Schema files from the Structs
	$(BIN)/python -m schemas.jsonschema schemas/json

bench: $(STAMP) ## replay throughput vs a bare json.loads of the same file; memory over a million rounds
	$(BIN)/python -m tests.bench.replay

clean: ## remove the virtualenv and generated data
	rm -rf $(VENV) .data .pytest_cache .mypy_cache .ruff_cache
