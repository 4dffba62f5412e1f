# Sourced by `make profile` and `make profile-instructions`: the binary to measure, a
# database of its own holding one school with its teacher and admin, and the clean-up at
# exit. Sets bin, db, work and server_pid (the caller starts the server); expects PORT,
# PASSWORD and PROFILE_POOL_SIZE.

# PROFILE_BIN: another build to measure (an earlier commit's, for a before/after in one run).
if [ -n "${PROFILE_BIN:-}" ]; then
  bin="$PROFILE_BIN"
else
  cargo build --release --quiet
  bin="$PWD/target/release/school-service"
fi
work="$(mktemp -d)"
# The database and the clean-up of `scripts/common.sh` (server_database), and the work
# directory with them.
server_database school_profile
trap 'server_cleanup; rm -rf "$work"' EXIT
export JWT_SECRET="profile-secret-profile-secret-profile-0123"
export RUST_LOG=warn ACCESS_TOKEN_TTL=3600 LOGIN_RATE_PER_MINUTE=100000000 BCRYPT_COST=4
export DB_POOL_SIZE="$PROFILE_POOL_SIZE" BIND_ADDR="127.0.0.1:$PORT"
"$bin" migrate >/dev/null
"$bin" tenant create-many --prefix bench --count 1 --teacher-password "$PASSWORD" >/dev/null
"$bin" user create --tenant bench1 --email admin@bench1.test --password "$PASSWORD" --role admin >/dev/null
