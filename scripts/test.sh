#!/usr/bin/env bash
# `make test`: unit and integration tests against a real PostgreSQL. Each integration test
# clones its own database from a template migrated and seeded once per run; the run's
# databases (template included) are dropped at the end, pass or fail. A PgBouncer in
# transaction pooling mode (scripts/pgbouncer.sh) carries the DB_POOL_MODE=transaction tests.
# Then the set-up itself (tests/ops/): the local cluster and PgBouncer started from a fresh
# clone in a private directory, PostgreSQL restarted under writes behind PgBouncer, and a
# short soak under faults.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
source scripts/pgbouncer.sh
pg_ensure
# The report card tests read the PDFs back with pdftotext (tests/api/report_cards/cards.rs).
need_command pdftotext poppler-utils
# Webhook signatures are verified by the Standard Webhooks reference library
# (tests/webhooks/verify.py, run by tests/api/webhooks/subscriptions.rs).
python3 -c 'import standardwebhooks' 2>/dev/null ||
  python3 -m pip install --quiet 'standardwebhooks==1.1.0'
export TEST_PG_URL="$PG_SERVER_URL"
export TEST_RUN_ID="r$(date +%s)_$$"
export RUST_LOG="${RUST_LOG:-warn}"

cleanup() {
  pgbouncer_stop
  psql -qAt "$(pg_admin_url)" -c \
    "SELECT datname FROM pg_database WHERE datname LIKE 'school\_t%' AND datname LIKE '%$TEST_RUN_ID%'" |
    while read -r db; do
      psql -q "$(pg_admin_url)" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null || true
    done
}
trap cleanup EXIT
pgbouncer_start
export TEST_PGBOUNCER_URL="$PGBOUNCER_URL" TEST_REQUIRE_PGBOUNCER=1

# Each phase's start, with the seconds since the run began (where CI's time goes).
phase() { echo "== [test +${SECONDS}s] $*"; }

# Integration tests wait on the database, not the CPU: run more of them than cores.
threads="${TEST_THREADS:-8}"
phase "Rust tests (build, unit, integration)"
if command -v cargo-nextest >/dev/null 2>&1; then
  cargo nextest run --all-targets --no-fail-fast --test-threads "$threads"
else
  cargo test --all-targets --no-fail-fast -- --test-threads "$threads"
fi

# The platform console in a real browser (Playwright + Debian's Chromium).
phase "console in Chromium"
scripts/console-test.sh
# The school app in a real browser, on the demo schools.
phase "school app in Chromium"
scripts/app-test.sh

# Clients generated from the OpenAPI document (Python and TypeScript) against a real server.
phase "generated clients"
scripts/client-check.sh

# The set-up: from a clone in a `mktemp -d` directory (a few seconds), a private
# PostgreSQL restarted under writes behind PgBouncer (about 20 s), and 20 s of `make soak`
# with three of its faults (a proxy cut mid-query, a PostgreSQL restart, a server
# SIGKILLed; about 40 s with its set-up), and the webhook fault run. Each cleans up after
# itself; timeout bounds them.
phase "set-up from a fresh clone, PgBouncer restart, soak, webhook faults"
timeout 120 tests/ops/fresh-clone.sh
timeout 180 tests/ops/pgbouncer-restart.sh
SOAK_SECONDS=20 timeout 150 tests/ops/soak.sh
# Webhooks under faults (issue 40): thousands of writes over four schools while the receiver
# fails and recovers, the server is SIGKILLed and PostgreSQL restarts (about a minute).
timeout 180 tests/ops/webhook-faults.sh
phase "done"
