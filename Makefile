# Croupier: every target installs what it needs into .venv by itself.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: help install run replay-sample archive test test-unit check lint types schemas reference bench bench-heap bench-batch \
        kafka-up kafka-down topics worker bench-kafka bench-ab bench-recovery chaos clean broker \
        db-up db-down db projector bench-readside bench-readside-parts k8s-manifests k8s-schemas kafka-up-secure acls \
        test-security test-examples cluster-up cluster-down cluster-status chaos-cluster chaos-cluster-ci benchmarks-doc soak soak-ci soak-tools \
        image test-image simulate wallet api fuzz-api browser test-e2e

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt
	@command -v $(PY) >/dev/null || { echo "error: $(PY) not found; install Python 3.11 or set PY=" >&2; exit 1; }
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	@touch $@

install: $(STAMP) ## create .venv with croupier and its tools (nothing else)

run: $(STAMP) ## the main job (see README); KAFKA_SECURITY=scram runs it on the secured local broker, each process as its role
	$(BIN)/croupier run

replay-sample: $(STAMP) ## replay the bundled sample stream and print records and table statistics
	$(BIN)/croupier replay --stats services/samples/sample.jsonl

# The broker the Kafka tests use: KAFKA_BOOTSTRAP if set, else the local one (started if needed).
broker: $(STAMP)
	@if [ -z "$$KAFKA_BOOTSTRAP" ]; then KAFKA_SECURITY=plaintext PYTHON=$(BIN)/python bash deploy/kafka/up.sh; fi

# The PostgreSQL the read-side tests use: DATABASE_URL if set, else the local one (started if needed).
db:
	@if [ -z "$$DATABASE_URL" ]; then bash deploy/postgres/up.sh; fi

test: $(STAMP) broker db k8s-schemas ## all tests: unit, then on a real broker and a real PostgreSQL, and a secured broker of their own (all started by themselves)
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

reference: $(STAMP) ## regenerate docs/reference/ (settings, commands and flags, metrics) from the code
	$(BIN)/python -m services.reference docs/reference

bench: $(STAMP) ## replay throughput vs a bare json.loads of the same file; memory over a million rounds
	$(BIN)/python -m tests.bench.replay

benchmarks-doc: $(STAMP) ## regenerate docs/BENCHMARKS.md's current figures from benchmarks/results/*.json, which every bench target saves
	$(BIN)/python -m tests.bench.report

kafka-up: $(STAMP) ## start the local Kafka broker (KRaft, 127.0.0.1:9092), fetching its jars on first use
	PYTHON=$(BIN)/python bash deploy/kafka/up.sh

kafka-up-secure: $(STAMP) ## the local broker with SASL/SCRAM-SHA-512 over TLS and ACLs (KAFKA_SECURITY=scram); clients in .data/kafka/clients
	KAFKA_SECURITY=scram PYTHON=$(BIN)/python bash deploy/kafka/up.sh

acls: $(STAMP) ## the roles' users and ACLs on the secured local broker, from services/roles.py (idempotent; ARGS=--rotate sets the passwords again)
	PYTHON=$(BIN)/python bash deploy/kafka/secure.sh acls $(or $(KAFKA_BASE),.data/kafka) $(ARGS)

test-security: $(STAMP) ## the security tests alone, on a secured broker of their own (127.0.0.1:19094)
	$(BIN)/pytest -q tests/security

test-examples: $(STAMP) broker ## the example clients of examples/ (Go, Java: go and mvn fetch what they need) against the local broker and a secured one of their own
	cd examples && go vet ./... && go test ./...
	$(BIN)/pytest -q tests/examples

kafka-down: ## stop the local Kafka broker (KAFKA_WIPE=1 also deletes its data)
	bash deploy/kafka/down.sh

cluster-up: $(STAMP) ## start the local three-node Kafka cluster (127.0.0.1:29092-29094; idempotent); prints KAFKA_BOOTSTRAP
	PYTHON=$(BIN)/python bash deploy/kafka/cluster.sh up

cluster-down: ## stop the three-node cluster (KAFKA_WIPE=1 also deletes its data)
	bash deploy/kafka/cluster.sh down

cluster-status: $(STAMP) ## the cluster's nodes, quorum leader and under-replicated partitions
	PYTHON=$(BIN)/python bash deploy/kafka/cluster.sh status

topics: $(STAMP) ## create the missing topics and bring the existing ones' settings to plan (idempotent)
	$(BIN)/croupier topics

worker: $(STAMP) ## run one stream processor in the foreground (start several to share the work)
	$(BIN)/croupier worker

clean: ## remove the virtualenv and generated data
	rm -rf $(VENV) .data .pytest_cache .mypy_cache .ruff_cache

bench-kafka: $(STAMP) broker ## worker events/s on a 300,000-event floor vs aiokafka, librdkafka transactional and faust copy loops of rounds and bets; 10,000-bet round latency
	$(BIN)/python -m tests.bench.kafka

bench-ab: $(STAMP) ## old code (BASE=<git ref>, default HEAD; a worktree in .data/ab) vs this work tree, in turns: replay output sha256 and events/s; KAFKA=1 adds the worker's events/s on the broker
	@if [ -n "$(KAFKA)" ]; then $(MAKE) --no-print-directory broker; fi
	$(BIN)/python -m tests.bench.ab $(or $(BASE),HEAD) $(if $(KAFKA),--kafka)

bench-heap: $(STAMP) ## memory given back when a task leaves a worker, pymalloc (the worker's) vs glibc malloc, and the fold's time with each
	$(BIN)/python -m tests.bench.heap

bench-batch: $(STAMP) ## the worker's batch path without Kafka (fold, routing, journal, state) against the bare fold of the same messages
	$(BIN)/python -m tests.bench.batch

bench-recovery: $(STAMP) broker ## takeover after kill -9 at 200,000 and 2,000,000 events; throughput and p99 with the durable state on and off (ARGS="--sizes 20000" for a quick run)
	$(BIN)/python -m tests.bench.recovery $(ARGS)

simulate: $(STAMP) ## publish a simulated floor of all three games to Kafka (Ctrl-C stops)
	$(BIN)/croupier simulate

archive: $(STAMP) ## archive accepted and rejected into .data/archive until caught up (croupier archive --once)
	$(BIN)/croupier archive .data/archive --once

wallet: $(STAMP) ## credit committed settlements, refunds and adjustments to .data/wallet.sqlite and print balances
	$(BIN)/croupier wallet --report

api: $(STAMP) ## run the read side (bet history, round recall, board) on 127.0.0.1:8080
	$(BIN)/croupier api

projector: $(STAMP) ## project the committed topics into the read side's database (DATABASE_URL, else SQLite)
	$(BIN)/croupier projector

db-up: ## start the local PostgreSQL of the read side (.data/postgres, 127.0.0.1:15432); prints DATABASE_URL
	bash deploy/postgres/up.sh

db-down: ## stop the local PostgreSQL (PG_WIPE=1 also deletes its data)
	bash deploy/postgres/down.sh

bench-readside: $(STAMP) broker db ## projector rows/s vs the pipeline's bets/s, flat memory, restart, query p50/p99 (PostgreSQL)
	$(BIN)/python -m tests.bench.readside

bench-readside-parts: $(STAMP) broker db ## the projector's processor time per bet, part by part (reading, decoding, encoding, PostgreSQL) and COPY's floor
	$(BIN)/python -m tests.bench.readside_parts

fuzz-api: $(STAMP) broker ## schemathesis fuzzes a running read side from its OpenAPI document
	$(BIN)/pytest -q tests/integration/test_api_fuzz.py

browser: ## install headless Chromium and chromedriver from Debian (idempotent, needs root)
	bash deploy/browser.sh

test-e2e: $(STAMP) broker browser ## the board page and the integrity page in headless Chromium, the board updated live (screenshots in test-output/)
	$(BIN)/pytest -q tests/e2e

k8s-manifests: $(STAMP) ## render deploy/k8s/base's KafkaTopics and KafkaUsers from the topic plan and the roles
	env -u KAFKA_BOOTSTRAP $$(env | sed -n 's/^\(CROUPIER_[A-Z_]*\)=.*/-u \1/p') $(BIN)/python -m services.k8s

image: ## build the image localhost/croupier:dev with buildah, its Debian base made by mmdebstrap: no Docker engine, no registry (deploy/image.sh; installs podman, buildah, mmdebstrap, runc if missing)
	bash deploy/image.sh

test-image: $(STAMP) broker db ## a worker and the API from the image (podman, host network) settle and serve rounds on the local broker and PostgreSQL (needs `make image`)
	$(BIN)/pytest -q tests/image

k8s-schemas: ## fetch the schemas of deploy/k8s's custom resources (Strimzi, prometheus-operator) into .data/k8s, once
	bash deploy/k8s/schemas/fetch.sh

chaos: $(STAMP) ## fault suite on its own broker (127.0.0.1:19092): kill -9, rebalances, pause, broker crash, bad input; then verify
	$(BIN)/pytest -q tests/chaos

chaos-cluster: $(STAMP) ## broker faults on a three-node cluster of its own (replication 3, min ISR 2): leader, coordinator and rolling restarts, one and two nodes down; then verify
	$(BIN)/pytest -q tests/chaos_cluster

chaos-cluster-ci: $(STAMP) ## the reduced broker-fault suite .ci/run runs (CHAOS_CLUSTER_FULL=0)
	CHAOS_CLUSTER_FULL=0 $(BIN)/pytest -q tests/chaos_cluster

soak-tools: ## install iptables from Debian for the soak's network partition (idempotent, needs root)
	bash deploy/soak-tools.sh

soak: $(STAMP) soak-tools ## a floor (50 tables, ~5,000 bets/min) under seeded faults on a cluster and PostgreSQL of its own, checked exact and flat (SOAK_MINUTES=60, SOAK_SEED; root: tmpfs, iptables)
	SOAK_MINUTES=$(or $(SOAK_MINUTES),60) $(BIN)/pytest -q -s tests/soak

soak-ci: $(STAMP) soak-tools ## the 5-minute soak: every fault but the full disk
	SOAK_MINUTES=5 SOAK_FAULTS=worker,projector,broker-kill,broker-pause,postgres,partition $(BIN)/pytest -q -s tests/soak
