# Sourced after scripts/pg.sh by the tests of tests/ops/ that stop and restart PostgreSQL:
# a private cluster of their own (never the system one, never the project-local one).
#
#   private_pg_start        a fresh cluster in a new directory under the system temp
#                           directory, on a free port; sets PRIVATE_PG_WORK (the directory,
#                           also for the test's own files), PRIVATE_PG_DATA, PRIVATE_PG_CTL
#                           (the pg_ctl command line, run as the cluster's owner) and
#                           PG_SERVER_URL
#   private_pg_cleanup      stops it (immediate) and removes its directory
#   private_pg_log_tail N   the last N lines of its server log, on stderr
#
#   PRIVATE_PG_MAX_CONNECTIONS   max_connections (default 50)
#
# As root the cluster runs as the `postgres` user (scripts/pg.sh), so the directory is made
# under /tmp, which that user can enter. fsync is off: the tests stop PostgreSQL, not the
# machine; a commit's WAL reaches the kernel before the commit returns either way, and crash
# recovery then skips syncing every file (seconds here).

private_pg_start() {
  local bin tmp port
  bin="$(pg_bin_dir)"
  if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
    echo "No PostgreSQL binaries found: apt-get install postgresql" >&2
    return 1
  fi
  if [ "$(id -u)" = 0 ]; then tmp=/tmp; else tmp="${TMPDIR:-/tmp}"; fi
  PRIVATE_PG_WORK="$(mktemp -d "$tmp/school-service-ops.XXXXXX")"
  PRIVATE_PG_DATA="$PRIVATE_PG_WORK/data"
  pg_owned_dir "$PRIVATE_PG_WORK" "$PRIVATE_PG_DATA" || return 1
  PRIVATE_PG_CTL="$bin/pg_ctl"
  [ "$(id -u)" = 0 ] && PRIVATE_PG_CTL="runuser -u postgres -- $PRIVATE_PG_CTL"
  port="$(free_port)"
  pg_as_owner "$bin/initdb" -D "$PRIVATE_PG_DATA" -U postgres --auth=trust --no-sync >/dev/null || return 1
  cat >>"$PRIVATE_PG_DATA/postgresql.conf" <<EOF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PRIVATE_PG_DATA'
max_connections = ${PRIVATE_PG_MAX_CONNECTIONS:-50}
fsync = off
EOF
  pg_as_owner "$bin/pg_ctl" -D "$PRIVATE_PG_DATA" -l "$PRIVATE_PG_DATA/server.log" -w start >/dev/null || return 1
  PG_SERVER_URL="postgres://postgres@127.0.0.1:$port"
  export PG_SERVER_URL PRIVATE_PG_WORK PRIVATE_PG_DATA PRIVATE_PG_CTL
}

private_pg_cleanup() {
  [ -n "${PRIVATE_PG_WORK:-}" ] || return 0
  pg_as_owner "$(pg_bin_dir)/pg_ctl" -D "$PRIVATE_PG_DATA" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PRIVATE_PG_WORK"
  PRIVATE_PG_WORK=""
}

private_pg_log_tail() {
  tail -n "${1:-20}" "${PRIVATE_PG_DATA:-/nonexistent}/server.log" >&2 2>/dev/null || true
}
