#!/usr/bin/env bash
# `make metrics-demo`: the server with METRICS_ADDR, a real Prometheus (Debian's package)
# scraping it on loopback, a little load, and the request-rate graph rendered by headless
# Chromium (Debian's package) into docs/img/metrics-demo.png. Everything stops at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
pg_ensure

PORT="${DEMO_PORT:-18090}"
METRICS_PORT="${DEMO_METRICS_PORT:-18091}"
PROM_PORT="${DEMO_PROMETHEUS_PORT:-19090}"
LOAD_SECONDS="${DEMO_LOAD_SECONDS:-40}"
OUT="docs/img/metrics-demo.png"

need_command prometheus
need_command chromium

cargo build --release --quiet
bin="$PWD/target/release/school-service"
db="school_metrics_$$"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  psql -q "$(pg_admin_url)" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
psql -q "$(pg_admin_url)" -c "CREATE DATABASE $db"

export DATABASE_URL="$(pg_url_for "$db")" JWT_SECRET="metrics-demo-secret-metrics-demo-secret-0" \
  BCRYPT_COST=4 RUST_LOG=warn BIND_ADDR="127.0.0.1:$PORT" METRICS_ADDR="127.0.0.1:$METRICS_PORT"
"$bin" migrate >/dev/null
"$bin" tenant create --schema greenwood --name "Greenwood High" --domain greenwood.localhost >/dev/null
"$bin" user create --tenant greenwood --email admin@greenwood.test --password demo-password --role admin >/dev/null
"$bin" serve &
pids+=($!)

cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: school-service
    static_configs:
      - targets: ["127.0.0.1:$METRICS_PORT"]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 &&
    curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null 2>&1 && break
  sleep 0.2
done

echo "== load for ${LOAD_SECONDS}s"
host=(-H "Host: greenwood.localhost")
token="$(curl -sf "${host[@]}" -H 'Content-Type: application/json' \
  -d '{"identifier":"admin@greenwood.test","password":"demo-password"}' \
  "http://127.0.0.1:$PORT/api/v1/school/auth/login/" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access"])')"
auth=(-H "Authorization: Bearer $token")
end=$((SECONDS + LOAD_SECONDS))
i=0
while [ "$SECONDS" -lt "$end" ]; do
  i=$((i + 1))
  load=()
  curl -s -o /dev/null "${host[@]}" "${auth[@]}" "http://127.0.0.1:$PORT/api/v1/school/classes/" & load+=($!)
  curl -s -o /dev/null "${host[@]}" "${auth[@]}" "http://127.0.0.1:$PORT/api/v1/school/report-settings/" & load+=($!)
  curl -s -o /dev/null "${host[@]}" "${auth[@]}" -H 'Content-Type: application/json' \
    -d "{\"name\": \"Class $i\"}" "http://127.0.0.1:$PORT/api/v1/school/classes/" & load+=($!)
  curl -s -o /dev/null "${host[@]}" "${auth[@]}" "http://127.0.0.1:$PORT/api/v1/school/classes/$(cat /proc/sys/kernel/random/uuid)/" & load+=($!)
  wait "${load[@]}"
done
sleep 3

mkdir -p "$(dirname "$OUT")"
query='sum by (route, status) (rate(http_requests_total{route=~"/api/.*"}[15s]))'
url="http://127.0.0.1:$PROM_PORT/graph?g0.expr=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$query")&g0.tab=0&g0.range_input=2m"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,900 \
  --virtual-time-budget=15000 --screenshot="$PWD/$OUT" "$url" >/dev/null 2>&1
echo "Prometheus graph of the request rate: $OUT"
curl -s "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$query" |
  python3 -c '
import json, sys
for series in json.load(sys.stdin)["data"]["result"]:
    labels = series["metric"]
    print("  %s %s: %.1f req/s" % (labels.get("route"), labels.get("status"), float(series["value"][1])))
'
