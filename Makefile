# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
# PostgreSQL: $DATABASE_URL, else 127.0.0.1:5432, else a project-local cluster (scripts/pg.sh).

SHELL := /bin/bash
.DEFAULT_GOAL := help
DB_NAME ?= school_service

.PHONY: help run test test-citus client-check bench bench-fleet-memory bench-default-pool bench-fairness bench-archive bench-report-cards bench-families soak profile profile-instructions fuzz metrics-demo console-shots app-shots build lint fmt schema bench-year bench-oneroster bench-events

help:
	@echo "make run    build, migrate, create demo schools when empty, serve on 127.0.0.1:8000"
	@echo "make test   the whole test suite against a real PostgreSQL"
	@echo "make test-citus  the service on a local Citus cluster (after ../shared/scripts/citus-build.sh)"
	@echo "make client-check  Python and TypeScript clients generated from the OpenAPI document, checked against a server (in make test)"
	@echo "make bench  release build + 1,000 schools + wrk load on loopback; prints figures"
	@echo "make bench-fleet-memory  2,000 schools round robin: PostgreSQL backends' memory, throughput, p99, before/after affinity (in make bench)"
	@echo "make bench-default-pool  make bench's 1,000 schools: the default pool (sized for the schools) vs the CPU's, read and mixed-1000 (in make bench)"
	@echo "make bench-provision  provisioning against PostgreSQL's floor, fleet migrate timings"
	@echo "make bench-fairness  49 quiet schools beside one searching (64 connections) or reading at 20x; FAIRNESS_MODES, FAIRNESS_RUNS"
	@echo "make bench-archive  one school with 100,000 marks exported and imported: time, peak RSS, archive size"
	@echo "make bench-oneroster  OneRoster: 2,000 students, 80 classes: roster pull, delta sync, class results, PUT result, CSV zip"
	@echo "make bench-report-cards  report card PDFs: a class of 40 and 502 students over 12 classes: time, peak RSS"
	@echo "make bench-families  guardian vs teacher reads, mark writes with history on/off, API-key vs staff reads (in make bench)"
	@echo "make bench-year  a 5,000-row students file (CSV, XLSX), a 2,000-student rollover, last year's report cards before/after (in make bench)"
	@echo "make bench-events        webhooks: write throughput with subscriptions, commit-to-ack lag, relay cost with 10 vs 10,000 schools"
	@echo "make soak   3 minutes (SOAK_SECONDS) of load over 50 schools through PostgreSQL restarts, cut connections,"
	@echo "            PgBouncer restarts, SIGKILLed servers and a slow-query storm; checks every acknowledged write"
	@echo "make profile  where a read's CPU goes: perf over the server under wrk load"
	@echo "make profile-instructions  the instructions per read, counted by callgrind (the same under any load)"
	@echo "make fuzz   schemathesis against the OpenAPI document + docs page in headless Chromium"
	@echo "make metrics-demo  server + Prometheus + load; graph in docs/img/metrics-demo.png"
	@echo "make console-shots  the admin console at laptop and phone width, in target/console-shots/"
	@echo "make app-shots  the school app at laptop and phone width, in target/app-shots/, and the marks sheet's timing (release build)"
	@echo "make lint   rustfmt check and clippy with warnings as errors"

build:
	cargo build --release

run: build
	@scripts/run.sh

test:
	@scripts/test.sh

test-citus:
	@scripts/test-citus.sh

client-check:
	@scripts/client-check.sh

bench:
	@scripts/bench.sh
	@[ "$${BENCH_FLEET_MEMORY:-1}" = 0 ] || scripts/bench/fleet_memory.sh
	@[ "$${BENCH_DEFAULT_POOL:-1}" = 0 ] || scripts/bench/default_pool.sh

bench-fleet-memory:
	@scripts/bench/fleet_memory.sh

bench-default-pool:
	@scripts/bench/default_pool.sh

bench-provision:
	@scripts/bench-provision.sh

metrics-demo:
	@scripts/metrics-demo.sh

console-shots:
	@scripts/console-test.sh shots

app-shots:
	@scripts/app-test.sh shots --release

profile:
	@scripts/profile.sh

profile-instructions:
	@scripts/profile-instructions.sh

fuzz:
	@scripts/fuzz.sh

lint:
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings

fmt:
	cargo fmt --all

schema:
	scripts/generate-schema.sh

bench-fairness:
	@scripts/bench/fairness.sh

bench-archive:
	@scripts/bench/archive.sh

bench-oneroster:
	@scripts/bench/oneroster.sh

bench-report-cards:
	@scripts/bench/report_cards.sh

bench-families:
	@scripts/bench/families.sh
bench-year:
	@scripts/bench/year.sh
bench-events:
	@scripts/bench/events.sh

# Release build; the private cluster, proxy, PgBouncer and servers are stopped at the end.
soak: build
	@SCHOOL_SERVICE_BIN="$(CURDIR)/target/release/school-service" \
		timeout $$(( $${SOAK_SECONDS:-180} + 300 )) tests/ops/soak.sh
