#!/usr/bin/env bash
# `make bench-fairness` (and the last part of `make bench`): can one school slow the others?
#
# Fifty schools on one server with the default pool: 49 quiet ones, read back to back by
# five wrk connections (report settings, round robin), and a fiftieth holding 50,000
# students. The quiet schools are measured alone, then beside 64 connections of the noisy
# school searching its students for a name nobody has, then beside 100 connections (20
# times the quiet load) of its cheap reads; last (after the change only) beside 2,000 idle
# keep-alive connections and 200 uploads sending a byte a second, with the server's peak
# memory.
# Run twice in one go: "before" emulates the server as it was (no per-school share:
# DB_POOL_PER_SCHOOL = DB_POOL_SIZE; no statement limit; the search indexes dropped) and
# "after" is the server as configured by default. Also: one search and one unfiltered first
# page over the 50,000 students, one connection, p50. Nothing here asserts a number.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
pg_ensure

DURATION="${BENCH_DURATION:-10}"
PORT="${BENCH_PORT:-18090}"
STUDENTS="${BENCH_STUDENTS:-50000}"
PASSWORD="bench-password"

need_command wrk
# 2,000 idle and 200 slow connections, plus wrk's: more descriptors than the default 1,024.
ulimit -n 16384
cargo build --release --quiet
bin="$PWD/target/release/school-service"

db="school_fair_$$"
work="$(mktemp -d)"
server_pid=""
stop_server() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
cleanup() {
  stop_server
  psql -q "$(pg_admin_url)" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
psql -q "$(pg_admin_url)" -c "CREATE DATABASE $db"

export DATABASE_URL="$(pg_url_for "$db")"
export JWT_SECRET="bench-secret-bench-secret-bench-secret-0123"
export RUST_LOG=error ACCESS_TOKEN_TTL=3600 LOGIN_RATE_PER_MINUTE=100000000 BCRYPT_COST=4
export BIND_ADDR="127.0.0.1:$PORT"
pool_size=$(( $(nproc) * 2 + 2 ))

"$bin" migrate >/dev/null
"$bin" tenant create-many --prefix fair --count 50 --teacher-password "$PASSWORD" >/dev/null
psql -q "$DATABASE_URL" -c "
  INSERT INTO fair50.students (admission_number, first_name, last_name)
  SELECT 'ADM-' || n, 'First' || n, 'Last' || (n % 997) FROM generate_series(1, $STUDENTS) n;" \
  -c "VACUUM ANALYZE fair50.students"

token_of() { # school
  curl -sf -H "Host: $1.localhost" -H 'Content-Type: application/json' \
    -d "{\"identifier\": \"teacher@$1.test\", \"password\": \"$PASSWORD\"}" \
    "http://127.0.0.1:$PORT/api/v1/school/auth/login/" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["access"])'
}

write_scripts() {
  local rows="" n
  for n in $(seq 1 49); do
    rows+="  {\"fair$n.localhost\", \"Bearer $(token_of "fair$n")\"},"$'\n'
  done
  cat >"$work/quiet.lua" <<EOF
local targets = {
$rows}
local i = 0
request = function()
  i = i % #targets + 1
  return wrk.format("GET", "/api/v1/school/report-settings/", {["Host"] = targets[i][1], ["Authorization"] = targets[i][2]})
end
EOF
  local noisy
  noisy="$(token_of fair50)"
  for scenario in search first-page cheap; do
    case "$scenario" in
      search) path="/api/v1/school/students/?search=zzqx&page_size=50" ;;
      first-page) path="/api/v1/school/students/?page_size=50" ;;
      cheap) path="/api/v1/school/report-settings/" ;;
    esac
    cat >"$work/$scenario.lua" <<EOF
wrk.path = "$path"
wrk.headers["Host"] = "fair50.localhost"
wrk.headers["Authorization"] = "Bearer $noisy"
EOF
  done
}

measure() { # name lua connections [seconds]
  wrk -t1 -c"$3" -d"${4:-$DURATION}s" --timeout 30s --latency -s "$work/$2.lua" \
    "http://127.0.0.1:$PORT" >"$work/$1.out" 2>&1
  python3 scripts/bench/parse_wrk.py "$1" "$work/$1.out"
}

# The quiet schools alone, then beside a noisy school (both loads start together; the
# noisy one runs a second longer so it covers the whole quiet measurement).
side_by_side() { # label noisy-lua connections
  wrk -t1 -c"$3" -d"$((DURATION + 2))s" --timeout 30s --latency -s "$work/$2.lua" \
    "http://127.0.0.1:$PORT" >"$work/noisy-$1.out" 2>&1 &
  local noisy_pid=$!
  sleep 1
  measure "quiet+$1" quiet 5
  wait "$noisy_pid"
  python3 scripts/bench/parse_wrk.py "noisy-$1" "$work/noisy-$1.out"
}

run_mode() { # mode
  echo "== $1: DB_POOL_SIZE=$DB_POOL_SIZE DB_POOL_PER_SCHOOL=$DB_POOL_PER_SCHOOL DB_STATEMENT_TIMEOUT_MS=$DB_STATEMENT_TIMEOUT_MS SCHOOL_RATE_PER_SECOND=${SCHOOL_RATE_PER_SECOND:-}"
  "$bin" serve &
  server_pid=$!
  wait_ready "http://127.0.0.1:$PORT"
  write_scripts
  measure warm-up quiet 5 3 >/dev/null
  psql -q "$(pg_admin_url)" -c CHECKPOINT >/dev/null
  printf '%-16s %10s %8s %8s %8s\n' scenario req/s p50_ms p99_ms errors
  if [ "$1" = rate-limited ]; then
    # Only the case the rate limit is for: cheap requests at 20 times the quiet load.
    measure quiet-alone quiet 5
    side_by_side cheap cheap 100
    stop_server
    return
  fi
  measure search-alone search 1 5
  measure first-page first-page 1 5
  measure quiet-alone quiet 5
  side_by_side search search 64
  side_by_side cheap cheap 100
  if [ "$1" = after ]; then
    python3 scripts/bench/slow_clients.py "$PORT" 2000 200 "$((DURATION + 5))" &
    local slow_pid=$!
    sleep 3
    measure quiet+slow quiet 5
    wait "$slow_pid"
    echo "server peak RSS: $(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$server_pid/status")"
  fi
  stop_server
}

indexes() { # drop | create
  if [ "$1" = drop ]; then
    psql -q "$DATABASE_URL" -c "DROP INDEX fair50.students_search, fair50.students_list_order"
  else
    psql -q "$DATABASE_URL" -c "
      CREATE INDEX students_search ON fair50.students USING gin (admission_number public.gin_trgm_ops,
        first_name public.gin_trgm_ops, last_name public.gin_trgm_ops);
      CREATE INDEX students_list_order ON fair50.students (created_at, id) WHERE NOT is_deleted;
      ANALYZE fair50.students;"
  fi
}

indexes drop
DB_POOL_SIZE=$pool_size DB_POOL_PER_SCHOOL=$pool_size DB_STATEMENT_TIMEOUT_MS=0 run_mode before \
  | tee "$work/before.txt"
indexes create
DB_POOL_SIZE=$pool_size DB_POOL_PER_SCHOOL=$(( (pool_size + 1) / 2 )) DB_STATEMENT_TIMEOUT_MS=5000 \
  run_mode after | tee "$work/after.txt"
# The same with each school's rate capped well above a quiet school's (about 100 req/s
# here) and far below what 100 connections of cheap reads send.
DB_POOL_SIZE=$pool_size DB_POOL_PER_SCHOOL=$(( (pool_size + 1) / 2 )) DB_STATEMENT_TIMEOUT_MS=5000 \
  SCHOOL_RATE_PER_SECOND="${BENCH_SCHOOL_RATE:-300}" run_mode rate-limited | tee "$work/rate.txt"

python3 - "$work/before.txt" "$work/after.txt" "$work/rate.txt" <<'PY'
import sys
def rows(path):
    return {l.split()[0]: l.split() for l in open(path) if l.split() and l.split()[0][0].isalpha() and len(l.split()) == 5 and l.split()[1][0].isdigit()}
before, after, rate = rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3])
print("== quiet schools beside a noisy one (p99 and throughput relative to quiet-alone of the same mode)")
for mode, r in (("before", before), ("after", after), ("rate", rate)):
    alone = r["quiet-alone"]
    for noisy in ("search", "cheap", "slow"):
        if f"quiet+{noisy}" not in r:
            continue
        side = r[f"quiet+{noisy}"]
        print(f"{mode:7} beside {noisy:7}: p99 {float(side[3]):8.1f} ms = {float(side[3]) / float(alone[3]):6.1f}x alone; "
              f"throughput {float(side[1]) / float(alone[1]):.2f} of alone")
print(f"search over the students, p50: before {before['search-alone'][2]} ms, after {after['search-alone'][2]} ms")
print(f"unfiltered first page, p50: before {before['first-page'][2]} ms, after {after['first-page'][2]} ms")
PY
