#!/usr/bin/env bash
# Behind PgBouncer, PostgreSQL restarted under writes (run by `make test`).
#
# A private PostgreSQL cluster (never the system one) on a free port, a PgBouncer in front
# of it with the settings docs/scale-out.md recommends (scripts/pgbouncer.sh), the real
# server in DB_POOL_MODE=transaction (DATABASE_LISTEN_URL direct), five schools and their
# admins made with the CLI, then tests/ops/restart_load.py: steady mark writes through a
# fast restart and an immediate stop with PostgreSQL down for a few seconds; the first
# acknowledged write within 3 s of PostgreSQL being back, no acknowledged write lost, no
# 5xx but 503, /readyz 503 while PostgreSQL is down, the change listener back by itself.
# Also checks that docs/scale-out.md quotes scripts/pgbouncer-settings.ini as it is.
# Everything it started is stopped and removed, pass or fail. About 25 s.
#
#   SCHOOL_SERVICE_BIN   the binary (default target/debug/school-service, built when missing)
#   PGBOUNCER_SETTINGS   other PgBouncer settings, to measure them (scripts/pgbouncer.sh)
#   RESTART_VIA=direct   the same without PgBouncer (session mode), to compare
#   RESTART_LOAD_ARGS    more arguments for restart_load.py, e.g. "--wait 40" to measure
#                        recoveries slower than the 3 s asked for
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
source scripts/pgbouncer.sh
source tests/ops/private-pg.sh

python3 - <<'PY'
import sys
settings = open("scripts/pgbouncer-settings.ini").read()
if settings not in open("docs/scale-out.md").read():
    sys.exit("docs/scale-out.md does not quote scripts/pgbouncer-settings.ini as it is")
print("ok    docs/scale-out.md quotes scripts/pgbouncer-settings.ini")
PY

bin="${SCHOOL_SERVICE_BIN:-$PWD/target/debug/school-service}"
[ -x "$bin" ] || cargo build --quiet --bin school-service
server_pid=""
status=1
cleanup() {
  if [ -n "$server_pid" ] && ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" && echo "the server exited" >&2 || echo "the server exited with status $?" >&2
  fi
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  if [ "$status" != 0 ]; then
    echo "--- server log (tail)" >&2; tail -n 30 "$work/server.log" >&2 2>/dev/null || true
    echo "--- pgbouncer log (tail)" >&2; tail -n 30 "${PGBOUNCER_DIR:-/nonexistent}/pgbouncer.log" >&2 2>/dev/null || true
    echo "--- postgres log (tail)" >&2; private_pg_log_tail 20
  fi
  pgbouncer_stop
  private_pg_cleanup
}
trap cleanup EXIT

private_pg_start
work="$PRIVATE_PG_WORK"
psql -qX "$PG_SERVER_URL/postgres" -c "CREATE DATABASE school_restart"
PGBOUNCER_POOL_SIZE=4 pgbouncer_start

password="restart-password"
port="$(free_port)"
if [ "${RESTART_VIA:-pgbouncer}" = direct ]; then
  export DATABASE_URL="$PG_SERVER_URL/school_restart" DB_POOL_MODE=session
  unset DATABASE_LISTEN_URL
else
  export DATABASE_URL="$PGBOUNCER_URL/school_restart" DB_POOL_MODE=transaction \
    DATABASE_LISTEN_URL="$PG_SERVER_URL/school_restart"
fi
export JWT_SECRET="restart-test-secret-restart-test-secret-01" BCRYPT_COST=4 RUST_LOG=warn,school_service::startup=info \
  BIND_ADDR="127.0.0.1:$port" LOGIN_RATE_PER_MINUTE=100000 ACCESS_TOKEN_TTL=600 DB_POOL_SIZE=8
"$bin" migrate >/dev/null
schools=()
for i in 1 2 3 4 5; do
  "$bin" tenant create --schema "school$i" --name "School $i" --domain "school$i.localhost" >/dev/null
  "$bin" user create --tenant "school$i" --email "admin@school$i.test" --password "$password" --role admin >/dev/null
  schools+=("school$i")
done
"$bin" serve >"$work/server.log" 2>&1 &
server_pid=$!
wait_ready "http://127.0.0.1:$port"

timeout 120 python3 tests/ops/restart_load.py --port "$port" --password "$password" \
  --schools "$(IFS=,; echo "${schools[*]}")" --db-url "$PG_SERVER_URL/school_restart" \
  --pg-ctl "$PRIVATE_PG_CTL" --pgdata "$PRIVATE_PG_DATA" --cli "$bin" ${RESTART_LOAD_ARGS:-}
status=0
