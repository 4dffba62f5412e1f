#!/usr/bin/env bash
# `make profile`: where the time of a read goes. Release build, one school (bench setup),
# wrk's read scenario for PROFILE_SECONDS while `perf record` (Debian's linux-perf,
# software clock: this machine has no hardware counters) samples the server; prints the
# CPU time each process used during the load (server, PostgreSQL backends, wrk) and the
# server's hottest functions, with the CPU and the context switches per request (the
# server's threads, voluntary and not). PROFILE_ALLOCS=1 also counts the server's heap
# allocations per request (scripts/profile/alloc_count.c, preloaded; it costs some CPU, so
# take the CPU figures from a run without it). Nothing here asserts a number; it exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
pg_ensure

SECONDS_UNDER_LOAD="${PROFILE_SECONDS:-10}"
SCENARIO="${PROFILE_SCENARIO:-read}"
PORT="${PROFILE_PORT:-18095}"
PASSWORD="bench-password"
need_command wrk
need_command perf linux-perf

PROFILE_POOL_SIZE=16
source scripts/profile/one-school.sh
preload=""
if [ "${PROFILE_ALLOCS:-0}" = 1 ]; then
  need_command cc
  cc -O2 -shared -fPIC -o "$work/alloc_count.so" scripts/profile/alloc_count.c
  preload="$work/alloc_count.so"
fi
ALLOC_COUNT_FILE="$work/allocs" LD_PRELOAD="$preload" "$bin" serve &
server_pid=$!
wait_ready "http://127.0.0.1:$PORT"
python3 scripts/bench/setup.py --port "$PORT" --schools 1 --password "$PASSWORD" --out "$work" >/dev/null

# CPU ticks (user + system) of a set of processes.
ticks() { awk '{s += $14 + $15} END {print s + 0}' "$@" 2>/dev/null || echo 0; }
pg_stats() { for p in $(pgrep -f "postgres: .*$db" || true); do echo "/proc/$p/stat"; done; }
# Context switches of all the server's threads so far.
switches() {
  cat /proc/"$server_pid"/task/*/status 2>/dev/null |
    awk '/^(voluntary|nonvoluntary)_ctxt_switches/ {s += $2} END {print s + 0}'
}
# The first N lines of the input, reading all of it (`head` would leave the writer to die
# of SIGPIPE, which `pipefail` turns into the script's exit status).
first() { awk -v n="$1" 'NR <= n'; }
wrk -t2 -c64 -d"$((SECONDS_UNDER_LOAD + 6))s" --latency -s "$work/$SCENARIO.lua" "http://127.0.0.1:$PORT" >"$work/wrk.out" 2>&1 &
wrk_pid=$!
sleep 1
server_before=$(ticks "/proc/$server_pid/stat")
pg_before=$(ticks $(pg_stats))
wrk_before=$(ticks "/proc/$wrk_pid/stat")
switches_before=$(switches)
# With PROFILE_ALLOCS=1 the server appends its allocations so far on SIGUSR2.
mark_allocs() { if [ -n "$preload" ]; then kill -USR2 "$server_pid"; fi; }
mark_allocs
perf record -q -e cpu-clock -F 499 -g -p "$server_pid" -o "$work/perf.data" -- sleep "$SECONDS_UNDER_LOAD" 2>/dev/null
server_used=$(( $(ticks "/proc/$server_pid/stat") - server_before ))
switched=$(( $(switches) - switches_before ))
mark_allocs
pg_used=$(( $(ticks $(pg_stats)) - pg_before ))
wrk_used=$(( $(ticks "/proc/$wrk_pid/stat") - wrk_before ))
wait "$wrk_pid" || true
python3 scripts/bench/parse_wrk.py "$SCENARIO" "$work/wrk.out"
total=$((server_used + pg_used + wrk_used))
echo "== CPU during ${SECONDS_UNDER_LOAD}s of load (clock ticks; 2 cores = $((200 * SECONDS_UNDER_LOAD)) available)"
share() { awk -v part="$1" -v all="$total" 'BEGIN { printf "%5.1f", all ? 100 * part / all : 0 }'; }
printf '%-12s %6d  %s%%\n' server "$server_used" "$(share "$server_used")"
printf '%-12s %6d  %s%%\n' postgres "$pg_used" "$(share "$pg_used")"
printf '%-12s %6d  %s%%\n' wrk "$wrk_used" "$(share "$wrk_used")"
# Requests in the measured window, from wrk's rate over the whole run.
rate=$(awk '/^Requests\/sec/ {print $2}' "$work/wrk.out")
requests=$(awk -v r="${rate:-0}" -v s="$SECONDS_UNDER_LOAD" 'BEGIN {printf "%d", r * s}')
per_request() { awk -v part="$1" -v n="$requests" -v unit="$2" 'BEGIN { printf "%.1f", n ? part * unit / n : 0 }'; }
tick_us=$(( 1000000 / $(getconf CLK_TCK) ))
echo "== per request (${requests} requests in the window)"
echo "server CPU     $(per_request "$server_used" "$tick_us") us"
echo "postgres CPU   $(per_request "$pg_used" "$tick_us") us"
echo "server context switches $(per_request "$switched" 1)"
if [ -n "$preload" ]; then
  sleep 0.2
  allocated=$(awk 'NR == 1 {first = $1} {last = $1} END {print last - first}' "$work/allocs")
  echo "server allocations $(per_request "$allocated" 1)"
fi
echo "load average   $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== server: hottest functions (self time)"
perf report -i "$work/perf.data" --no-children --sort symbol --stdio 2>/dev/null |
  grep -E '^ +[0-9]' | first "${PROFILE_TOP:-25}"
echo "== server: by crate/area (self time)"
perf report -i "$work/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | first 8
