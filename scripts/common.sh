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
