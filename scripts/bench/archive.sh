#!/usr/bin/env bash
# `make bench-archive` (and the last part of `make bench`): one school with 100,000 marks
# (BENCH_MARKS) exported and imported by the release binary. Reports each command's wall
# time and peak RSS (/usr/bin/time -v) and the archive's size, against the budgets of
# docs/performance.md: export <= 3 s, import <= 10 s, peak RSS < 64 MiB. The same export
# is also downloaded from a server (its peak RSS before and after). Exits 1 when a figure is
# over its budget.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
pg_ensure

MARKS="${BENCH_MARKS:-100000}"
STUDENTS=1000
EXAMS=$((MARKS / STUDENTS))

[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
cargo build --release --quiet --bin school-service
bin="$PWD/target/release/school-service"

# Its database, dropped on exit with the server stopped (scripts/common.sh).
server_database school_archive_bench
work="$(mktemp -d)"
cleanup() {
  server_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
export RUST_LOG=warn BCRYPT_COST=4
# The platform key the archives are signed and checked with (the server's download too).
export ARCHIVE_SIGNING_KEY="bench-archive-signing-key-0123456789abcdef"
"$bin" migrate >/dev/null
"$bin" tenant create --schema big --name "Big School" --domain big.localhost >/dev/null
for i in 1 2 3; do
  "$bin" user create --tenant big --email "teacher$i@big.test" --password bench-password-1 \
    --role teacher --teacher >/dev/null
done

echo "== filling school 'big': $STUDENTS students, $EXAMS exams, $MARKS marks"
psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" <<SQL
SET search_path TO big;
INSERT INTO academic_sessions (name, start_date, end_date, is_active)
  VALUES ('2026', '2026-01-01', '2026-12-31', true);
INSERT INTO exam_sessions (academic_session_id, name, term)
  SELECT id, 'Finals', 'Term 3' FROM academic_sessions;
INSERT INTO academic_classes (name, level) SELECT 'Form ' || n, n % 100 FROM generate_series(1, $EXAMS) n;
INSERT INTO subjects (name, code) VALUES ('Mathematics', 'MATH');
INSERT INTO students (admission_number, first_name, last_name)
  SELECT 'ADM-' || n, 'Student', 'Number ' || n FROM generate_series(1, $STUDENTS) n;
INSERT INTO exams (exam_session_id, name, subject_id, academic_class_id)
  SELECT e.id, 'Paper ' || c.name, s.id, c.id FROM exam_sessions e, subjects s, academic_classes c;
INSERT INTO marks (exam_id, studentadmissionnumber, mark, symbol, comment)
  SELECT x.id, 'ADM-' || n, n % 101, chr(65 + n % 5), 'Comment on the paper of student ' || n
  FROM exams x, generate_series(1, $STUDENTS) n;
ANALYZE;
SQL

# Runs a command under /usr/bin/time -v; prints "seconds peak_kib".
measure() {
  /usr/bin/time -v -o "$work/time.txt" "$@" >"$work/out.txt"
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i] }
    /Maximum resident set size/ { rss = $2 }
    END { printf "%.2f %d\n", s, rss }' "$work/time.txt"
}

read -r export_s export_kib < <(measure "$bin" tenant export --schema big --out "$work/big.tar.gz")

# The same export downloaded from a server: its peak RSS before and after.
port="$(free_port)"
"$bin" user create-superuser --email root@bench.test --password bench-password-1 >/dev/null
export JWT_SECRET="bench-archive-secret-bench-archive-secret" BIND_ADDR="127.0.0.1:$port"
serve_in_background "$bin"
token="$(curl -s -H 'Host: localhost' -H 'Content-Type: application/json' \
  -d '{"identifier": "root@bench.test", "password": "bench-password-1"}' \
  "http://127.0.0.1:$port/api/v1/system/auth/login/" | python3 -c 'import json, sys; print(json.load(sys.stdin)["access"])')"
tenant="$(psql -qAt "$DATABASE_URL" -c "SELECT id FROM public.tenants WHERE schema_name = 'big'")"
hwm() { awk '/VmHWM/ {print $2}' "/proc/$server_pid/status"; }
server_before_kib="$(hwm)"
download_s="$(curl -s -o "$work/download.tar.gz" -w '%{time_total}' -H 'Host: localhost' \
  -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/v1/system/tenants/$tenant/export/")"
server_after_kib="$(hwm)"
server_stop
read -r plain_s plain_kib < <(measure "$bin" tenant export --schema big --out "$work/big.tar" --no-compress)
"$bin" tenant delete --schema big --drop-schema >/dev/null
read -r import_s import_kib < <(measure "$bin" tenant import --file "$work/big.tar.gz")
restored="$(psql -qAt "$DATABASE_URL" -c "SELECT count(*) FROM big.marks")"
[ "$restored" = "$MARKS" ] || { echo "restored $restored marks, not $MARKS" >&2; exit 1; }

python3 - "$export_s" "$export_kib" "$plain_s" "$plain_kib" "$import_s" "$import_kib" \
  "$(stat -c %s "$work/big.tar.gz")" "$(stat -c %s "$work/big.tar")" "$MARKS" \
  "$download_s" "$server_before_kib" "$server_after_kib" "$(stat -c %s "$work/download.tar.gz")" <<'PY'
import sys
e_s, e_kib, p_s, p_kib, i_s, i_kib, gz, tar, marks, d_s, s_before, s_after, d_bytes = sys.argv[1:]
mib = lambda kib: int(kib) / 1024
over = []
def row(name, seconds, kib, budget):
    ok = float(seconds) <= budget and mib(kib) < 64
    if not ok:
        over.append(name)
    print(f"{name:24} {float(seconds):6.2f} s (budget {budget:>4.0f} s)  peak RSS {mib(kib):5.1f} MiB  {'ok' if ok else 'OVER'}")
print(f"== one school, {int(marks):,} marks")
row("export (gzip)", e_s, e_kib, 3)
row("export (--no-compress)", p_s, p_kib, 3)
row("import (verify+restore)", i_s, i_kib, 10)
print(f"archive: {int(gz) / 2**20:.1f} MiB gzip, {int(tar) / 2**20:.1f} MiB plain tar")
print(f"download from the server: {float(d_s):.2f} s, {int(d_bytes) / 2**20:.1f} MiB; "
      f"server peak RSS {mib(s_before):.1f} MiB before, {mib(s_after):.1f} MiB after")
if mib(s_after) >= 64:
    over.append("server")
sys.exit(1 if over else 0)
PY
