# Sourced after pg.sh: a PgBouncer from Debian's package in front of $PG_SERVER_URL, with
# the settings docs/scale-out.md recommends, read from one place:
# scripts/pgbouncer-settings.ini (transaction pooling, restart and failover timeouts).
#
#   pgbouncer_start   installs pgbouncer when missing, starts it, sets PGBOUNCER_URL
#   pgbouncer_stop    stops the one this shell started and removes its run directory
#
# Its config, log and pid file live in a run directory made per start under the system
# temp directory (as root PgBouncer runs as the postgres user, which may not be able to
# enter the clone; see pg.sh), removed by pgbouncer_stop.
#
# `default_pool_size = 2`: many clients share two server connections per database, so a
# session setting that leaked from one client would reach the others at once.

PGBOUNCER_POOL_SIZE="${PGBOUNCER_POOL_SIZE:-2}"
PGBOUNCER_SETTINGS="${PGBOUNCER_SETTINGS:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/pgbouncer-settings.ini}"

pgbouncer_start() {
  need_command pgbouncer || return 1
  local bin dir tmp server host port listen
  bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
  # The system temp directory as root: a private $TMPDIR would shut the postgres user out.
  if [ "$(id -u)" = 0 ]; then tmp=/tmp; else tmp="${TMPDIR:-/tmp}"; fi
  dir="$(mktemp -d "$tmp/school-service-pgbouncer.XXXXXX")"
  server="${PG_SERVER_URL#*://}"
  server="${server#*@}"
  host="${server%:*}"
  port="${server##*:}"
  [ "$port" = "$server" ] && port=5432
  listen="$(free_port)"
  {
    cat <<EOF
[databases]
* = host=$host port=$port

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $listen
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
admin_users = postgres
default_pool_size = $PGBOUNCER_POOL_SIZE
max_client_conn = 2000
EOF
    cat "$PGBOUNCER_SETTINGS"
  } >"$dir/pgbouncer.ini"
  echo '"postgres" ""' >"$dir/userlist.txt"
  if [ "$(id -u)" = 0 ]; then
    pg_owned_dir "$dir" && chown postgres: "$dir"/*
  fi
  PGBOUNCER_DIR="$dir"
  if ! pg_as_owner "$bin" -d "$dir/pgbouncer.ini"; then
    echo "pgbouncer did not start:" >&2
    cat "$dir/pgbouncer.log" >&2 2>/dev/null
    pgbouncer_stop
    return 1
  fi
  for _ in $(seq 50); do
    pg_answers 127.0.0.1 "$listen" && break
    sleep 0.1
  done
  PGBOUNCER_URL="postgres://postgres@127.0.0.1:$listen"
  export PGBOUNCER_URL
}

pgbouncer_stop() {
  [ -n "${PGBOUNCER_DIR:-}" ] || return 0
  local pid
  pid="$(cat "$PGBOUNCER_DIR/pgbouncer.pid" 2>/dev/null)"
  if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -rf "$PGBOUNCER_DIR"
  PGBOUNCER_DIR=""
}
