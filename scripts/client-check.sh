#!/usr/bin/env bash
# `make client-check` (part of `make test`): clients generated from the OpenAPI document
# read like hand-written ones and work. A Python client from openapi-python-client (PyPI,
# pinned in tests/client/requirements.txt, installed into .venv/) runs tests/client/smoke.py
# against a real server; TypeScript types from openapi-typescript (npm, pinned in
# tests/client/package-lock.json) are type-checked with `tsc --noEmit` against
# tests/client/usage.ts. Generated code goes to target/client-check/ (Python) and
# tests/client/generated/ (git-ignored).
# Then a OneRoster client this team did not write syncs a demo school (issue 37):
# tests/client/oneroster_sync.py with strongmind-oneroster-client and requests-oauthlib
# (PyPI, pinned in tests/client/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
pg_ensure

if ! .venv/bin/python -c "import openapi_python_client, oneroster_client, requests_oauthlib" >/dev/null 2>&1; then
  echo "installing openapi-python-client, strongmind-oneroster-client, requests-oauthlib into .venv (PyPI)" >&2
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install -q -r tests/client/requirements.txt
fi
need_command npm
if [ ! -x tests/client/node_modules/.bin/tsc ]; then
  echo "installing openapi-typescript and typescript (npm)" >&2
  (cd tests/client && npm ci --silent --no-audit --no-fund >/dev/null 2>&1)
fi

cargo build --quiet --bin school-service
bin="$PWD/target/debug/school-service"
out="$PWD/target/client-check"
port="$(free_port)"
server_database school_client
rm -rf "$out" && mkdir -p "$out"
"$bin" openapi >"$out/openapi.json"

# TypeScript: the description, then the usage file type-checked against it.
(cd tests/client &&
  node_modules/.bin/openapi-typescript "$out/openapi.json" -o generated/api.d.ts >/dev/null 2>&1 &&
  node_modules/.bin/tsc -p tsconfig.json)
echo "client-check: TypeScript usage type-checks against the generated description"

# Python: generated without warnings (post hooks off: no formatter is needed).
printf 'post_hooks: []\n' >"$out/config.yaml"
generated="$(.venv/bin/openapi-python-client generate --path "$out/openapi.json" \
  --output-path "$out/python" --config "$out/config.yaml" 2>&1)"
if grep -qi "warning" <<<"$generated"; then
  echo "$generated" >&2
  echo "client-check: openapi-python-client warned about the document" >&2
  exit 1
fi

export JWT_SECRET="client-check-secret-client-check-secret-1" \
  BCRYPT_COST=4 RUST_LOG=warn BIND_ADDR="127.0.0.1:$port"
"$bin" migrate >/dev/null
"$bin" tenant create --schema clientcheck --name "Client Check School" >/dev/null
"$bin" user create --tenant clientcheck --email admin@clientcheck.test --password client-pass-123 --role admin >/dev/null
serve_in_background "$bin"
CLIENT_CHECK_URL="http://127.0.0.1:$port" CLIENT_CHECK_SCHOOL=clientcheck \
  CLIENT_CHECK_USER=admin@clientcheck.test CLIENT_CHECK_PASSWORD=client-pass-123 \
  PYTHONPATH="$out/python" .venv/bin/python tests/client/smoke.py

# OneRoster: a demo school synced by published clients (token, rostering, gradebook writes).
"$bin" demo >/dev/null
or_client="$("$bin" tenant oauth-client create --schema greenwood --name "Published client check")"
read -r or_id or_secret < <(python3 -c 'import json, sys; c = json.load(sys.stdin); print(c["client_id"], c["client_secret"])' <<<"$or_client")
.venv/bin/python tests/client/oneroster_sync.py "http://127.0.0.1:$port" greenwood.localhost "$or_id" "$or_secret"
