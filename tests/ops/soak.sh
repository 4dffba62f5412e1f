#!/usr/bin/env bash
# `make soak`: a bounded fault-injection run (SOAK_SECONDS, default 180; `make test` runs a
# 20-second version with three of the faults).
#
# On this machine only, everything started here and stopped at the end, pass or fail:
#   - a private PostgreSQL cluster (tests/ops/private-pg.sh), never the system one, so it
#     may be restarted and stopped;
#   - tests/ops/dbproxy.py, a TCP proxy in front of it that cuts every connection on a
#     signal;
#   - a PgBouncer in transaction mode (scripts/pgbouncer.sh, the recommended settings) in
#     front of the proxy;
#   - two `school-service serve` processes, started (and SIGKILLed, and started again) by
#     tests/ops/soak.py: "direct" in session mode through the proxy, "bouncer" in
#     transaction mode through PgBouncer (its change listener through the proxy);
#   - SOAK_SCHOOLS schools (default 50) made with the CLI, each with an admin.
# tests/ops/soak.py then runs the load (reads, lists, mark upserts, session creates and
# activations, department edits, with a ledger of every acknowledged write), the faults on a
# schedule, and the checks against the database; its report ends with the line
#   soak: W writes acknowledged, L lost, D duplicates, 5xx other than 503: X, recovery max S s
# and the exit status is 1 on any failure.
#
#   SOAK_SECONDS        length of the load (default 180)
#   SOAK_FAULTS         comma-separated faults (default: all of them from 90 s on, else
#                       cut-reset,pg-restart,kill-direct); see tests/ops/soak.py
#   SOAK_RATE           requests per second per school (default 4)
#   SCHOOL_SERVICE_BIN  the binary (default target/debug/school-service, built when missing;
#                       `make soak` builds and passes the release one)
#   SOAK_REPORT         also write the report to this file
#   SOAK_DUMP           write every request (school, operation, server, times, status) here
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
source scripts/pgbouncer.sh
source tests/ops/private-pg.sh

seconds="${SOAK_SECONDS:-180}"
schools="${SOAK_SCHOOLS:-50}"
bin="${SCHOOL_SERVICE_BIN:-$PWD/target/debug/school-service}"
[ -x "$bin" ] || cargo build --quiet --bin school-service
need_command pgbouncer

proxy_pid=""
status=1
cleanup() {
  # soak.py stops its servers itself; these pid files are for when it could not.
  local f pid
  for f in "${PRIVATE_PG_WORK:-/nonexistent}"/server-*.pid; do
    [ -f "$f" ] || continue
    pid="$(cat "$f")"
    if grep -q school-service "/proc/$pid/cmdline" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  if [ -n "$proxy_pid" ]; then kill "$proxy_pid" 2>/dev/null && wait "$proxy_pid" 2>/dev/null || true; fi
  if [ "$status" != 0 ]; then
    for f in "${PRIVATE_PG_WORK:-/nonexistent}"/server-*.log; do
      [ -f "$f" ] || continue
      echo "--- $(basename "$f") (tail)" >&2; tail -n 20 "$f" >&2
    done
    echo "--- pgbouncer log (tail)" >&2; tail -n 20 "${PGBOUNCER_DIR:-/nonexistent}/pgbouncer.log" >&2 2>/dev/null || true
    echo "--- postgres log (tail)" >&2; private_pg_log_tail 20
  fi
  pgbouncer_stop
  private_pg_cleanup
}
trap cleanup EXIT
trap 'exit 143' TERM INT

PRIVATE_PG_MAX_CONNECTIONS=100 private_pg_start
work="$PRIVATE_PG_WORK"
direct="$PG_SERVER_URL"
psql -qX "$direct/postgres" -c "CREATE DATABASE soak"

proxy_port="$(free_port)"
python3 tests/ops/dbproxy.py --listen "$proxy_port" --upstream "${direct##*@}" >"$work/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 50); do pg_answers 127.0.0.1 "$proxy_port" && break; sleep 0.1; done
proxied="postgres://postgres@127.0.0.1:$proxy_port"
# PgBouncer's server connections go through the proxy too.
PG_SERVER_URL="$proxied" PGBOUNCER_POOL_SIZE=6 pgbouncer_start
PG_SERVER_URL="$direct"
pgbouncer_bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
[ "$(id -u)" = 0 ] && pgbouncer_bin="runuser -u postgres -- $pgbouncer_bin"

password="soak-password-1"
export JWT_SECRET="soak-test-secret-soak-test-secret-0123456" BCRYPT_COST=4 RUST_LOG=warn
setup_started=$SECONDS
DATABASE_URL="$direct/soak" "$bin" migrate >/dev/null
DATABASE_URL="$direct/soak" "$bin" tenant create-many --prefix soak --count "$schools" --teacher-password "$password" >/dev/null
# Each school's admin; four CLI processes at a time.
seq "$schools" | DATABASE_URL="$direct/soak" xargs -P 4 -I{} "$bin" user create --tenant soak{} \
  --email admin@soak{}.test --password "$password" --role admin >/dev/null
echo "set-up: private PostgreSQL, proxy, PgBouncer, $schools schools in $((SECONDS - setup_started)) s" >&2

python3 tests/ops/soak.py --bin "$bin" --work "$work" --schools "$schools" --password "$password" \
  --seconds "$seconds" ${SOAK_FAULTS:+--faults "$SOAK_FAULTS"} ${SOAK_RATE:+--rate "$SOAK_RATE"} \
  --db "$direct/soak" --proxied-db "$proxied/soak" --bouncer-db "$PGBOUNCER_URL/soak" \
  --pg-ctl "$PRIVATE_PG_CTL" --pgdata "$PRIVATE_PG_DATA" --proxy-pid "$proxy_pid" --proxy-log "$work/proxy.log" \
  --pgbouncer "$pgbouncer_bin" --pgbouncer-dir "$PGBOUNCER_DIR" ${SOAK_REPORT:+--report "$SOAK_REPORT"} ${SOAK_DUMP:+--dump "$SOAK_DUMP"}
status=0
