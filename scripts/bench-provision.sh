#!/usr/bin/env bash
# `make bench-provision` (also run by `make bench`): provisioning and fleet migration,
# release build, a fresh database on the same PostgreSQL. Prints figures; asserts none.
#
# 1. Provisioning against PostgreSQL's floor (scripts/bench/provision_floor.py: the
#    baseline script alone, one query per school, on the same number of connections), in
#    the first and the third thousand of schools, with --jobs 1 and --jobs 4. Service and
#    floor alternate in blocks of $BLOCK schools (25: the finer, the less a shared
#    machine's load favours one side), the floor's schemas dropped after each
#    block, so both see the same catalog and the same machine load.
# 2. `migrate` over 1,000 schools with --jobs 1 and --jobs 4: the schools are put back
#    before tenant migrations 2026-11-22-000004 (two columns) and 2026-11-23-000001
#    (twelve indexes) by their down.sql, and migrate applies both again.
# 3. `tenant status` and a no-op `migrate` over every school.
# 4. What provisioning is made of (scripts/bench/provision_breakdown.py).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pg.sh
pg_ensure

BLOCK="${BENCH_PROVISION_BLOCK:-25}"
ROUNDS=$((500 / BLOCK)) # 500 schools per (thousand, jobs) pair: 1,000 per thousand

cargo build --release --quiet
bin="$PWD/target/release/school-service"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -c "import psycopg2" 2>/dev/null || .venv/bin/pip install -q psycopg2-binary==2.9.13
floor=(.venv/bin/python scripts/bench/provision_floor.py)

db="school_provision_$$"
cleanup() { psql -q "$(pg_admin_url)" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true; }
trap cleanup EXIT
psql -q "$(pg_admin_url)" -c "CREATE DATABASE $db"
export DATABASE_URL="$(pg_url_for "$db")" RUST_LOG=warn
"$bin" migrate >/dev/null

schools() { psql -qAt "$DATABASE_URL" -c "SELECT count(*) FROM tenants"; }

# Service then floor, $BLOCK schools each, $ROUNDS times; prints the two means (ms/school).
measure() {
  local jobs="$1" tag="$2" service=0 floor_sum=0 round ms
  for round in $(seq "$ROUNDS"); do
    ms=$("$bin" tenant create-many --prefix "p${tag}j${jobs}r${round}s" --count "$BLOCK" --jobs "$jobs" |
      sed -E 's/.*\(([0-9.]+) ms per school\).*/\1/')
    service=$(echo "$service + $ms" | bc -l)
    ms=$("${floor[@]}" "$DATABASE_URL" tenant_migrations/baseline.sql "floor_" "$BLOCK" "$jobs")
    floor_sum=$(echo "$floor_sum + $ms" | bc -l)
    "${floor[@]}" "$DATABASE_URL" --drop "floor_" "$BLOCK"
  done
  echo "$(echo "$service / $ROUNDS" | bc -l) $(echo "$floor_sum / $ROUNDS" | bc -l)"
}

need_command bc
echo "== provisioning: the service (tenant create-many) against PostgreSQL's floor (the baseline"
echo "   script alone, one query per school), same catalog, same number of connections"
printf '%-11s %5s %11s %9s %6s\n' schools jobs service_ms floor_ms ratio
for thousand in first third; do
  if [ "$thousand" = third ]; then
    "$bin" tenant create-many --prefix fill --count $((2000 - $(schools))) --jobs 4 >/dev/null
    psql -q "$DATABASE_URL" -c "VACUUM ANALYZE" >/dev/null
  fi
  from=$(($(schools) + 1))
  for jobs in 1 4; do
    read -r service floor_ms < <(measure "$jobs" "$thousand")
    printf '%-11s %5s %11.1f %9.1f %6.2f\n' "$from-$((from + 999))" "$jobs" "$service" "$floor_ms" \
      "$(echo "$service / $floor_ms" | bc -l)"
  done
done

echo "== migrate over 1,000 schools (tenant migrations 000004 and search_trgm undone, then reapplied)"
down() { # the two migrations undone in the schools whose names match the pattern $1
  psql -qAt "$DATABASE_URL" -c "SELECT schema_name FROM tenants WHERE schema_name LIKE '$1' ORDER BY 1 LIMIT 1000" |
    while read -r school; do
      echo "SET search_path TO $school;"
      cat tenant_migrations/2026-11-23-000001_search_trgm/down.sql
      cat tenant_migrations/2026-11-22-000004_role_assignment_audit/down.sql
      echo "DELETE FROM __diesel_schema_migrations WHERE version IN ('20261122000004', '20261123000001');"
    done | psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" >/dev/null
}
total=$(schools)
for jobs in 1 4; do
  down 'fill%'
  behind=$("$bin" tenant status --pending | wc -l)
  start=$(date +%s%N)
  summary=$("$bin" migrate --jobs "$jobs" | tail -1)
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  printf 'migrate --jobs %s: %s schools behind, %d ms (%.1f ms per school migrated): %s\n' \
    "$jobs" "$behind" "$ms" "$(echo "$ms / $behind" | bc -l)" "$summary"
done
start=$(date +%s%N)
"$bin" tenant status >/dev/null
echo "tenant status over $total schools: $(( ($(date +%s%N) - start) / 1000000 )) ms"
start=$(date +%s%N)
"$bin" migrate >/dev/null
echo "migrate over $total up-to-date schools: $(( ($(date +%s%N) - start) / 1000000 )) ms"

echo "== what provisioning a school is made of, on PostgreSQL alone (scripts/bench/provision_breakdown.py,"
echo "   one connection, at this catalog size)"
.venv/bin/python scripts/bench/provision_breakdown.py "$DATABASE_URL" tenant_migrations/baseline.sql \
  "${BENCH_BREAKDOWN_SCHOOLS:-50}"
