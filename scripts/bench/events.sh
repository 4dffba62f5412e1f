#!/usr/bin/env bash
# `make bench`'s events part (issue 40; BENCH_EVENTS=0 skips it): the figures of change
# events and webhooks, from the release binary (or BENCH_BIN), on a fresh database. One
# `serve` (WEBHOOK_RELAY=false) with `school-service relay` apart, so the relay's CPU is
# its own, for the relay figures; a second `serve` with its relay inside (the default) for
# the writes and the lag; a receiver on loopback answering 204 (scripts/bench/receiver.rs).
# Prints one line per figure:
#   - write throughput (PATCH of subjects over the schools, wrk) without any subscription
#     and with every school subscribed to the receiver, and their ratio (target >= 0.85);
#   - commit-to-acknowledgement lag p50 / p99 (receiver's clock minus the event's commit
#     time) at BENCH_EVENTS_RATE (default 1,000) events/s over 50 schools (targets 50 ms /
#     500 ms), with the relay in `serve`, then apart;
#   - the relay's CPU and its queries per second (counted by a proxy in front of it) with
#     one busy school among 10, then among BENCH_RELAY_SCHOOLS (default 10,000: made with
#     `tenant create-many`, every one subscribed), and their ratios (target: about 1).
#
#   BENCH_EVENTS_DURATION   seconds per measurement (default 10)
#   BENCH_EVENTS_RATE       events per second of the lag figure (default 1000)
#   BENCH_RELAY_SCHOOLS     schools of the relay figure's second half (default 10000)
#   BENCH_RELAY_RATE        writes per second of the busy school (default 200)
#   BENCH_EVENTS_RECEIVER   the receiver: scripts/bench/receiver.rs (built; the default), or
#                           python (events.py's, the one before; to compare)
#   BENCH_EVENTS_ONLY_WRITES=1  stop after the write throughput (with / without)
#   BENCH_EVENTS_ONLY_RELAY=1   only the relay figures (one busy school among 10, then many)
#   BENCH_EVENTS_PERF=FILE  perf records the server during the write runs (FILE.without, FILE.with)
#   BENCH_RELAY_DB          an existing database (name) holding the fleet already, made
#                           once with `tenant create-many --jobs 4` and kept between runs
#                           (10,000 schools take half an hour to make on two busy cores):
#                           the large relay figure runs there, with a server of its own
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
pg_ensure
need_command wrk

bin="${BENCH_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --bin school-service
  bin="$PWD/target/release/school-service"
fi
receiver="${BENCH_EVENTS_RECEIVER:-}"
if [ -z "$receiver" ]; then
  cargo build --release --quiet --example bench-receiver
  receiver="$PWD/target/release/examples/bench-receiver"
fi
duration="${BENCH_EVENTS_DURATION:-10}"
rate="${BENCH_EVENTS_RATE:-1000}"
relay_schools="${BENCH_RELAY_SCHOOLS:-10000}"
relay_rate="${BENCH_RELAY_RATE:-200}"
password="bench-events-password"

server_database school_events_bench
work="$(mktemp -d)"
fleet_pid=""
trap '[ -n "$fleet_pid" ] && kill -KILL "$fleet_pid" 2>/dev/null; rm -rf "$work"; server_cleanup' EXIT
export RUST_LOG=warn BCRYPT_COST=4 \
  JWT_SECRET="bench-events-secret-bench-events-secret-01" ACCESS_TOKEN_TTL=3600 \
  LOGIN_RATE_PER_MINUTE=100000000 WEBHOOK_ALLOW_INSECURE=true
"$bin" migrate >/dev/null
port="$(free_port)"
WEBHOOK_RELAY=false BIND_ADDR="127.0.0.1:$port" serve_in_background "$bin"
fleet_args=()
if [ -n "${BENCH_RELAY_DB:-}" ]; then
  fleet_url="$(pg_url_for "$BENCH_RELAY_DB")"
  DATABASE_URL="$fleet_url" "$bin" migrate >/dev/null
  fleet_port="$(free_port)"
  DATABASE_URL="$fleet_url" WEBHOOK_RELAY=false BIND_ADDR="127.0.0.1:$fleet_port" "$bin" serve &
  fleet_pid=$!
  wait_ready "http://127.0.0.1:$fleet_port"
  fleet_args=(--fleet-db "$fleet_url" --fleet-port "$fleet_port")
fi
echo "== events and webhooks: ${duration}s per measurement (nproc=$(nproc), load $(cut -d' ' -f1-3 /proc/loadavg))"
python3 scripts/bench/events.py --bin "$bin" --db "$DATABASE_URL" --port "$port" --work "$work" \
  --password "$password" --duration "$duration" --rate "$rate" --relay-schools "$relay_schools" \
  --relay-rate "$relay_rate" --receiver "$receiver" ${BENCH_EVENTS_ONLY_WRITES:+--only-writes} ${BENCH_EVENTS_ONLY_RELAY:+--only-relay} "${fleet_args[@]}"
