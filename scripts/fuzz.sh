#!/usr/bin/env bash
# `make fuzz`: a server on a fresh database with the demo schools, then schemathesis
# (installed into .venv/, git-ignored) against the OpenAPI document: the school API with
# a school admin's token, then with an API key; default checks (not_a_server_error,
# status_code_conformance, content_type_conformance, response_schema_conformance) on
# positive and negative data. Then the docs page is rendered in headless Chromium.
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
pg_ensure

EXAMPLES="${FUZZ_EXAMPLES:-25}"
PORT="${FUZZ_PORT:-18090}"
SCHEMATHESIS_VERSION="4.32.5"

if [ ! -x .venv/bin/schemathesis ]; then
  echo "installing schemathesis $SCHEMATHESIS_VERSION into .venv/" >&2
  python3 -m venv .venv
  .venv/bin/pip install -q "schemathesis==$SCHEMATHESIS_VERSION"
fi
need_command chromium

cargo build --quiet
bin="$PWD/target/debug/school-service"
db="school_fuzz_$$"
work="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  psql -q "$(pg_admin_url)" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  [ -n "${FUZZ_KEEP:-}" ] && cp -r "$work" /tmp/fuzz-work || true
  rm -rf "$work"
}
trap cleanup EXIT
psql -q "$(pg_admin_url)" -c "CREATE DATABASE $db"

export DATABASE_URL="$(pg_url_for "$db")"
export JWT_SECRET="fuzz-secret-fuzz-secret-fuzz-secret-012345"
export BCRYPT_COST=4 RUST_LOG=warn ACCESS_TOKEN_TTL=3600 LOGIN_RATE_PER_MINUTE=100000
export BIND_ADDR="127.0.0.1:$PORT"
"$bin" migrate >/dev/null
"$bin" demo >/dev/null
RUST_LOG=info "$bin" serve > "$work/server.log" 2>&1 &
server_pid=$!
base="http://127.0.0.1:$PORT"
wait_ready "$base"
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
login() { # host path identifier
  curl -sf -H "Host: $1" -H 'Content-Type: application/json' \
    -d "{\"identifier\": \"$3\", \"password\": \"demo-password-123\"}" "$base$2" | json_field '["access"]'
}
school_token="$(login greenwood.localhost /api/v1/school/auth/login/ admin@greenwood.test)"
root_token="$(login localhost /api/v1/system/auth/login/ root@platform.test)"
api_key="$(curl -sf -H 'Host: localhost' -H "Authorization: Bearer $root_token" -H 'Content-Type: application/json' \
  -d '{"name": "fuzz"}' "$base/api/v1/system/api-keys/" | json_field '["key"]')"
curl -sf "$base/api/v1/schema/" > "$work/openapi.json"

status=0
run() { # label, header, report name, excluded paths
  echo "== schemathesis: school API with $1"
  .venv/bin/schemathesis run "$work/openapi.json" --url "$base" \
    --header "Host: greenwood.localhost" --header "$2" \
    --include-path-regex '^/api/v1/school/' \
    --exclude-path-regex "$4" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    --mode all --max-examples "$EXAMPLES" --no-color \
    --report junit --report-dir "$work/report-$3" 2>&1 | tee "$work/$3.log" | tail -25 || status=1
}
# Roles are fuzzed with the key only: a fuzzed role change could leave the admin's token
# without permissions halfway through, while keys do not depend on roles.
run "an admin's bearer token" "Authorization: Bearer $school_token" token '/auth/logout/$|/roles/|/role-assignments/'
run "a global API key" "X-API-KEY: $api_key" key '/auth/logout/$'
echo "== server log: $(grep -c 'status=' "$work/server.log" || true) requests handled, $(grep -c 'status=5' "$work/server.log" || true) answered 5xx"
if grep -q 'status=5' "$work/server.log"; then
  echo "5xx answers:"; grep 'status=5' "$work/server.log" | head -5; status=1
fi

echo "== docs page in headless Chromium (no network beyond this server)"
profile="$(mktemp -d)"
chromium_flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$profile" --virtual-time-budget=15000 --window-size=1280,1600)
chromium "${chromium_flags[@]}" --dump-dom "$base/api/v1/docs/" > "$work/docs.html" 2>/dev/null || true
chromium "${chromium_flags[@]}" --screenshot="$PWD/target/docs-page.png" "$base/api/v1/docs/" >/dev/null 2>&1 || true
rm -rf "$profile"
# The title comes from the fetched document, and an operation group means it was parsed
# and rendered (the dump may catch Swagger UI before it has drawn every group).
if grep -q 'School Management Service' "$work/docs.html" && grep -q 'opblock-tag' "$work/docs.html"; then
  echo "docs page rendered the document (screenshot: target/docs-page.png)"
else
  echo "docs page did not render the document"; status=1
fi
exit "$status"
