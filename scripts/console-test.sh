#!/usr/bin/env bash
# The platform console in a real browser: Playwright (PyPI, in .venv/) driving Debian's
# Chromium against a real server and a fresh database. Run by `make test`; with `shots`,
# by `make console-shots` (screenshots at laptop and phone width in target/console-shots/).
#
#   scripts/console-test.sh          the browser tests (pytest)
#   scripts/console-test.sh shots    the screenshots
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
pg_ensure
mode="${1:-test}"

need_command chromium
if ! .venv/bin/python -c "import playwright, pytest" >/dev/null 2>&1; then
  echo "installing playwright and pytest into .venv (PyPI)" >&2
  python3 -m venv .venv
  .venv/bin/pip install -q playwright pytest
fi

cargo build --quiet --bin school-service
bin="$PWD/target/debug/school-service"
port="$(free_port)"
server_database school_console

export JWT_SECRET="console-test-secret-console-test-secret-01" \
  BCRYPT_COST=4 RUST_LOG=warn BIND_ADDR="127.0.0.1:$port" LOGIN_RATE_PER_MINUTE=1000
export CONSOLE_URL="http://127.0.0.1:$port" CONSOLE_PASSWORD="console-pass-123" CONSOLE_BIN="$bin"
"$bin" migrate >/dev/null
"$bin" user create-superuser --email root@console.test --password "$CONSOLE_PASSWORD" >/dev/null
"$bin" tenant create --schema seeded --name "Seeded School" --domain seeded.localhost >/dev/null
"$bin" user create --tenant seeded --email teacher@seeded.test --password "$CONSOLE_PASSWORD" --role teacher >/dev/null
if [ "$mode" = shots ]; then
  for i in 1 2 3; do
    "$bin" tenant create --schema "school$i" --name "School number $i" --domain "school$i.localhost" >/dev/null
  done
fi
serve_in_background "$bin"

if [ "$mode" = shots ]; then
  .venv/bin/python tests/console/shots.py target/console-shots
else
  .venv/bin/python -m pytest -q -p no:cacheprovider tests/console
fi
