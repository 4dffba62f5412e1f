#!/usr/bin/env bash
# The school app in a real browser: Playwright (PyPI, in .venv/) driving Debian's
# Chromium against a real server on a fresh database holding the demo schools
# (`school-service demo`). Run by `make test`; with `shots`, by `make app-shots`
# (screenshots in target/app-shots/ and the marks sheet's figures).
#
#   scripts/app-test.sh                    the browser tests (pytest tests/app)
#   scripts/app-test.sh -- ARGS            pytest ARGS instead (one file, -k ...)
#   scripts/app-test.sh tests/app/test_x.py  only these files (or tests/app/f.py::test)
#   scripts/app-test.sh shots              the screenshots and measurements
#   scripts/app-test.sh [shots] --release  against the release build (`make app-shots`
#                                          uses it: the figures README quotes are release)
# In `shots`: MEASURE_RUNS (default 7) openings of the marks sheet per path; MEASURE_ONLY=1
# skips the screenshots; APP_TEST_BIN=path serves that binary instead of building one.
# APP_TEST_ARGS: further pytest arguments, e.g. APP_TEST_ARGS="tests/app/test_year.py -k teachers".
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
mode=test
profile=debug
pytest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    shots | test) mode="$1" ;;
    --release) profile=release ;;
    # The rest goes to pytest: `scripts/app-test.sh -- tests/app/test_polish.py -k absent`.
    --) shift; pytest_args=("$@"); break ;;
    tests/app/*) pytest_args+=("$1") ;;
    *) echo "usage: scripts/app-test.sh [shots] [--release] [-- pytest arguments]" >&2; exit 2 ;;
  esac
  shift
done
pg_ensure

need_command chromium
if ! .venv/bin/python -c "import playwright, pytest" >/dev/null 2>&1; then
  echo "installing playwright and pytest into .venv (PyPI)" >&2
  python3 -m venv .venv
  .venv/bin/pip install -q playwright pytest
fi

if [ -n "${APP_TEST_BIN:-}" ]; then
  bin="$APP_TEST_BIN" # another build to compare, e.g. a copy of an earlier release binary
elif [ "$profile" = release ]; then
  cargo build --quiet --release --bin school-service
  bin="$PWD/target/release/school-service"
else
  cargo build --quiet --bin school-service
  bin="$PWD/target/debug/school-service"
fi
port="$(free_port)"
server_database school_app

export JWT_SECRET="app-test-secret-app-test-secret-app-test-01" \
  BCRYPT_COST=4 RUST_LOG=warn BIND_ADDR="127.0.0.1:$port" LOGIN_RATE_PER_MINUTE=1000 \
  WEBHOOK_ALLOW_INSECURE=true # the Webhooks page's test subscribes a receiver on loopback
# Chromium resolves every *.localhost name to this machine, so the demo schools'
# addresses work in the browser as they are.
export APP_PORT="$port"
"$bin" migrate >/dev/null
"$bin" demo >/dev/null
serve_in_background "$bin"

if [ "$mode" = shots ]; then
  .venv/bin/python tests/app/shots.py target/app-shots
else
  # APP_TEST_ARGS is the same as arguments after `--`, as words.
  [ ${#pytest_args[@]} -gt 0 ] || read -ra pytest_args <<<"${APP_TEST_ARGS:-}"
  .venv/bin/python -m pytest -q -p no:cacheprovider "${pytest_args[@]:-tests/app}"
fi
