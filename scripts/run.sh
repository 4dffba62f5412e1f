#!/usr/bin/env bash
# `make run`: reach or start PostgreSQL, create the database, migrate, create or complete
# the demo schools (`demo` adds only what is missing) and print how to reach them, then
# serve.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
pg_ensure
db="${DB_NAME:-school_service}"
export DATABASE_URL="${DATABASE_URL:-$(pg_url_for "$db")}"
export APP_ENV="${APP_ENV:-development}"
bin=target/release/school-service
if ! psql -q "$DATABASE_URL" -c 'SELECT 1' >/dev/null 2>&1; then
  psql -q "$(pg_admin_url)" -c "CREATE DATABASE \"$db\"" >/dev/null
fi
"$bin" migrate
# A database of other schools only is left alone; the demo's own schools are completed.
schools="$("$bin" tenant list)"
if [ -z "$schools" ] || grep -qw greenwood <<<"$schools"; then
  "$bin" demo
fi
exec "$bin" serve
