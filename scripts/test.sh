#!/usr/bin/env bash
# `make test`: unit and integration tests. Each integration test clones its own database
# from a template migrated once per run; every database is dropped afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
pg_ensure
export TEST_PG_URL="$PG_SERVER_URL"
export RUST_LOG="${RUST_LOG:-warn}"
if command -v cargo-nextest >/dev/null 2>&1; then
  cargo nextest run --all-targets --no-fail-fast
else
  cargo test --all-targets --no-fail-fast
fi
