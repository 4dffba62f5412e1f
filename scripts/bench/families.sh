#!/usr/bin/env bash
# `make bench` (BENCH_FAMILIES=0 skips it): the costs of issue 41, from the release binary
# (or BENCH_BIN). One school: an active session, one class of BENCH_FAMILIES_STUDENTS
# (default 40) students, 8 subjects with an exam each, every student marked; an admin, a
# teacher, a guardian of the first student and an API key. scripts/bench/families.py runs
# wrk for each scenario (BENCH_FAMILIES_DURATION seconds, default 5, BENCH_FAMILIES_CONNECTIONS
# connections, default 16) and prints one line per figure:
#
#   (a) a guardian's read of their child's marks (an exam's marks, `?search=` the child's
#       admission number) against the teacher's read of the same request: target ≤ 1.2x
#       the teacher's time, i.e. guardian/teacher throughput ≥ 0.83;
#   (b) mark writes (PATCH of a mark's value, cycling over every mark) with history on
#       against off: target ≥ 0.85x. "Off" is the same binary and the same PATCH, served
#       after a restart with HISTORY_WRITES=false (config: the store then neither locks
#       the row for history nor writes the entry); the two alternate twice and the best
#       of each is taken, so a slow moment of the machine does not land on one side only;
#   (c) an API key's read of the class's students (disclosures logged) against the
#       admin's JWT read of the same page: target ≥ 0.9x.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
pg_ensure
need_command wrk

bin="${BENCH_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --bin school-service
  bin="$PWD/target/release/school-service"
fi
students="${BENCH_FAMILIES_STUDENTS:-40}"

# Its database, dropped on exit with the server stopped (scripts/common.sh).
server_database school_families_bench
work="$(mktemp -d)"
cleanup() {
  server_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
export RUST_LOG=warn BCRYPT_COST=4 \
  JWT_SECRET="bench-families-secret-bench-families-0001" ACCESS_TOKEN_TTL=3600 \
  LOGIN_RATE_PER_MINUTE=100000 SCHOOL_RATE_PER_SECOND=1000000
password="bench-password-1"
"$bin" migrate >/dev/null
"$bin" tenant create --schema fam --name "Family School" --domain fam.localhost >/dev/null
"$bin" user create-superuser --email root@bench.test --password "$password" >/dev/null
"$bin" user create --tenant fam --email admin@fam.test --password "$password" --role admin >/dev/null
"$bin" user create --tenant fam --email teacher@fam.test --password "$password" --role teacher --teacher >/dev/null
"$bin" user create --tenant fam --email parent@fam.test --password "$password" --role guardian >/dev/null

psql -q -v ON_ERROR_STOP=1 -v students="$students" "$DATABASE_URL" <<'SQL'
SET search_path TO fam;
INSERT INTO academic_sessions (name, start_date, end_date, is_active)
  VALUES ('2026', '2026-01-01', '2026-12-31', true);
INSERT INTO exam_sessions (academic_session_id, name, term)
  SELECT id, 'Term 1', '1' FROM academic_sessions;
INSERT INTO academic_classes (name, level) VALUES ('Form 1', 1);
INSERT INTO subjects (name, code)
  SELECT s, upper(left(s, 3)) || n FROM unnest(ARRAY['Mathematics', 'English', 'Physics',
    'Chemistry', 'Biology', 'History', 'Geography', 'Art']) WITH ORDINALITY AS t(s, n);
INSERT INTO students (admission_number, first_name, last_name, academic_class_id)
  SELECT 'FAM-' || lpad(n::text, 4, '0'), 'Kid', 'Number ' || n, c.id
  FROM academic_classes c, generate_series(1, :students) n;
INSERT INTO enrollments (student_id, academic_class_id, academic_session_id, status)
  SELECT st.id, st.academic_class_id, s.id, 'active' FROM students st, academic_sessions s;
INSERT INTO exams (exam_session_id, name, subject_id, academic_class_id)
  SELECT e.id, s.name || ' test', s.id, c.id FROM exam_sessions e, subjects s, academic_classes c;
INSERT INTO marks (exam_id, studentadmissionnumber, mark)
  SELECT x.id, st.admission_number, (hashtext(st.admission_number || x.id::text) & 65535) % 101
  FROM exams x JOIN students st ON st.academic_class_id = x.academic_class_id;
INSERT INTO teacher_assignments (teacher_id, academic_class_id, subject_id)
  SELECT t.id, c.id, s.id FROM teacher_profiles t, academic_classes c, subjects s;
INSERT INTO guardians (first_name, last_name, relationship, user_id)
  SELECT 'Pat', 'Parent', 'mother', u.id FROM public.users u WHERE u.email = 'parent@fam.test';
INSERT INTO guardian_students (guardian_id, student_id, position)
  SELECT g.id, st.id, 0 FROM guardians g, students st WHERE st.admission_number = 'FAM-0001';
ANALYZE;
SQL

port="$(free_port)"
start_server() { # extra environment for the server, as NAME=value words
  env "$@" BIND_ADDR="127.0.0.1:$port" "$bin" serve &
  server_pid=$!
  wait_ready "http://127.0.0.1:$port"
}
bench() { python3 scripts/bench/families.py --port "$port" --password "$password" --work "$work" "$@"; }

start_server
bench setup
bench reads
for round in 1 2; do
  bench write --label on
  server_stop
  start_server HISTORY_WRITES=false
  bench write --label off
  server_stop
  start_server
done
bench report
