#!/usr/bin/env bash
# The webhook fault run (issue 40; in `make test`, about a minute): thousands of writes over
# several schools, each school subscribed to a receiver, while the receiver fails and
# recovers, the server is SIGKILLed and started again and PostgreSQL restarts; then the
# checks of tests/ops/webhook_faults.py (every committed change delivered at least once, no
# event of a refused write, duplicates sharing their webhook-id, per-record order, the feed
# from the start answering exactly the committed changes). Exit status 1 on any failure.
#
# On this machine only, everything started here and stopped at the end, pass or fail: a
# private PostgreSQL cluster (tests/ops/private-pg.sh, never the system one, so it may be
# restarted) and one `school-service serve` (started, killed and started again by the
# Python script).
#
#   WEBHOOK_FAULT_SECONDS  length of the load (default 25)
#   WEBHOOK_FAULT_SCHOOLS  schools (default 4)
#   SCHOOL_SERVICE_BIN     the binary (default target/debug/school-service, built when missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
source tests/ops/private-pg.sh

seconds="${WEBHOOK_FAULT_SECONDS:-25}"
schools="${WEBHOOK_FAULT_SCHOOLS:-4}"
bin="${SCHOOL_SERVICE_BIN:-$PWD/target/debug/school-service}"
[ -x "$bin" ] || cargo build --quiet --bin school-service

status=1
cleanup() {
  local pid
  if [ -f "${PRIVATE_PG_WORK:-/nonexistent}/server-webhooks.pid" ]; then
    pid="$(cat "$PRIVATE_PG_WORK/server-webhooks.pid")"
    if grep -q school-service "/proc/$pid/cmdline" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  if [ "$status" != 0 ]; then
    echo "--- server log (tail)" >&2; tail -n 30 "${PRIVATE_PG_WORK:-/nonexistent}/server-webhooks.log" >&2 2>/dev/null || true
    echo "--- postgres log (tail)" >&2; private_pg_log_tail 20
  fi
  private_pg_cleanup
}
trap cleanup EXIT
trap 'exit 143' TERM INT

PRIVATE_PG_MAX_CONNECTIONS=60 private_pg_start
db="$PG_SERVER_URL/webhook_faults"
psql -qX "$PG_SERVER_URL/postgres" -c "CREATE DATABASE webhook_faults"
password="faults-password-1"
export JWT_SECRET="webhook-faults-secret-webhook-faults-0123" BCRYPT_COST=4 RUST_LOG=warn
DATABASE_URL="$db" "$bin" migrate >/dev/null
DATABASE_URL="$db" "$bin" tenant create-many --prefix whf --count "$schools" --teacher-password "$password" >/dev/null
seq "$schools" | DATABASE_URL="$db" xargs -P 4 -I{} "$bin" user create --tenant whf{} \
  --email admin@whf{}.test --password "$password" --role admin >/dev/null

(cd tests/ops && python3 webhook_faults.py --bin "$bin" --work "$PRIVATE_PG_WORK" --db "$db" \
  --port "$(free_port)" --schools "$schools" --password "$password" --seconds "$seconds" \
  --pg-ctl "$PRIVATE_PG_CTL" --pgdata "$PRIVATE_PG_DATA")
status=0
