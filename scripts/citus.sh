# Sourced: a local Citus cluster (a coordinator and two workers on loopback ports) under
# .state/citus/ (git-ignored), run by the `postgres` system user with the machine's
# PostgreSQL 15 binaries and the Citus built by ../shared/scripts/citus-build.sh.
#
#   citus_installed        true when citus.so is installed
#   citus_start            initialises (once) and starts the three nodes; sets CITUS_COORD_URL
#                          (server part) and CITUS_WORKERS ("host:port,host:port")
#   citus_create_db NAME   a database on every node with the extension, the workers
#                          registered and schema-based sharding on
#   citus_drop_db NAME     drops it on every node
#   citus_stop             stops the three nodes

# Below Linux's ephemeral ports (32768-60999): a busy machine's outgoing connections once
# held 55442 when the cluster started.
CITUS_PORT_BASE="${CITUS_PORT_BASE:-25440}"
CITUS_DIR="${CITUS_DIR:-$PWD/.state/citus}"
CITUS_PG_BIN="${CITUS_PG_BIN:-/usr/lib/postgresql/15/bin}"

citus_installed() {
  local libdir
  libdir="$("$CITUS_PG_BIN/pg_config" --pkglibdir 2>/dev/null)" || return 1
  [ -f "$libdir/citus.so" ]
}

citus_run() { # as the postgres user when root: initdb and postgres refuse root
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

citus_node_port() { echo $((CITUS_PORT_BASE + $1)); }

citus_start() {
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  fi
  mkdir -p "$CITUS_DIR"
  [ "$(id -u)" = 0 ] && chown postgres "$CITUS_DIR"
  local node dir port
  for node in 0 1 2; do
    dir="$CITUS_DIR/node$node"
    port="$(citus_node_port "$node")"
    if [ ! -f "$dir/PG_VERSION" ]; then
      citus_run "$CITUS_PG_BIN/initdb" -D "$dir" -U postgres --auth=trust >/dev/null
      # Citus as docs/scale-out.md sets it up, and nothing more of Citus's (no unsafe
      # settings; Citus sizes max_prepared_transactions itself). The rest is the size and
      # speed of a throwaway test cluster.
      cat >>"$dir/postgresql.conf" <<EOF
shared_preload_libraries = 'citus'
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 300
fsync = off
synchronous_commit = off
full_page_writes = off
citus.enable_schema_based_sharding = on
EOF
    fi
    if ! citus_run "$CITUS_PG_BIN/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
      citus_run "$CITUS_PG_BIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w start >/dev/null
    fi
  done
  CITUS_COORD_URL="postgres://postgres@127.0.0.1:$(citus_node_port 0)"
  CITUS_WORKERS="127.0.0.1:$(citus_node_port 1),127.0.0.1:$(citus_node_port 2)"
  export CITUS_COORD_URL CITUS_WORKERS
}

citus_psql() { # node database sql...
  local node="$1" db="$2"
  shift 2
  psql -qAtX -v ON_ERROR_STOP=1 "postgres://postgres@127.0.0.1:$(citus_node_port "$node")/$db" "$@"
}

citus_create_db() {
  local db="$1" node
  for node in 0 1 2; do
    citus_psql "$node" postgres -c "CREATE DATABASE $db"
    citus_psql "$node" "$db" -c "CREATE EXTENSION citus"
  done
  citus_psql 0 "$db" \
    -c "SELECT citus_set_coordinator_host('127.0.0.1', $(citus_node_port 0))" \
    -c "SELECT citus_add_node('127.0.0.1', $(citus_node_port 1))" \
    -c "SELECT citus_add_node('127.0.0.1', $(citus_node_port 2))" >/dev/null
}

citus_drop_db() {
  local db="$1" node
  for node in 0 1 2; do
    citus_psql "$node" postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true
  done
}

citus_stop() {
  local node
  for node in 0 1 2; do
    citus_run "$CITUS_PG_BIN/pg_ctl" -D "$CITUS_DIR/node$node" -m fast stop >/dev/null 2>&1 || true
  done
}
