#!/usr/bin/env bash
# The set-up from a fresh clone in a private directory (run by `make test`).
#
# `git clone` into a new `mktemp -d` directory (mode 0700, as root's home is), then from
# the clone: the project-local PostgreSQL cluster that `make run` starts when nothing
# answers on 5432 (scripts/pg.sh), on a free port, stopped and started again (its data
# must survive), and the PgBouncer that `make test` starts (scripts/pgbouncer.sh) in front
# of it. As root both run as the postgres user, which cannot enter that directory, so
# neither may keep anything in the clone. The clone gets the working tree's scripts/ on
# top, so uncommitted changes to them are what is tested. Everything it started is stopped
# and removed, pass or fail. A few seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/common.sh
repo="$PWD"
parent="$(mktemp -d)"
clone="$parent/school-service"
data=""
cleanup() {
  if [ "$PWD" = "$clone" ]; then
    pgbouncer_stop 2>/dev/null || true
    pg_stop_local 2>/dev/null || true
  fi
  # The cluster's data outside the clone (as root): named after this clone's fresh path.
  if [ -n "$data" ] && [ "${data#"$clone"/}" = "$data" ] && [ -d "$data" ]; then
    rm -rf "$data"
    rmdir "$(dirname "$data")" 2>/dev/null || true
  fi
  rm -rf "$parent"
}
trap cleanup EXIT

fail() { echo "FAIL  $*" >&2; exit 1; }
ok() { echo "ok    $*"; }

[ "$(stat -c %a "$parent")" = 700 ] || fail "mktemp -d did not make a private directory"
git clone -q "$repo" "$clone"
cp -a "$repo/scripts/." "$clone/scripts/"
cd "$clone"
source scripts/pg.sh
source scripts/pgbouncer.sh

export PG_LOCAL_PORT PG_INITDB_OPTIONS=--no-sync
PG_LOCAL_PORT="$(free_port)"
local_url="postgres://postgres@127.0.0.1:$PG_LOCAL_PORT/postgres"
data="$(pg_local_dir)"
pg_start_local || fail "the project-local cluster did not start from $clone"
pg_answers 127.0.0.1 "$PG_LOCAL_PORT" || fail "the project-local cluster does not answer"
if [ "$(id -u)" = 0 ]; then
  [ "${data#"$clone"/}" = "$data" ] || fail "as root the cluster's data is in the clone ($data)"
  [ "$(readlink .state/pgdata)" = "$data" ] || fail ".state/pgdata does not lead to $data"
else
  [ "$data" = "$clone/.pgdata" ] || fail "the cluster's data is not in .pgdata/ ($data)"
fi
ok "project-local cluster started from a clone in a private directory (data in $data)"

psql -qAtX "$local_url" -c "CREATE TABLE kept (x int)" -c "INSERT INTO kept VALUES (42)"
pg_stop_local
! pg_answers 127.0.0.1 "$PG_LOCAL_PORT" || fail "pg_stop_local left the cluster running"
pg_start_local || fail "the project-local cluster did not start a second time"
[ "$(psql -qAtX "$local_url" -c "SELECT x FROM kept")" = 42 ] || fail "the data did not survive a restart"
ok "its data survives a stop and a start"

PG_SERVER_URL="postgres://postgres@127.0.0.1:$PG_LOCAL_PORT"
pgbouncer_start || fail "pgbouncer did not start from a clone in a private directory"
bouncer_dir="$PGBOUNCER_DIR"
[ "${bouncer_dir#"$clone"/}" = "$bouncer_dir" ] || fail "PgBouncer's run directory is in the clone"
[ "$(psql -qAtX "$PGBOUNCER_URL/postgres" -c "SELECT x FROM kept")" = 42 ] ||
  fail "no query through PgBouncer"
grep -q '^server_login_retry = 1$' "$bouncer_dir/pgbouncer.ini" ||
  fail "PgBouncer does not run with scripts/pgbouncer-settings.ini"
pgbouncer_port="${PGBOUNCER_URL##*:}"
pgbouncer_stop
[ ! -e "$bouncer_dir" ] || fail "pgbouncer_stop left $bouncer_dir"
! pg_answers 127.0.0.1 "$pgbouncer_port" || fail "pgbouncer_stop left PgBouncer running"
ok "PgBouncer started in front of it (run directory $bouncer_dir), answered, stopped, removed"
