#!/usr/bin/env bash
# `make bench-fleet-memory`: what serving many schools costs PostgreSQL's backends.
# 2,000 schools (FLEET_SCHOOLS), one release server with its default pool, 16 clients
# (FLEET_CLIENTS) reading five things of each school's (report settings, a student search,
# exams, an exam's marks, attendance) round robin, FLEET_PASSES passes over every school.
# After each pass: the pool's backends' Pss_Anon (median, max), the pass's throughput and
# p99. Two variants, alternating, FLEET_RUNS times each:
#   before: the server before school affinity: the CPU's pool (2 x cores + 2, or
#           DB_POOL_SIZE), every connection running, DB_POOL_HOMES=0 DB_POOL_MAX_SCHOOLS=0
#           DB_POOL_MAX_BACKEND_MIB=0 (any connection serves any school, never recycled);
#   after:  the defaults (a pool of one connection per hundred schools, up to 18, unless
#           DB_POOL_SIZE is set, the schools spread over 2 x cores + 2 of them until a
#           backend outgrows its memory budget, then over all; 2 x cores + 2 run at once;
#           one home connection per school; recycling at DB_POOL_MAX_BACKEND_MIB of backend
#           memory or DB_POOL_MAX_SCHOOLS schools);
# and, only when named in FLEET_VARIANTS:
#   cpu:    the defaults on the CPU's pool (DB_POOL_SIZE=2 x cores + 2);
#   uncapped: the defaults with every connection running (DB_POOL_RUNNING=0);
#   wide:   before's rule (any connection, every one running, never recycled) on the pool
#           after sizes;
#   full:   the defaults on the pool after sizes, the schools spread over all of it from
#           the start (DB_POOL_SIZE set to that size);
#   homes:  affinity alone, never recycled (what a school costs a backend that keeps it);
#   capped: the defaults with DB_POOL_MAX_SCHOOLS=FLEET_CAP;
#   budget: the defaults with DB_POOL_MAX_BACKEND_MIB=FLEET_BUDGET;
#   patient: the defaults with DB_POOL_BORROW_AFTER_MS=FLEET_PATIENT_MS (default 50): a
#           unit of work waits longer for its home before it borrows;
#   base:   another build (FLEET_BASE_BIN, e.g. main's) with its defaults: its rule
#           against this one's, in the same sitting;
#   pgbouncer: the server in transaction mode behind a PgBouncer (pool of the server's
#           size) whose server_lifetime is FLEET_SERVER_LIFETIME s (default 60): what
#           bounds PostgreSQL's backends there (their Pss_Anon is what is measured).
# Each row also gives the pool's distinct schools per connection (median, max, from
# /metrics), the share of units of work that borrowed a connection not their home, the
# connections recycled and the connections the schools were spread over at the pass's end.
# The summary gives medians over runs; the machine's load average is printed with it,
# since other work on the machine moves throughput and latency (not memory).
# The database is provisioned with `tenant create-many --jobs` (FLEET_JOBS) and dropped at
# the end unless FLEET_KEEP_DB=1 (then a later run reuses it; FLEET_DB names it). FLEET_BIN:
# another build.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
source scripts/pgbouncer.sh
pg_ensure

SCHOOLS="${FLEET_SCHOOLS:-2000}"
PASSES="${FLEET_PASSES:-7}"
RUNS="${FLEET_RUNS:-3}"
CLIENTS="${FLEET_CLIENTS:-16}"
JOBS="${FLEET_JOBS:-4}"
VARIANTS="${FLEET_VARIANTS:-before after}"
PORT="${FLEET_PORT:-18090}"
PASSWORD="fleet-password"
db="${FLEET_DB:-school_fleet_memory_$SCHOOLS}"
out="${FLEET_OUT:-target/fleet-memory}"

need_command wrk
if [ -n "${FLEET_BIN:-}" ]; then
  bin="$(realpath "$FLEET_BIN")"
else
  cargo build --release --quiet
  bin="$PWD/target/release/school-service"
fi
mkdir -p "$out"
rm -f "$out"/run-*.txt

server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  pgbouncer_stop
  if [ "${FLEET_KEEP_DB:-0}" != 1 ]; then
    psql -q "$(pg_admin_url)" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

export DATABASE_URL="$(pg_url_for "$db")"
export JWT_SECRET="fleet-secret-fleet-secret-fleet-secret-0123"
export RUST_LOG=warn ACCESS_TOKEN_TTL=86400 LOGIN_RATE_PER_MINUTE=100000000 BIND_ADDR="127.0.0.1:$PORT"

schools_there() {
  psql -Atc "SELECT count(*) FROM public.tenants WHERE schema_name LIKE 'fleet%'" "$DATABASE_URL" 2>/dev/null || echo 0
}
if [ "$(schools_there)" != "$SCHOOLS" ]; then
  psql -q "$(pg_admin_url)" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
  "$bin" migrate >/dev/null
  echo "== provisioning $SCHOOLS schools, $JOBS at a time"
  start=$(date +%s)
  BCRYPT_COST=4 "$bin" tenant create-many --prefix fleet --count "$SCHOOLS" \
    --teacher-password "$PASSWORD" --jobs "$JOBS" >/dev/null
  echo "provisioned in $(( $(date +%s) - start )) s"
fi
# FLEET_SEED=0 skips the seeding below (and its checkpoint) for a database seeded before.
if [ "${FLEET_SEED:-1}" = 1 ]; then
# What the five reads find in every school: a session, an exam with 20 marks, 20 students
# with a day's attendance, which teachers may read (fixed ids: one wrk script for all).
psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" <<'SQL'
DO $$
DECLARE s text;
BEGIN
FOR s IN SELECT schema_name FROM public.tenants WHERE schema_name LIKE 'fleet%' LOOP
  EXECUTE format('SET LOCAL search_path = %I, public', s);
  IF NOT EXISTS (SELECT FROM academic_sessions) THEN
    INSERT INTO academic_sessions (id, name, start_date, end_date, is_active)
      VALUES ('00000000-0000-4000-8000-000000000001', '2026', '2026-01-01', '2026-12-31', true);
    INSERT INTO exam_sessions (id, academic_session_id, name, term)
      VALUES ('00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000001', 'Finals', 'T1');
    INSERT INTO academic_classes (id, name) VALUES ('00000000-0000-4000-8000-000000000003', 'Form 1');
    INSERT INTO subjects (id, name, code) VALUES ('00000000-0000-4000-8000-000000000004', 'Maths', 'MAT');
    INSERT INTO exams (id, exam_session_id, name, subject_id, academic_class_id)
      VALUES ('00000000-0000-4000-8000-000000000005', '00000000-0000-4000-8000-000000000002', 'Paper',
              '00000000-0000-4000-8000-000000000004', '00000000-0000-4000-8000-000000000003');
    INSERT INTO students (admission_number, first_name, last_name, academic_class_id)
      SELECT 'S-' || i, 'F', 'L' || i, '00000000-0000-4000-8000-000000000003' FROM generate_series(1, 20) i;
    INSERT INTO marks (exam_id, studentadmissionnumber, mark)
      SELECT '00000000-0000-4000-8000-000000000005', 'S-' || i, i * 4 FROM generate_series(1, 20) i;
    INSERT INTO attendance (student_id, academic_class_id, date, status)
      SELECT id, academic_class_id, '2026-03-02', 'present' FROM students;
  END IF;
  -- A teacher who takes the register reads it.
  UPDATE school_roles SET permissions = array_append(permissions, 'view_attendance')
    WHERE name = 'teacher' AND NOT 'view_attendance' = ANY (permissions);
  -- One school per transaction: its locks are released before the next.
  COMMIT;
END LOOP;
END $$;
SQL
psql -q "$(pg_admin_url)" -c CHECKPOINT >/dev/null
fi

start_server() { # env assignments... (server_bin: another build)
  env "$@" "${server_bin:-$bin}" serve &
  server_pid=$!
  wait_ready "http://127.0.0.1:$PORT"
}
# Requests to the school API the server has answered so far.
answered() {
  curl -s "http://127.0.0.1:$PORT/metrics/" |
    awk '/^http_requests_total\{.*route="\/api\/v1\/school/ {n += $NF} END {printf "%d\n", n}'
}
stop_server() {
  kill "$server_pid" && wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# Logins once (tokens outlive server restarts), then the pass script.
start_server
python3 scripts/bench/fleet_memory.py prepare --port "$PORT" --schools "$SCHOOLS" \
  --password "$PASSWORD" --threads 2 --out "$out"
stop_server

cpu_pool="${DB_POOL_SIZE:-$(( $(nproc) * 2 + 2 ))}"
# What the server sizes with no DB_POOL_SIZE (`pool::pool_size_for_schools`).
schools_pool=$(( (SCHOOLS + 99) / 100 )); (( schools_pool > 18 )) && schools_pool=18
(( schools_pool < cpu_pool )) && schools_pool=$cpu_pool
echo "== $SCHOOLS schools, $CLIENTS clients, $PASSES passes of $(( SCHOOLS * 5 )) reads; pool: before $cpu_pool, after ${DB_POOL_SIZE:-$schools_pool} (nproc=$(nproc))"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$RUNS"); do
  for variant in $VARIANTS; do
    case "$variant" in
      before) start_server DB_POOL_SIZE="$cpu_pool" DB_POOL_RUNNING=0 DB_POOL_HOMES=0 DB_POOL_MAX_SCHOOLS=0 DB_POOL_MAX_BACKEND_MIB=0 ;;
      after) start_server ;;
      cpu) start_server DB_POOL_SIZE="$cpu_pool" ;;
      uncapped) start_server DB_POOL_RUNNING=0 ;;
      full) start_server DB_POOL_SIZE="${DB_POOL_SIZE:-$schools_pool}" ;;
      wide) start_server DB_POOL_SIZE="${DB_POOL_SIZE:-$schools_pool}" DB_POOL_RUNNING=0 DB_POOL_HOMES=0 DB_POOL_MAX_SCHOOLS=0 DB_POOL_MAX_BACKEND_MIB=0 ;;
      base) server_bin="$(realpath "${FLEET_BASE_BIN:?the build the base variant runs}")" start_server ;;
      homes) start_server DB_POOL_MAX_SCHOOLS=0 DB_POOL_MAX_BACKEND_MIB=0 ;;
      capped) start_server DB_POOL_MAX_SCHOOLS="${FLEET_CAP:-250}" ;;
      patient) start_server DB_POOL_BORROW_AFTER_MS="${FLEET_PATIENT_MS:-50}" ;;
      budget) start_server DB_POOL_MAX_BACKEND_MIB="${FLEET_BUDGET:-32}" ;;
      pgbouncer)
        settings="$out/pgbouncer-settings.ini"
        { cat scripts/pgbouncer-settings.ini
          echo "server_lifetime = ${FLEET_SERVER_LIFETIME:-60}"; } > "$settings"
        PGBOUNCER_POOL_SIZE=$(( $(nproc) * 2 + 2 )) PGBOUNCER_SETTINGS="$PWD/$settings" pgbouncer_start
        start_server DB_POOL_MODE=transaction DATABASE_URL="$PGBOUNCER_URL/$db" \
          DATABASE_LISTEN_URL="$DATABASE_URL" ;;
      *) echo "unknown variant $variant" >&2; exit 2 ;;
    esac
    for pass in $(seq 1 "$PASSES"); do
      # A pass ends when the server has answered its reads (wrk prints its figures on
      # SIGINT); wrk's own duration is only the backstop.
      done_before=$(answered)
      wrk -t2 -c"$CLIENTS" -d600s --timeout 30s --latency -s "$out/pass.lua" \
        "http://127.0.0.1:$PORT" > "$out/wrk.out" 2>&1 &
      wrk_pid=$!
      while [ $(( $(answered) - done_before )) -lt $(( SCHOOLS * 5 )) ] && kill -0 "$wrk_pid" 2>/dev/null; do
        sleep 0.2
      done
      kill -INT "$wrk_pid" 2>/dev/null || true
      wait "$wrk_pid" || true
      load=$(python3 scripts/bench/parse_wrk.py pass "$out/wrk.out" | awk '{print $2, $4, $5}')
      mem=$(python3 scripts/bench/fleet_memory.py memory --db "$db" --admin-url "$(pg_admin_url)")
      pool=$(curl -s "http://127.0.0.1:$PORT/metrics/" | python3 scripts/bench/fleet_memory.py pool)
      row="$variant $run $pass $mem $load $pool"
      echo "$row" | tee -a "$out/run-$run.txt"
    done
    stop_server
    pgbouncer_stop
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$RUNS" -gt 0 ] || exit 0
echo "== columns: variant pass backends' Pss_Anon median/max, the pass's req/s and p99; schools per connection, borrowed share"
python3 scripts/bench/fleet_memory.py summary "$out"/run-*.txt | tee "$out/summary.txt"
