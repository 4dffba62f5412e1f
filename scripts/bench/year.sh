#!/usr/bin/env bash
# `make bench-year` (and a part of `make bench`; BENCH_YEAR=0 skips it): the school year's
# figures (issue 38), against one release server on a fresh database:
#   - a students file of 5,000 rows (YEAR_ROWS) as CSV: dry run, import; the same rows as
#     XLSX (written by openpyxl, from PyPI, in target/bench-venv) into a twin school: dry
#     run, import, and the ratio to CSV; the server's peak RSS after them;
#   - the rollover of a school of 2,000 students (YEAR_STUDENTS) over 60 classes (12
#     levels of 5): dry run, apply;
#   - last year's report cards (every class's, as JSON) before and after the rollover, and
#     their ratio.
# Targets (issue 38): dry run <= 2 s, import <= 5 s, RSS < 64 MiB, XLSX within 1.5x of CSV;
# rollover dry run <= 1 s, apply <= 5 s; report cards after within 1.2x of before. Prints
# one line per figure; asserts nothing. BENCH_BIN: a built binary (else a release build).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
pg_ensure

ROWS="${YEAR_ROWS:-5000}"
STUDENTS="${YEAR_STUDENTS:-2000}"
bin="${BENCH_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --bin school-service
  bin="$PWD/target/release/school-service"
fi
venv="$PWD/target/bench-venv"
if ! "$venv/bin/python" -c "import openpyxl" >/dev/null 2>&1; then
  echo "installing openpyxl into $venv (PyPI)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q openpyxl
fi

# Its database, dropped on exit with the server stopped (scripts/common.sh).
server_database school_year_bench
export RUST_LOG=warn BCRYPT_COST=4
"$bin" migrate >/dev/null
for school in roll csvs xlsxs; do
  "$bin" tenant create --schema "$school" --name "School $school" --domain "$school.localhost" >/dev/null
  "$bin" user create --tenant "$school" --email "admin@$school.test" --password bench-password-1 \
    --role admin >/dev/null
done

# Every school: the active session and 60 classes, Form 1A to Form 12E. The school that
# rolls over: 2,000 students spread over them, enrolled, an exam per class and subject
# (8 subjects) and every student marked.
psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" <<SQL
DO \$\$
DECLARE s text;
BEGIN
FOR s IN SELECT unnest(ARRAY['roll', 'csvs', 'xlsxs']) LOOP
  EXECUTE format('SET LOCAL search_path = %I, public', s);
  INSERT INTO academic_sessions (name, start_date, end_date, is_active)
    VALUES ('2025/26', '2025-09-01', '2026-07-31', true);
  INSERT INTO academic_classes (name, level)
    SELECT 'Form ' || l || chr(64 + k), l FROM generate_series(1, 12) l, generate_series(1, 5) k;
END LOOP;
END \$\$;
SET search_path TO roll;
INSERT INTO exam_sessions (academic_session_id, name, term) SELECT id, 'Finals', 'T3' FROM academic_sessions;
INSERT INTO subjects (name, code)
  SELECT s, upper(left(s, 3)) FROM unnest(ARRAY['Mathematics', 'English', 'Physics',
    'Chemistry', 'Biology', 'History', 'Geography', 'Art']) s;
WITH c AS (SELECT id, row_number() OVER (ORDER BY level, name) - 1 AS i FROM academic_classes)
INSERT INTO students (admission_number, first_name, last_name, academic_class_id)
  SELECT 'Y-' || n, (ARRAY['Zoë', 'Łukasz', 'Jürgen', 'René', 'Ayşe'])[1 + n % 5], 'Ağaoğlu-' || n, c.id
  FROM generate_series(1, $STUDENTS) n JOIN c ON c.i = n % 60;
INSERT INTO enrollments (student_id, academic_class_id, academic_session_id)
  SELECT st.id, st.academic_class_id, a.id FROM students st, academic_sessions a;
INSERT INTO exams (exam_session_id, name, subject_id, academic_class_id)
  SELECT e.id, s.name || ' final', s.id, c.id FROM exam_sessions e, subjects s, academic_classes c;
INSERT INTO marks (exam_id, studentadmissionnumber, mark)
  SELECT x.id, st.admission_number, (hashtext(st.admission_number || x.id::text) & 65535) % 101
  FROM exams x JOIN students st ON st.academic_class_id = x.academic_class_id;
ANALYZE;
SQL
# YEAR_LOG_SLOW_MS: log the server's statements slower than this (PostgreSQL's log).
if [ -n "${YEAR_LOG_SLOW_MS:-}" ]; then
  psql -q "$(pg_admin_url)" -c "ALTER DATABASE $db SET log_min_duration_statement = ${YEAR_LOG_SLOW_MS}"
fi

port="$(free_port)"
export JWT_SECRET="bench-year-secret-bench-year-secret-0123" BIND_ADDR="127.0.0.1:$port"
serve_in_background "$bin"
"$venv/bin/python" scripts/bench/year.py --port "$port" --pid "$server_pid" --rows "$ROWS"
