# Sourced by the other scripts: finds a PostgreSQL server, or starts a project-local one.
#
# Order: $DATABASE_URL when set; else the server on 127.0.0.1:5432 when it answers; else a
# cluster under .pgdata/ (git-ignored) started with the machine's PostgreSQL binaries;
# else a one-line hint. Sets PG_SERVER_URL (the server, without a database name).

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PG_LOCAL_PORT="${PG_LOCAL_PORT:-54329}"

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

pg_start_local() {
  local bin dir="$PWD/.pgdata"
  bin="$(pg_bin_dir)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "No PostgreSQL found: set DATABASE_URL, or install it (apt-get install postgresql)." >&2
    return 1
  fi
  # initdb and postgres refuse to run as root: use the postgres system user then.
  local run=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    mkdir -p "$dir" && chown postgres "$dir"
    run=(runuser -u postgres --)
  fi
  if [ ! -f "$dir/PG_VERSION" ]; then
    "${run[@]}" "$bin/initdb" -D "$dir" -U postgres --auth=trust >/dev/null
  fi
  if ! "${run[@]}" "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    echo "starting a project-local PostgreSQL on 127.0.0.1:$PG_LOCAL_PORT (data in .pgdata/)" >&2
    "${run[@]}" "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w \
      -o "-p $PG_LOCAL_PORT -k $dir -c listen_addresses=127.0.0.1" start >/dev/null
  fi
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
