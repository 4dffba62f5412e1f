# Sourced (through pg.sh) by the other scripts: what they share.
#
#   need_command CMD [PACKAGE]   installs Debian's PACKAGE (default CMD) when CMD is missing
#   free_port                    a free TCP port on 127.0.0.1
#   wait_ready BASE_URL          waits (10 s at most) for BASE_URL/readyz to answer 200

need_command() {
  local cmd="$1" package="${2:-$1}"
  command -v "$cmd" >/dev/null 2>&1 && return 0
  [ -x "/usr/sbin/$cmd" ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "$cmd is missing: apt-get install $package" >&2
    return 1
  fi
  echo "installing $package (Debian package)" >&2
  (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null 2>&1) ||
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null)
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_ready() {
  for _ in $(seq 100); do
    curl -sf "$1/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "the server at $1 did not become ready" >&2
  return 1
}

# A test server on a database of its own, for the scripts that drive the real binary:
#
#   server_database PREFIX   creates database PREFIX_<pid> ($db, exported as DATABASE_URL) and
#                            sets an EXIT trap that stops the server and drops the database
#   serve_in_background BIN  starts `BIN serve` (BIND_ADDR must be set) and waits until ready
#   server_stop              stops that server (before another is started on the database)
server_database() {
  db="$1_$$"
  server_pid=""
  trap 'server_cleanup' EXIT
  psql -q "$(pg_admin_url)" -c "CREATE DATABASE $db"
  DATABASE_URL="$(pg_url_for "$db")"
  export DATABASE_URL
}

server_stop() {
  [ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

server_cleanup() {
  server_stop
  psql -q "$(pg_admin_url)" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
}

serve_in_background() {
  "$1" serve &
  server_pid=$!
  wait_ready "http://${BIND_ADDR}"
}
