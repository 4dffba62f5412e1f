# Sourced by the other scripts: finds a PostgreSQL server, or starts a project-local one.
#
# Order: $DATABASE_URL when set; else the server on 127.0.0.1:5432 when it answers; else the
# project-local cluster (pg_local_dir) started with the machine's PostgreSQL binaries;
# else a one-line hint. Sets PG_SERVER_URL (the server, without a database name).
#
# initdb, postgres and pgbouncer refuse to run as root, so as root they run as the
# `postgres` system user (pg_as_owner). That user may not be able to enter the directory
# the clone lives in (root's home and anything `mktemp -d` makes are mode 0700), so
# nothing they read or write lives in the clone then:
#   - the local cluster's data: as root in $PG_LOCAL_ROOT/<clone name>-<hash of its path>/
#     (default /var/lib/school-service/...), remembered by the symbolic link .state/pgdata;
#     as any other user in .pgdata/ in the clone, run as that user;
#   - PgBouncer's config, log and pid file: a run directory under the system temp
#     directory, made per start and removed at stop (scripts/pgbouncer.sh).
# tests/ops/fresh-clone.sh checks both from a clone in a fresh `mktemp -d` directory.
#
#   pg_start_local   initialises (once) and starts the local cluster on $PG_LOCAL_PORT
#   pg_stop_local    stops it (the data stays)
#   pg_local_dir     prints where its data lives

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PG_LOCAL_PORT="${PG_LOCAL_PORT:-54329}"
PG_LOCAL_ROOT="${PG_LOCAL_ROOT:-/var/lib/school-service}"
PG_INITDB_OPTIONS="${PG_INITDB_OPTIONS:-}" # e.g. --no-sync (tests)

pg_answers() { # host port
  if command -v pg_isready >/dev/null 2>&1; then
    pg_isready -q -h "$1" -p "$2" -t 2
  else
    (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null
  fi
}

pg_bin_dir() {
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

# Runs a command as the user the PostgreSQL processes run as: `postgres` when we are root
# (created when missing), else ourselves. From `/`: initdb and pg_ctl look up the current
# directory, which that user may not be allowed to enter.
pg_as_owner() {
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# Makes the directories (mode 0700) and gives them to the pg_as_owner user.
pg_owned_dir() {
  mkdir -p "$@" && chmod 700 "$@" || return 1
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres: "$@"
  fi
}

pg_local_dir() {
  if [ "$(id -u)" != 0 ]; then
    echo "$PWD/.pgdata"
  elif [ -L "$PWD/.state/pgdata" ]; then
    readlink "$PWD/.state/pgdata"
  elif [ -f "$PWD/.pgdata/PG_VERSION" ]; then
    # A cluster made by root in .pgdata/ before the data moved out of the clone.
    echo "$PWD/.pgdata"
  else
    local name hash
    name="$(basename "$PWD" | tr -c 'A-Za-z0-9_.\n-' _ | cut -c1-32)"
    hash="$(printf %s "$PWD" | sha256sum | cut -c1-8)"
    echo "$PG_LOCAL_ROOT/$name-$hash"
  fi
}

pg_start_local() {
  local bin dir
  bin="$(pg_bin_dir)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "No PostgreSQL found: set DATABASE_URL, or install it (apt-get install postgresql)." >&2
    return 1
  fi
  dir="$(pg_local_dir)"
  if [ ! -d "$dir" ]; then
    [ "$(id -u)" = 0 ] && { mkdir -p "$(dirname "$dir")" && chmod 755 "$(dirname "$dir")" || return 1; }
    pg_owned_dir "$dir" || return 1
  fi
  if [ "$dir" != "$PWD/.pgdata" ]; then
    mkdir -p "$PWD/.state" && ln -sfn "$dir" "$PWD/.state/pgdata"
  fi
  if [ ! -f "$dir/PG_VERSION" ]; then
    pg_as_owner "$bin/initdb" -D "$dir" -U postgres --auth=trust $PG_INITDB_OPTIONS >/dev/null || return 1
  fi
  if ! pg_as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    echo "starting a project-local PostgreSQL on 127.0.0.1:$PG_LOCAL_PORT (data in $dir)" >&2
    pg_as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w \
      -o "-p $PG_LOCAL_PORT -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
  fi
}

pg_stop_local() {
  local dir
  dir="$(pg_local_dir)"
  [ -f "$dir/PG_VERSION" ] || return 0
  pg_as_owner "$(pg_bin_dir)/pg_ctl" -D "$dir" -m fast -w stop >/dev/null 2>&1 || true
}

pg_ensure() {
  if [ -n "${DATABASE_URL:-}" ]; then
    PG_SERVER_URL="${DATABASE_URL%/*}"
  elif pg_answers 127.0.0.1 5432; then
    PG_SERVER_URL="postgres://postgres@127.0.0.1:5432"
  elif pg_answers 127.0.0.1 "$PG_LOCAL_PORT"; then
    PG_SERVER_URL="postgres://postgres@127.0.0.1:$PG_LOCAL_PORT"
  else
    pg_start_local || exit 1
    PG_SERVER_URL="postgres://postgres@127.0.0.1:$PG_LOCAL_PORT"
  fi
  export PG_SERVER_URL
}

pg_admin_url() { echo "$PG_SERVER_URL/postgres"; }
pg_url_for() { echo "$PG_SERVER_URL/$1"; }
