#!/usr/bin/env bash
# `make profile-instructions`: the instructions the server executes per read, counted by
# valgrind's callgrind, so the figure is the same whatever else the machine is doing (the
# CPU figures of `make profile` move with the load). Release build, one school, wrk's read
# scenario at 4 connections for PROFILE_SECONDS under callgrind (about 50 times slower than
# native), after a warm-up that is not counted. Prints instructions per read and the
# functions with the most instructions of their own. Kernel time (system calls, context
# switches) is not counted here: `make profile` shows it. PROFILE_BIN measures another build.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
pg_ensure
need_command wrk
need_command valgrind
need_command callgrind_annotate valgrind

SECONDS_UNDER_LOAD="${PROFILE_SECONDS:-20}"
PORT="${PROFILE_PORT:-18096}"
PASSWORD="bench-password"
PROFILE_POOL_SIZE=6
source scripts/profile/one-school.sh
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.out" \
  "$bin" serve 2>"$work/valgrind.log" &
server_pid=$!
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
python3 scripts/bench/setup.py --port "$PORT" --schools 1 --password "$PASSWORD" --out "$work" >/dev/null
# Warm-up (caches filled, connections open), not counted.
wrk -t1 -c4 -d5s -s "$work/read.lua" "http://127.0.0.1:$PORT" >/dev/null 2>&1
callgrind_control -i on "$server_pid" >/dev/null
wrk -t1 -c4 -d"${SECONDS_UNDER_LOAD}s" -s "$work/read.lua" "http://127.0.0.1:$PORT" >"$work/wrk.out" 2>&1
callgrind_control -d "$server_pid" >/dev/null
callgrind_control -i off "$server_pid" >/dev/null
sleep 1
reads=$(awk '/requests in/ {print $1}' "$work/wrk.out")
dump="$(ls "$work"/callgrind.out.* | sort | tail -1)"
total=$(awk '/^summary:/ {print $2; exit}' "$dump")
echo "== read: ${reads} reads counted"
awk -v t="$total" -v n="$reads" 'BEGIN { printf "instructions per read  %.0f\n", n ? t / n : 0 }'
echo "== functions with the most instructions of their own (share of all)"
callgrind_annotate "$dump" 2>/dev/null | awk '/file:function/ {on = 1; next} on && /%/' |
  awk -v n="${PROFILE_TOP:-20}" 'NR <= n' | sed -E 's/ \[[^]]*\]$//; s/\?\?\?://' | cut -c1-150
