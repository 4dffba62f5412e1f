# Sourced after pg.sh: a PgBouncer from Debian's package, in transaction pooling mode, in
# front of $PG_SERVER_URL. State (config, log, pid) under .state/pgbouncer/ (git-ignored).
#
#   pgbouncer_start   installs pgbouncer when missing, starts it, sets PGBOUNCER_URL
#   pgbouncer_stop    stops the one this shell started
#
# `default_pool_size = 2`: many clients share two server connections per database, so a
# session setting that leaked from one client would reach the others at once.

PGBOUNCER_POOL_SIZE="${PGBOUNCER_POOL_SIZE:-2}"

pgbouncer_start() {
  need_command pgbouncer || return 1
  local bin dir server host port listen
  bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
  mkdir -p "$PWD/.state/pgbouncer"
  dir="$(mktemp -d "$PWD/.state/pgbouncer/run.XXXXXX")"
  server="${PG_SERVER_URL#*://}"
  server="${server#*@}"
  host="${server%:*}"
  port="${server##*:}"
  [ "$port" = "$server" ] && port=5432
  listen="$(free_port)"
  chmod 755 "$dir"
  cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = host=$host port=$port

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $listen
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = $PGBOUNCER_POOL_SIZE
max_client_conn = 2000
server_reset_query =
ignore_startup_parameters = extra_float_digits,options
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
admin_users = postgres
EOF
  echo '"postgres" ""' >"$dir/userlist.txt"
  # PgBouncer refuses to run as root: as root, it runs as the postgres system user.
  local run=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown -R postgres "$dir"
    run=(runuser -u postgres --)
  fi
  "${run[@]}" "$bin" -d "$dir/pgbouncer.ini" || {
    echo "pgbouncer did not start; see $dir/pgbouncer.log" >&2
    return 1
  }
  for _ in $(seq 50); do
    pg_answers 127.0.0.1 "$listen" && break
    sleep 0.1
  done
  PGBOUNCER_DIR="$dir"
  PGBOUNCER_URL="postgres://postgres@127.0.0.1:$listen"
  export PGBOUNCER_URL
}

pgbouncer_stop() {
  [ -n "${PGBOUNCER_DIR:-}" ] || return 0
  if [ -f "$PGBOUNCER_DIR/pgbouncer.pid" ]; then
    kill "$(cat "$PGBOUNCER_DIR/pgbouncer.pid")" 2>/dev/null || true
  fi
  rm -rf "$PGBOUNCER_DIR"
}
