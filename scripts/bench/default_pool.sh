#!/usr/bin/env bash
# `make bench-default-pool` (in `make bench`): `make bench`'s 1,000 schools served by a
# server left to its default pool against one given the CPU's pool (DB_POOL_SIZE = 2 x
# cores + 2, what `make bench` sets), alternating, DEFAULT_POOL_RUNS times each (default
# 3), with read and mixed-1000 (DEFAULT_POOL_DURATION s each, default 10, after a 3 s
# warm-up). Left to itself the server counts 1,000 schools and sizes its pool at 10,
# spreading the schools over the CPU's share of them until a backend outgrows its memory
# budget: each row says how many connections the schools were spread over at the end
# (db_pool_spread_connections). Prints each run's rows and the medians' ratios; asserts
# nothing. DEFAULT_POOL_BIN: another build.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
source scripts/common.sh
pg_ensure
need_command wrk

SCHOOLS="${DEFAULT_POOL_SCHOOLS:-1000}"
RUNS="${DEFAULT_POOL_RUNS:-3}"
DURATION="${DEFAULT_POOL_DURATION:-10}"
CONNECTIONS=64
PORT="${DEFAULT_POOL_PORT:-18085}"
PASSWORD="bench-password"
cpu_pool=$(( $(nproc) * 2 + 2 ))
if [ -n "${DEFAULT_POOL_BIN:-}" ]; then
  bin="$(realpath "$DEFAULT_POOL_BIN")"
else
  cargo build --release --quiet
  bin="$PWD/target/release/school-service"
fi

server_database school_default_pool
work="$(mktemp -d)"
trap 'server_cleanup; rm -rf "$work"' EXIT

export JWT_SECRET="bench-secret-bench-secret-bench-secret-0123"
export RUST_LOG=warn ACCESS_TOKEN_TTL=86400 LOGIN_RATE_PER_MINUTE=100000000
export BIND_ADDR="127.0.0.1:$PORT"
unset DB_POOL_SIZE DB_POOL_RUNNING DB_POOL_PER_SCHOOL

"$bin" migrate >/dev/null
echo "== provisioning $SCHOOLS schools"
BCRYPT_COST=4 "$bin" tenant create-many --prefix bench --count "$SCHOOLS" --jobs 4 \
  --teacher-password "$PASSWORD" >/dev/null
BCRYPT_COST=4 "$bin" user create --tenant bench1 --email admin@bench1.test \
  --password "$PASSWORD" --role admin >/dev/null

# Starts the server with `size` (empty: its default pool) and waits until it answers.
start_server() {
  if [ -n "$1" ]; then
    DB_POOL_SIZE="$1" serve_in_background "$bin" >"$work/server.log" 2>&1
  else
    serve_in_background "$bin" >"$work/server.log" 2>&1
  fi
}

start_server "$cpu_pool"
python3 scripts/bench/setup.py --port "$PORT" --schools "$SCHOOLS" --password "$PASSWORD" \
  --out "$work" >/dev/null
server_stop

gauge() {
  curl -s -H "Host: 127.0.0.1" "http://$BIND_ADDR/metrics/" | awk -v name="$1" '$1 == name {print $2}'
}

results="$work/results.txt"
echo "== $RUNS runs of each, alternating: read and mixed-1000, $CONNECTIONS connections, ${DURATION}s"
printf '%-8s %-12s %10s %8s %8s %8s %7s %7s\n' pool scenario req/s p50_ms p99_ms errors size spread
for run in $(seq "$RUNS"); do
  for variant in cpu default; do
    if [ "$variant" = cpu ]; then start_server "$cpu_pool"; else start_server ""; fi
    for scenario in read mixed-1000; do
      wrk -t2 -c"$CONNECTIONS" -d3s -s "$work/$scenario.lua" "http://$BIND_ADDR" >/dev/null 2>&1
    done
    psql -q "$(pg_admin_url)" -c CHECKPOINT >/dev/null
    for scenario in read mixed-1000; do
      wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$work/$scenario.lua" \
        "http://$BIND_ADDR" >"$work/$scenario.out" 2>&1
      row=$(python3 scripts/bench/parse_wrk.py "$scenario" "$work/$scenario.out")
      size=$(gauge db_pool_max_connections)
      spread=$(gauge db_pool_spread_connections)
      printf '%-8s %s %7s %7s\n' "$variant" "$row" "$size" "$spread" | tee -a "$results"
    done
    server_stop
  done
done

python3 - "$results" <<'PY'
import statistics
import sys

rows = {}
for line in open(sys.argv[1]):
    variant, scenario, rps, _, p99, *_ = line.split()
    rows.setdefault((variant, scenario), []).append((float(rps), float(p99)))
print("== medians: default pool against the CPU's")
for scenario in ("read", "mixed-1000"):
    cpu = rows[("cpu", scenario)]
    default = rows[("default", scenario)]
    med = lambda runs, i: statistics.median(r[i] for r in runs)
    print(
        f"{scenario:<12} {med(default, 0) / med(cpu, 0):.2f}x req/s "
        f"({med(default, 0):.0f} vs {med(cpu, 0):.0f}), p99 {med(default, 1):.2f} vs {med(cpu, 1):.2f} ms"
    )
PY
