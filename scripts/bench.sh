#!/usr/bin/env bash
# `make bench`: release build, a fresh database, 1,000 schools, a server on loopback, and
# real HTTP load from wrk (installed from Debian's packages when missing). Prints one line
# per scenario (req/s, p50, p99, errors), pgbench -S as the one-query ceiling, the
# server's peak RSS, and provisioning / migrate timings. Nothing here asserts a number.
# First it runs scripts/bench-provision.sh (provisioning against PostgreSQL's floor, fleet
# migrate; BENCH_PROVISION=0 skips it).
#
# BENCH_VIA=pgbouncer: then the server is restarted with DB_POOL_MODE=transaction behind a
# PgBouncer in transaction pooling mode (scripts/pgbouncer.sh), the same scenarios run
# again, and both modes are printed side by side (docs/scale-out.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
source scripts/pgbouncer.sh
source scripts/bench/django.sh
pg_ensure
VIA="${BENCH_VIA:-direct}"

SCHOOLS="${BENCH_SCHOOLS:-1000}"
DURATION="${BENCH_DURATION:-10}"
CONNECTIONS="${BENCH_CONNECTIONS:-64}"
PORT="${BENCH_PORT:-18080}"
PASSWORD="bench-password"

need_command wrk
pgbench_bin="$(command -v pgbench || echo "$(pg_bin_dir)/pgbench")"

# BENCH_BIN: another build to measure (an earlier commit's, for a before/after in one run).
if [ -n "${BENCH_BIN:-}" ]; then
  bin="$BENCH_BIN"
else
  cargo build --release --quiet
  bin="$PWD/target/release/school-service"
fi
[ "${BENCH_PROVISION:-1}" = 1 ] && scripts/bench-provision.sh

db="school_bench_$$"
pgb="school_pgbench_$$"
djdb="school_django_$$"
work="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  pgbouncer_stop
  django_stop
  psql -q "$(pg_admin_url)" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "DROP DATABASE IF EXISTS $pgb WITH (FORCE)" \
    -c "DROP DATABASE IF EXISTS $djdb WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
psql -q "$(pg_admin_url)" -c "CREATE DATABASE $db" -c "CREATE DATABASE $pgb"

export DATABASE_URL="$(pg_url_for "$db")"
export JWT_SECRET="bench-secret-bench-secret-bench-secret-0123"
export RUST_LOG=warn ACCESS_TOKEN_TTL=3600 LOGIN_RATE_PER_MINUTE=100000000
# The CPU's pool (2 x cores + 2) unless BENCH_POOL_SIZE says otherwise, so the figures
# compare across commits. (Left to itself the server sizes its pool from the 1,000
# schools, 10 connections, spreading them over 6 while they fit: make
# bench-default-pool compares the two.)
export DB_POOL_SIZE="${BENCH_POOL_SIZE:-$(( $(nproc) * 2 + 2 ))}" BIND_ADDR="127.0.0.1:$PORT"

"$bin" migrate >/dev/null
echo "== provisioning $SCHOOLS schools"
BCRYPT_COST=4 "$bin" tenant create-many --prefix bench --count "$SCHOOLS" --teacher-password "$PASSWORD"
start=$(date +%s%N)
"$bin" migrate >/dev/null
echo "migrate over $SCHOOLS up-to-date schools: $(( ($(date +%s%N) - start) / 1000000 )) ms"
BCRYPT_COST=4 "$bin" user create --tenant bench1 --email admin@bench1.test --password "$PASSWORD" --role admin >/dev/null
# The login scenario measures bcrypt at the configured (default) cost.
BCRYPT_COST=12 "$bin" user create --tenant bench1 --email login@bench1.test --password "$PASSWORD" --role teacher >/dev/null

BCRYPT_COST=12 "$bin" serve &
server_pid=$!
wait_ready "http://127.0.0.1:$PORT"

python3 scripts/bench/setup.py --port "$PORT" --schools "$SCHOOLS" --password "$PASSWORD" --out "$work"

# Runs the scenarios named in $@ against the running server; appends "mode scenario ..." rows.
headed=""
run_scenarios() {
  local mode="$1"; shift
  if [ "$headed" != "$mode" ]; then
    echo "== load ($mode): $CONNECTIONS connections, 2 threads, ${DURATION}s per scenario (nproc=$(nproc))"
    printf '%-12s %10s %8s %8s %8s\n' scenario req/s p50_ms p99_ms errors
    headed="$mode"
  fi
  for scenario in "$@"; do
    # Logins queue behind bcrypt: give them a timeout longer than the queue.
    wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 30s --latency -s "$work/$scenario.lua" "http://127.0.0.1:$PORT" > "$work/$scenario.out" 2>&1
    python3 scripts/bench/parse_wrk.py "$scenario" "$work/$scenario.out" | tee -a "$work/results-$mode.txt"
  done
}

# Warm-up, not measured: the pool opens its connections and the caches fill (every
# school's directory entry, user and roles) before the first figure is taken.
# Then a CHECKPOINT, so the one that provisioning's WAL calls for is not taken (with its
# I/O stalls) in the middle of a measurement.
warm_up() {
  for scenario in read mixed-1000; do
    wrk -t2 -c"$CONNECTIONS" -d3s -s "$work/$scenario.lua" "http://127.0.0.1:$PORT" >/dev/null 2>&1
  done
  psql -q "$(pg_admin_url)" -c CHECKPOINT >/dev/null
}

results="$work/results-session.txt"
warm_up
run_scenarios session read list write mixed-1000
# The Django stack on the same read, same load, same PostgreSQL (BENCH_DJANGO=0 skips it);
# before the logins, whose bcrypt queue outlives their scenario.
if [ "${BENCH_DJANGO:-1}" = 1 ]; then
  django_port=$((PORT + 1))
  django_start "$django_port" "$djdb" "$work/django-read.lua"
  django_url="http://127.0.0.1:$django_port/api/v1/school/report-settings/"
  wrk -t2 -c"$CONNECTIONS" -d3s -s "$work/django-read.lua" "$django_url" >/dev/null 2>&1
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --timeout 30s --latency -s "$work/django-read.lua" \
    "$django_url" > "$work/django-read.out" 2>&1
  python3 scripts/bench/parse_wrk.py django-read "$work/django-read.out" | tee -a "$results"
  django_stop
fi

run_scenarios session login

"$pgbench_bin" -i -q "$(pg_url_for "$pgb")" >/dev/null 2>&1
tps=$("$pgbench_bin" -S -n -c "$CONNECTIONS" -j 2 -T "$DURATION" "$(pg_url_for "$pgb")" 2>/dev/null | awk '/^tps/ {print $3; exit}')
printf '%-12s %10.0f\n' "pgbench-S" "$tps"
python3 - "$results" "$tps" <<'PY'
import sys
rows = {line.split()[0]: float(line.split()[1]) for line in open(sys.argv[1]) if line.strip()}
tps = float(sys.argv[2])
for name in ("read", "mixed-1000"):
    print(f"{name} / pgbench-S: {rows[name] / tps:.2f}")
print(f"mixed-1000 / read: {rows['mixed-1000'] / rows['read']:.2f}")
if "django-read" in rows:
    print(f"read / django-read: {rows['read'] / rows['django-read']:.1f}x")
PY
echo "server peak RSS: $(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$server_pid/status")"

if [ "$VIA" = pgbouncer ]; then
  echo "== restarting the server with DB_POOL_MODE=transaction behind PgBouncer"
  kill "$server_pid" && wait "$server_pid" 2>/dev/null || true
  PGBOUNCER_POOL_SIZE="$DB_POOL_SIZE" pgbouncer_start
  DATABASE_LISTEN_URL="$DATABASE_URL" DATABASE_URL="$PGBOUNCER_URL/$db" DB_POOL_MODE=transaction \
    BCRYPT_COST=12 "$bin" serve &
  server_pid=$!
  wait_ready "http://127.0.0.1:$PORT"
  warm_up
  run_scenarios transaction read list write mixed-1000
  python3 - "$work/results-session.txt" "$work/results-transaction.txt" <<'PY'
import sys
def rows(path):
    return {l.split()[0]: l.split() for l in open(path) if l.strip()}
session, transaction = rows(sys.argv[1]), rows(sys.argv[2])
print("== transaction mode (PgBouncer) against session mode (direct), same run")
print(f"{'scenario':12} {'session':>10} {'pgbouncer':>10} {'ratio':>6} {'p99 s/t ms':>14}")
for name in ("read", "list", "write", "mixed-1000"):
    s, t = session[name], transaction[name]
    print(f"{name:12} {float(s[1]):10.0f} {float(t[1]):10.0f} {float(t[1]) / float(s[1]):6.2f} {s[3]:>6}/{t[3]:<7}")
PY
fi

# One school against the others (issue: a school can only slow itself); BENCH_FAIRNESS=0 skips.
if [ "${BENCH_FAIRNESS:-1}" = 1 ]; then
  scripts/bench/fairness.sh
fi

# One school as a unit: export and import (make bench-archive); BENCH_ARCHIVE=0 skips.
if [ "${BENCH_ARCHIVE:-1}" = 1 ]; then
  scripts/bench/archive.sh
fi

# The OneRoster provider (make bench-oneroster); BENCH_ONEROSTER=0 skips.
if [ "${BENCH_ONEROSTER:-1}" = 1 ]; then
  BENCH_BIN="$bin" scripts/bench/oneroster.sh
fi

# Report card PDFs (make bench-report-cards); BENCH_REPORT_CARDS=0 skips.
if [ "${BENCH_REPORT_CARDS:-1}" = 1 ]; then
  scripts/bench/report_cards.sh
fi

# Guardians, history and disclosures (issue 41): scripts/bench/families.sh; BENCH_FAMILIES=0 skips.
if [ "${BENCH_FAMILIES:-1}" = 1 ]; then
  BENCH_BIN="$bin" scripts/bench/families.sh
fi

# The school year: imports, rollover, last year's report cards (make bench-year);
# BENCH_YEAR=0 skips.
if [ "${BENCH_YEAR:-1}" = 1 ]; then
  BENCH_BIN="$bin" scripts/bench/year.sh
fi

# Change events and webhooks (issue 40: throughput with subscriptions, commit-to-ack lag,
# the relay's cost with 10 vs 10,000 schools; make bench-events); BENCH_EVENTS=0 skips.
if [ "${BENCH_EVENTS:-1}" = 1 ]; then
  BENCH_BIN="$bin" scripts/bench/events.sh
fi
