#!/usr/bin/env bash
# `make bench-report-cards` (and the last part of `make bench`): report card PDFs from the
# release binary. One school with 12 classes (the first of 40 students, the others of 42:
# 502 students), 8 subjects with an exam each, every student marked, a grading scale and
# comments. Times one class of 40 as a PDF (best of 5, and as JSON), then the bulk: one PDF
# request per class over the 12 classes in a row; prints the server's peak RSS before and
# after. Target (docs/performance.md): 40 cards as a PDF in < 0.5 s. Exits 1 when over.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/pg.sh
pg_ensure

# BENCH_BIN: a release binary built already (else this builds one).
bin="${BENCH_BIN:-}"
if [ -z "$bin" ]; then
  cargo build --release --quiet --bin school-service
  bin="$PWD/target/release/school-service"
fi

# Its database, dropped on exit with the server stopped (scripts/common.sh).
server_database school_cards_bench
work="$(mktemp -d)"
cleanup() {
  server_cleanup
  rm -rf "$work"
}
trap cleanup EXIT
export RUST_LOG=warn BCRYPT_COST=4
"$bin" migrate >/dev/null
"$bin" tenant create --schema cards --name "Łódź Grammar School" --domain cards.localhost >/dev/null
"$bin" user create --tenant cards --email admin@cards.test --password bench-password-1 \
  --role admin >/dev/null

psql -q -v ON_ERROR_STOP=1 "$DATABASE_URL" <<'SQL'
SET search_path TO cards;
INSERT INTO general_settings (school_name, address, phone, email)
  VALUES ('Łódź Grammar School', '1 Rue Café, Gdańsk', '+48 58 000 00 00', 'office@lodz.example');
INSERT INTO academic_settings (pass_mark, max_mark, grading_scale) VALUES (50, 100,
  '[{"symbol":"A","min":80,"max":100},{"symbol":"B","min":65,"max":79},{"symbol":"C","min":50,"max":64},{"symbol":"F","min":0,"max":49}]');
INSERT INTO report_settings (footer_text, principal_signature)
  VALUES ('Keep learning — Straße 1', 'Dr Ğül Şahin');
INSERT INTO teacher_grade_comments (grade, min_mark, max_mark, comment)
  VALUES ('F', 0, 49, 'Needs steady practice'), ('C', 50, 79, 'Good progress'), ('A', 80, 100, 'Excellent work');
INSERT INTO academic_sessions (name, start_date, end_date, is_active)
  VALUES ('2026', '2026-01-01', '2026-12-31', true);
INSERT INTO exam_sessions (academic_session_id, name, term, start_date, end_date)
  SELECT id, 'Finals', 'Term 3', '2026-09-01', '2026-12-15' FROM academic_sessions;
INSERT INTO academic_classes (name, level) SELECT 'Form ' || n, n FROM generate_series(1, 12) n;
INSERT INTO subjects (name, code)
  SELECT s, upper(left(s, 3)) || n FROM unnest(ARRAY['Mathematics', 'English', 'Physics',
    'Chemistry', 'Biology', 'History', 'Geography', 'Art']) WITH ORDINALITY AS t(s, n);
INSERT INTO students (admission_number, first_name, last_name, academic_class_id)
  SELECT 'ADM-' || c.level || '-' || n, (ARRAY['Zoë', 'Łukasz', 'Jürgen', 'René', 'Ayşe'])[1 + n % 5],
         'Ağaoğlu-' || n, c.id
  FROM academic_classes c, generate_series(1, 42) n WHERE c.level > 1 OR n <= 40;
INSERT INTO exams (exam_session_id, name, subject_id, academic_class_id)
  SELECT e.id, s.name || ' final', s.id, c.id FROM exam_sessions e, subjects s, academic_classes c;
INSERT INTO marks (exam_id, studentadmissionnumber, mark)
  SELECT x.id, st.admission_number, (hashtext(st.admission_number || x.id::text) & 65535) % 101
  FROM exams x JOIN students st ON st.academic_class_id = x.academic_class_id;
INSERT INTO attendance (student_id, academic_class_id, date, status)
  SELECT st.id, st.academic_class_id, d::date,
         (ARRAY['present', 'present', 'present', 'late', 'absent'])[1 + (hashtext(st.id::text || d::text) & 65535) % 5]
  FROM students st, generate_series('2026-09-01'::date, '2026-10-31'::date, '1 day') d;
ANALYZE;
SQL

port="$(free_port)"
export JWT_SECRET="bench-cards-secret-bench-cards-secret-0" BIND_ADDR="127.0.0.1:$port"
serve_in_background "$bin"
host="Host: cards.localhost"
token="$(curl -s -H "$host" -H 'Content-Type: application/json' \
  -d '{"identifier": "admin@cards.test", "password": "bench-password-1"}' \
  "http://127.0.0.1:$port/api/v1/school/auth/login/" | python3 -c 'import json, sys; print(json.load(sys.stdin)["access"])')"
session="$(psql -qAt "$DATABASE_URL" -c "SELECT academic_session_id || '/exam-sessions/' || id FROM cards.exam_sessions")"
cards="http://127.0.0.1:$port/api/v1/school/sessions/$session/report-cards/"
classes=($(psql -qAt "$DATABASE_URL" -c "SELECT id FROM cards.academic_classes ORDER BY level"))
hwm() { awk '/VmHWM/ {print $2}' "/proc/$server_pid/status"; }
get() { # ACCEPT CLASS OUT: prints seconds
  curl -s -o "$3" -w '%{time_total}\n' -H "$host" -H "Authorization: Bearer $token" \
    -H "Accept: $1" "$cards?academic_class=$2"
}
before_kib="$(hwm)"
get application/pdf "${classes[0]}" "$work/warm.pdf" >/dev/null
for _ in 1 2 3 4 5; do get application/pdf "${classes[0]}" "$work/form1.pdf"; done | sort -n > "$work/pdf40.txt"
for _ in 1 2 3 4 5; do get application/json "${classes[0]}" "$work/form1.json"; done | sort -n > "$work/json40.txt"
start="$(date +%s.%N)"
for class in "${classes[@]}"; do get application/pdf "$class" "$work/bulk-$class.pdf" >/dev/null; done
end="$(date +%s.%N)"
after_kib="$(hwm)"
need_command pdfinfo poppler-utils
pages=0
for f in "$work"/bulk-*.pdf; do pages=$((pages + $(pdfinfo "$f" | awk '/^Pages:/ {print $2}'))); done
bytes40="$(stat -c %s "$work/form1.pdf")"
bulk_bytes="$(cat "$work"/bulk-*.pdf | wc -c)"
python3 - "$work/pdf40.txt" "$work/json40.txt" "$start" "$end" "$before_kib" "$after_kib" \
  "$bytes40" "$bulk_bytes" "${#classes[@]}" "$pages" <<'PY'
import sys
pdf40 = [float(l) for l in open(sys.argv[1])]
json40 = [float(l) for l in open(sys.argv[2])]
start, end, before, after, bytes40, bulk_bytes, classes, pages = sys.argv[3:]
bulk = float(end) - float(start)
print("== report cards: one school, 12 classes, 502 students, 8 subjects")
print(f"40 cards as PDF      best {pdf40[0]*1000:6.1f} ms  median {pdf40[2]*1000:6.1f} ms  "
      f"({int(bytes40) / 1024:.0f} KiB)  target < 500 ms  {'ok' if pdf40[2] < 0.5 else 'OVER'}")
print(f"40 cards as JSON     best {json40[0]*1000:6.1f} ms  median {json40[2]*1000:6.1f} ms")
print(f"502 cards as PDF     {bulk:.2f} s over {classes} requests in a row "
      f"({pages} pages, {int(bulk_bytes) / 2**20:.1f} MiB)")
print(f"server peak RSS      {int(before) / 1024:.1f} MiB before, {int(after) / 1024:.1f} MiB after")
sys.exit(0 if pdf40[2] < 0.5 else 1)
PY
