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
# Modes (FAIRNESS_MODES, run in turn on one database): "before" emulates the server as it
# was (no per-school share: DB_POOL_PER_SCHOOL = DB_POOL_SIZE, SCHOOL_MAX_IN_FLIGHT=0; no
# statement limit; the search indexes and the kept count of students dropped), "after" is
# the server as configured by default, "rate-refused" and "rate-held" add
# SCHOOL_RATE_PER_SECOND (refused at once, or held for the token). Each mode measures alone / beside the noisy school FAIRNESS_RUNS
# times in turn (default 3), and the summary gives each run's ratios (against alone in the
# same run) and their median. Also: one search and one unfiltered first page over the
# 50,000 students, one connection, p50. Nothing here asserts a number.
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

# Its database, dropped on exit with the server stopped (scripts/common.sh).
server_database school_fair
work="$(mktemp -d)"
cleanup() {
  server_cleanup
  rm -rf "$work"
}
trap cleanup EXIT

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

# CPU ticks (user + system, 1/100 s) of the processes with these pids.
ticks() {
  local pid total=0
  for pid in "$@"; do
    [ -r "/proc/$pid/stat" ] && total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
  done
  echo "$total"
}
pg_pids() { pgrep -f "postgres: .*$db" || true; }

measure() { # name lua connections [seconds]
  wrk -t1 -c"$3" -d"${4:-$DURATION}s" --timeout 30s --latency -s "$work/$2.lua" \
    "http://127.0.0.1:$PORT" >"$work/$1.out" 2>&1
  python3 scripts/bench/parse_wrk.py "$1" "$work/$1.out"
}

# The quiet schools alone, or beside a noisy school (both loads start together; the noisy
# one runs two seconds longer so it covers the whole quiet measurement). Also prints the
# CPU seconds server, PostgreSQL and the load generators used meanwhile.
side_by_side() { # label [noisy-lua connections]
  local noisy_pid="" before_server before_pg before_noisy quiet_pid
  if [ -n "${2:-}" ]; then
    wrk -t1 -c"$3" -d"$((DURATION + 2))s" --timeout 30s --latency -s "$work/$2.lua" \
      "http://127.0.0.1:$PORT" >"$work/noisy-$1.out" 2>&1 &
    noisy_pid=$!
    sleep 1
  fi
  before_server=$(ticks "$server_pid"); before_pg=$(ticks $(pg_pids))
  before_noisy=$(ticks $noisy_pid)
  wrk -t1 -c5 -d"${DURATION}s" --timeout 30s --latency -s "$work/quiet.lua" \
    "http://127.0.0.1:$PORT" >"$work/quiet-$1.out" 2>&1 &
  quiet_pid=$!
  sleep "$((DURATION - 1))"
  # Sampled a second before the end, while every process is still there.
  local server_s pg_s quiet_s noisy_s
  server_s=$(( $(ticks "$server_pid") - before_server )); pg_s=$(( $(ticks $(pg_pids)) - before_pg ))
  quiet_s=$(ticks "$quiet_pid"); noisy_s=$(( $(ticks $noisy_pid) - before_noisy ))
  wait "$quiet_pid"
  python3 scripts/bench/parse_wrk.py "quiet+$1" "$work/quiet-$1.out"
  if [ -n "$noisy_pid" ]; then
    wait "$noisy_pid"
    python3 scripts/bench/parse_wrk.py "noisy+$1" "$work/noisy-$1.out"
  fi
  echo "cpu+$1 server $server_s postgres $pg_s wrk-quiet $quiet_s wrk-noisy $noisy_s (1/100 s over $((DURATION - 1)) s)"
}

indexes_now=present
indexes() { # drop | create
  if [ "$1" = drop ] && [ "$indexes_now" = present ]; then
    # And no kept count: the list counts every row, as before live_counts.
    psql -q "$DATABASE_URL" -c "DROP INDEX fair50.students_search, fair50.students_list_order" \
      -c "DELETE FROM fair50.live_counts WHERE table_name = 'students'"
    indexes_now=dropped
  elif [ "$1" = create ] && [ "$indexes_now" = dropped ]; then
    psql -q "$DATABASE_URL" -c "
      CREATE INDEX students_search ON fair50.students USING gin (admission_number public.gin_trgm_ops,
        first_name public.gin_trgm_ops, last_name public.gin_trgm_ops);
      CREATE INDEX students_list_order ON fair50.students (created_at, id) WHERE NOT is_deleted;
      INSERT INTO fair50.live_counts (table_name, live)
        SELECT 'students', count(*) FROM fair50.students WHERE NOT is_deleted;
      ANALYZE fair50.students;"
    indexes_now=present
  fi
}

# One mode: `name[:VAR=value...]`. The name says what is measured and how the server is
# configured (before: as it was before the fairness work; after: the defaults; rate-held,
# rate-refused: the defaults with SCHOOL_RATE_PER_SECOND, the request past it held for its
# token or refused at once); the VAR=value pairs override settings (experiments).
run_mode() { # spec
  local spec="$1" name="${1%%:*}" r
  (
    trap server_stop EXIT
    unset DB_POOL_PER_SCHOOL SCHOOL_MAX_IN_FLIGHT SCHOOL_RATE_PER_SECOND SCHOOL_RATE_MAX_DELAY_MS
    export DB_POOL_SIZE=$pool_size DB_STATEMENT_TIMEOUT_MS=5000
    case "$name" in
      before*) export DB_POOL_PER_SCHOOL=$pool_size SCHOOL_MAX_IN_FLIGHT=0 DB_STATEMENT_TIMEOUT_MS=0 ;;
      rate-held*) export SCHOOL_RATE_PER_SECOND="$RATE" ;;
      rate-refused*) export SCHOOL_RATE_PER_SECOND="$RATE" SCHOOL_RATE_MAX_DELAY_MS=0 ;;
    esac
    local pair
    IFS=: read -ra pairs <<<"${spec#"$name"}"
    for pair in "${pairs[@]}"; do [ -n "$pair" ] && export "$pair"; done
    echo "== $spec: $(env | grep -E '^(DB_POOL_SIZE|DB_POOL_PER_SCHOOL|DB_STATEMENT_TIMEOUT_MS|SCHOOL_[A-Z_]+)=' | sort | tr '\n' ' ')"
    echo "   load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    "$bin" serve &
    server_pid=$!
    wait_ready "http://127.0.0.1:$PORT"
    write_scripts
    measure warm-up quiet 5 3 >/dev/null
    psql -q "$(pg_admin_url)" -c CHECKPOINT >/dev/null
    printf '%-16s %10s %8s %8s %8s\n' scenario req/s p50_ms p99_ms errors
    case "$name" in
      rate*) ;;
      *)
        measure search-alone search 1 5
        measure first-page first-page 1 5
        ;;
    esac
    for r in $(seq 1 "$RUNS"); do
      side_by_side "alone#$r"
      # The rate limit is for cheap requests at 20 times the quiet load only.
      case "$name" in rate*) ;; *) side_by_side "search#$r" search 64 ;; esac
      side_by_side "cheap#$r" cheap 100
    done
    if [ "$name" = after ]; then
      # Measured once every client has started (they start over their first 5 s).
      python3 scripts/bench/slow_clients.py "$PORT" 2000 200 "$((DURATION + 8))" &
      local slow_pid=$!
      sleep 6
      measure quiet+slow quiet 5
      wait "$slow_pid"
      echo "server peak RSS: $(awk '/VmHWM/ {printf "%.1f MiB", $2/1024}' "/proc/$server_pid/status")"
    fi
    echo "   load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    server_stop
  )
}

RUNS="${FAIRNESS_RUNS:-3}"
# Well above a quiet school's rate (about 100 req/s here), far below what 100 connections
# of cheap reads send.
RATE="${BENCH_SCHOOL_RATE:-300}"
n=0
for spec in ${FAIRNESS_MODES:-before after rate-refused rate-held}; do
  case "$spec" in before*) indexes drop ;; *) indexes create ;; esac
  n=$((n + 1))
  run_mode "$spec" | tee "$work/mode-$n.txt"
done

python3 scripts/bench/fairness_summary.py "$work"/mode-*.txt
