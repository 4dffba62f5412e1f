#!/usr/bin/env bash
# `make bench-oneroster` (and part of `make bench`, BENCH_ONEROSTER=0 skips it): the
# OneRoster 1.2 provider (issue 37) on one school of 2,000 students (50 classes of 40),
# 120 teachers, 80 OneRoster classes (a class taught a subject), three terms of line items
# (240 exams) and results (9,600 marks), side by side with the school's own API in one run.
# scripts/bench/oneroster.py prints one line per figure: a full roster pull
# (users?limit=10000) p50 and the server's peak RSS, a delta sync of 10 changed records,
# one class's results for a line item, a PUT result against the school API's
# confirm-students, and the CSV zip. Nothing asserts a number.
#
# BENCH_BIN: the binary to measure (default: a release build). ONEROSTER_RUNS: requests
# per figure (default 30). ONEROSTER_SCALE: divides the school's size (a quick check of
# this script on the debug build: ONEROSTER_SCALE=10).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
pg_ensure

bin="${BENCH_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --bin school-service
  bin="$PWD/target/release/school-service"
fi
scale="${ONEROSTER_SCALE:-1}"
classes=$((50 / scale))
teachers=$((120 / scale))

# Its database, dropped on exit with the server stopped (scripts/common.sh).
server_database school_oneroster_bench
export RUST_LOG=warn BCRYPT_COST=4 \
  JWT_SECRET="bench-oneroster-secret-bench-oneroster-0" LOGIN_RATE_PER_MINUTE=100000000
"$bin" migrate >/dev/null
"$bin" tenant create --schema ors --name "OneRoster Bench School" --domain ors.localhost >/dev/null
"$bin" user create --tenant ors --email admin@ors.test --password bench-password-1 --role admin >/dev/null

# Classes 1-30 are taught two subjects, the others one: 80 (class, subject) pairs when full.
psql -q -v ON_ERROR_STOP=1 -v classes="$classes" -v teachers="$teachers" "$DATABASE_URL" <<'SQL'
SET search_path TO ors;
INSERT INTO academic_sessions (name, start_date, end_date, is_active)
  VALUES ('2026', '2026-01-01', '2026-12-31', true);
INSERT INTO exam_sessions (academic_session_id, name, term, start_date, end_date)
  SELECT id, 'Term ' || t, 'T' || t, make_date(2026, 4 * t - 3, 1), make_date(2026, 4 * t, 28)
  FROM academic_sessions, generate_series(1, 3) t;
INSERT INTO academic_classes (name, level) SELECT 'Form ' || n, 1 + n % 5 FROM generate_series(1, :classes) n;
INSERT INTO subjects (name, code) VALUES ('Mathematics', 'MATH'), ('English', 'ENG');
INSERT INTO students (admission_number, first_name, last_name, academic_class_id)
  SELECT 'S-' || c.name || '-' || n, (ARRAY['Zoë', 'Łukasz', 'Jürgen', 'René', 'Ayşe'])[1 + n % 5],
         'Student ' || n, c.id
  FROM academic_classes c, generate_series(1, 40) n;
INSERT INTO public.users (email, password_hash, first_name, last_name, client_id)
  SELECT 'teacher' || n || '@ors.test', 'not-a-password', 'Teacher', 'T' || n, t.id
  FROM public.tenants t, generate_series(1, :teachers) n WHERE t.schema_name = 'ors';
INSERT INTO teacher_profiles (user_id, staff_number)
  SELECT u.id, 'T-' || row_number() OVER (ORDER BY u.email)
  FROM public.users u JOIN public.tenants t ON t.id = u.client_id
  WHERE t.schema_name = 'ors' AND u.email LIKE 'teacher%';
CREATE TEMP TABLE pairs AS
  SELECT c.id AS class_id, s.id AS subject_id, row_number() OVER (ORDER BY c.name, s.code) AS n
  FROM academic_classes c JOIN subjects s
    ON s.code = 'MATH' OR substring(c.name FROM 6)::int <= 30;
INSERT INTO teacher_assignments (teacher_id, academic_class_id, subject_id)
  SELECT t.id, p.class_id, p.subject_id
  FROM pairs p JOIN (SELECT id, row_number() OVER (ORDER BY staff_number) AS n FROM teacher_profiles) t
    ON t.n = 1 + p.n % :teachers;
INSERT INTO exams (exam_session_id, name, subject_id, academic_class_id)
  SELECT e.id, 'Exam ' || e.term || ' ' || p.n, p.subject_id, p.class_id FROM exam_sessions e, pairs p;
INSERT INTO marks (exam_id, studentadmissionnumber, mark)
  SELECT x.id, st.admission_number, (hashtext(st.admission_number || x.id::text) & 65535) % 101
  FROM exams x JOIN students st ON st.academic_class_id = x.academic_class_id;
ANALYZE;
SQL
client="$("$bin" tenant oauth-client create --schema ors --name "Bench LMS")"

port="$(free_port)"
export BIND_ADDR="127.0.0.1:$port"
serve_in_background "$bin"
python3 scripts/bench/oneroster.py --port "$port" --pid "$server_pid" --client "$client" \
  --database "$DATABASE_URL" --runs "${ONEROSTER_RUNS:-30}"
