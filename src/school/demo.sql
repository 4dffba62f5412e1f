-- A believable school year for a demo school, run once on a connection bound to the
-- school's schema (see demo.rs, which fills in the {{...}} values it controls). The
-- school's users (admin, principal, office, student, teachers with profiles) exist
-- already; they are found by e-mail under @{{MAIL}}.
--
-- Rows get created_at a millisecond apart, so lists (ordered by created_at) read in the
-- order they were written here.

CREATE TEMP TABLE demo_clock (base timestamptz) ON COMMIT DROP;
INSERT INTO demo_clock VALUES (now() - interval '30 days');

INSERT INTO general_settings (id, school_name, address, phone, email, logo, created_at, updated_at)
SELECT gen_random_uuid(), '{{NAME}}', '{{ADDRESS}}', '+1 555 0100', 'office@{{MAIL}}', '', base, base
FROM demo_clock;

INSERT INTO academic_settings (id, pass_mark, max_mark, terms_per_session, grading_scale, created_at, updated_at)
SELECT gen_random_uuid(), 50, 100, 3,
       '[{"symbol":"A","min":80,"max":100},{"symbol":"B","min":70,"max":79},{"symbol":"C","min":60,"max":69},{"symbol":"D","min":50,"max":59},{"symbol":"E","min":40,"max":49},{"symbol":"F","min":0,"max":39}]'::jsonb,
       base, base
FROM demo_clock;

INSERT INTO report_settings (id, show_position, show_class_average, show_teacher_comments, principal_signature, footer_text, updated_at)
SELECT true, true, true, true,
       -- The principal's own name signs the report cards.
       coalesce((SELECT nullif(trim(first_name || ' ' || last_name), '') FROM public.users
                 WHERE email = 'principal@{{MAIL}}'), ''),
       '{{NAME}}: learning together since 1987.', now()
ON CONFLICT (id) DO NOTHING;

-- Last year (inactive) and this year (active).
INSERT INTO academic_sessions (id, name, start_date, end_date, is_active, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(), s.name, s.start_date, s.end_date, s.active, false,
       base + s.n * interval '1 ms', base + s.n * interval '1 ms'
FROM demo_clock, (VALUES
    (1, '2025/2026', timestamptz '2025-09-01', timestamptz '2026-07-15', false),
    (2, '2026/2027', timestamptz '2026-09-01', timestamptz '2027-07-15', true)
) AS s(n, name, start_date, end_date, active);

INSERT INTO exam_sessions (id, academic_session_id, name, term, start_date, end_date, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(), a.id, e.name, e.term, e.start_date, e.end_date, false,
       base + (10 + e.n) * interval '1 ms', base + (10 + e.n) * interval '1 ms'
FROM demo_clock, academic_sessions a, (VALUES
    (1, 'Term 1 examinations', '1', timestamptz '2026-11-02', timestamptz '2026-11-20'),
    (2, 'Term 2 examinations', '2', timestamptz '2027-03-08', timestamptz '2027-03-26'),
    (3, 'Term 3 examinations', '3', timestamptz '2027-06-14', timestamptz '2027-07-02')
) AS e(n, name, term, start_date, end_date)
WHERE a.is_active;

-- Staff numbers in the order the teachers were created.
UPDATE teacher_profiles p SET staff_number = '{{PREFIX}}-T' || lpad(n::text, 2, '0')
FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM teacher_profiles) o
WHERE o.id = p.id;

CREATE TEMP TABLE demo_teachers ON COMMIT DROP AS
SELECT p.id, p.user_id, row_number() OVER (ORDER BY p.staff_number) AS n
FROM teacher_profiles p;

INSERT INTO subjects (id, name, code, department_id, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(), s.name, s.code, NULL, false,
       base + (20 + s.n) * interval '1 ms', base + (20 + s.n) * interval '1 ms'
FROM demo_clock, (VALUES {{SUBJECTS}}) AS s(n, name, code, department);

-- Each department's head is a teacher; its subject is its first one.
INSERT INTO departments (id, name, hod_id, subject_id, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(), d.name,
       (SELECT id FROM demo_teachers WHERE n = 1 + (d.k - 1) % (SELECT count(*) FROM demo_teachers)),
       (SELECT id FROM subjects WHERE code = d.first_code),
       false, base + (40 + d.k) * interval '1 ms', base + (40 + d.k) * interval '1 ms'
FROM demo_clock, (VALUES {{DEPARTMENTS}}) AS d(k, name, first_code);

UPDATE subjects s SET department_id = d.id
FROM (VALUES {{SUBJECTS}}) AS v(n, name, code, department), departments d
WHERE s.code = v.code AND d.name = v.department;

INSERT INTO academic_classes (id, name, level, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(), c.name, c.level, false,
       base + (60 + c.n) * interval '1 ms', base + (60 + c.n) * interval '1 ms'
FROM demo_clock, (VALUES {{CLASSES}}) AS c(n, name, level, size);

-- Students: names drawn from two lists by a hash of the admission number (no cycle a
-- reader would notice), admission numbers in class order.
CREATE TEMP TABLE demo_names ON COMMIT DROP AS
SELECT ARRAY['Amara','Ben','Chloe','Daniel','Esi','Farah','George','Hana','Isaac','Jade',
             'Kofi','Lena','Mateo','Nia','Oscar','Priya','Quinn','Rosa','Sam','Tara',
             'Umar','Vera','Wei','Ximena','Yusuf','Zoe','Aiden','Bella','Caleb','Dina',
             'Elias','Fatima','Gabriel','Ines','Jonah','Kira','Liam','Maya','Noah','Olga',
             'Aisha','Bruno','Carmen','Dev','Emeka','Freya','Hugo','Ivy','Jamal','Leila',
             'Malik','Nora','Omar','Pablo','Rania','Sofia','Theo','Yara','Zainab','Luca'] AS first,
       ARRAY['Adams','Baker','Chen','Diallo','Evans','Fischer','Garcia','Hughes','Ibrahim',
             'Jensen','Kowalski','Lopez','Mensah','Nakamura','Owusu','Petrov','Quaye','Rossi',
             'Singh','Taylor','Usman','Varga','Williams','Xu','Young','Zhang','Achebe','Bianchi',
             'Campbell','Dubois','Eriksen','Fernandes','Gonzalez','Haddad','Ivanova','Johnson',
             'Kim','Lindqvist','Moreau','Novak','O''Brien','Patel','Quintero','Reyes','Schmidt',
             'Tanaka','Umeh','Vasquez','Wright','Yilmaz','Abara','Boateng','Costa','Dimitrov',
             'Edwards','Fofana','Greene','Horvath','Ito','Juarez','Kaplan','Murphy','Nguyen',
             'Okoro','Park','Silva','Thompson','Walsh'] AS last;

INSERT INTO students (id, admission_number, first_name, last_name, academic_class_id, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(),
       '{{PREFIX}}' || lpad(k::text, 4, '0'),
       first[1 + abs(hashtext('{{PREFIX}}first' || k)) % array_length(first, 1)],
       last[1 + abs(hashtext('{{PREFIX}}last' || k)) % array_length(last, 1)],
       class_id, false,
       base + (1000 + k) * interval '1 ms', base + (1000 + k) * interval '1 ms'
FROM demo_clock, demo_names, (
    SELECT cl.id AS class_id,
           row_number() OVER (ORDER BY c.n, g) AS k
    FROM (VALUES {{CLASSES}}) AS c(n, name, level, size)
    JOIN academic_classes cl ON cl.name = c.name
    CROSS JOIN LATERAL generate_series(1, c.size) g
) s;

-- The demo student account is the first student, under the account's own name (the app
-- shows the record's name on their page and the account's in its header).
UPDATE students s
SET user_id = u.id,
    first_name = coalesce(nullif(u.first_name, ''), s.first_name),
    last_name = coalesce(nullif(u.last_name, ''), s.last_name)
FROM public.users u
WHERE u.email = 'student@{{MAIL}}' AND s.admission_number = '{{PREFIX}}0001';

-- Every (class, subject) pair has a teacher: subjects go round the teachers, shifted per
-- class so each teacher meets several classes.
INSERT INTO teacher_assignments (id, teacher_id, academic_class_id, subject_id, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(),
       (SELECT id FROM demo_teachers WHERE n = 1 + (s.n - 1 + (c.level - 1) * 2) % (SELECT count(*) FROM demo_teachers)),
       cl.id, sub.id, false,
       base + (200 + c.n * 20 + s.n) * interval '1 ms', base + (200 + c.n * 20 + s.n) * interval '1 ms'
FROM demo_clock,
     (VALUES {{CLASSES}}) AS c(n, name, level, size)
     JOIN academic_classes cl ON cl.name = c.name,
     (VALUES {{SUBJECTS}}) AS s(n, name, code, department)
     JOIN subjects sub ON sub.code = s.code;

-- Department members: the teachers of its subjects.
INSERT INTO department_teachers (department_id, teacher_id, position)
SELECT department_id, teacher_id, (row_number() OVER (PARTITION BY department_id ORDER BY teacher_id))::int - 1
FROM (SELECT DISTINCT sub.department_id, a.teacher_id
      FROM teacher_assignments a JOIN subjects sub ON sub.id = a.subject_id) m;

-- Term 1: an exam per assignment, made by its teacher.
INSERT INTO exams (id, exam_session_id, name, subject_id, academic_class_id, teacher_id, max_mark, is_deleted, created_by, created_at, updated_at)
SELECT gen_random_uuid(), es.id, sub.name || ' - ' || cl.name, sub.id, cl.id, a.teacher_id, 100, false,
       t.user_id, a.created_at + interval '10 days', a.created_at + interval '10 days'
FROM teacher_assignments a
JOIN subjects sub ON sub.id = a.subject_id
JOIN academic_classes cl ON cl.id = a.academic_class_id
JOIN demo_teachers t ON t.id = a.teacher_id
JOIN exam_sessions es ON es.term = '1'
JOIN academic_sessions s ON s.id = es.academic_session_id AND s.is_active;

-- Marks for every term-1 exam but those of the first teacher's in the second class: the
-- demo teacher has a sheet left to fill in. A mark follows the student's ability (about
-- ±9 points between students), the subject's difficulty (±4) and the day (±4 points of
-- noise) around 62, so class averages land near 60-65 with a spread of about 10; from 12
-- to 99; symbols by the grading scale above. Hashes stand in for random numbers, so the
-- demo is the same every time.
INSERT INTO marks (id, exam_id, studentadmissionnumber, mark, symbol, comment, is_deleted, created_by, created_at, updated_at)
SELECT gen_random_uuid(), e.id, st.admission_number, m.mark,
       CASE WHEN m.mark >= 80 THEN 'A' WHEN m.mark >= 70 THEN 'B' WHEN m.mark >= 60 THEN 'C'
            WHEN m.mark >= 50 THEN 'D' WHEN m.mark >= 40 THEN 'E' ELSE 'F' END,
       NULL, false, e.created_by, e.created_at + interval '5 days', e.created_at + interval '5 days'
FROM exams e
JOIN students st ON st.academic_class_id = e.academic_class_id
JOIN academic_classes cl ON cl.id = e.academic_class_id
JOIN subjects sub ON sub.id = e.subject_id
CROSS JOIN LATERAL (
    SELECT least(99, greatest(12, round(
        62
        -- ability: the mean of three uniforms in [-0.5, 0.5] (bell-shaped), times 55
        + 55 * ((abs(hashtext(st.admission_number || ':a1')) % 1000
                 + abs(hashtext(st.admission_number || ':a2')) % 1000
                 + abs(hashtext(st.admission_number || ':a3')) % 1000) / 3000.0 - 0.5)
        -- difficulty of the subject: uniform in [-0.5, 0.5], times 16
        - 16 * (abs(hashtext(sub.code || ':difficulty')) % 1000 / 1000.0 - 0.5)
        -- the day's noise: the sum of two uniforms in [-0.5, 0.5], times 10
        + 10 * ((abs(hashtext(st.admission_number || e.name || ':n1')) % 1000
                 + abs(hashtext(st.admission_number || e.name || ':n2')) % 1000) / 1000.0 - 1.0)
    )))::int AS mark
) m
WHERE NOT (e.teacher_id = (SELECT id FROM demo_teachers WHERE n = 1)
           AND cl.name = (SELECT name FROM (VALUES {{CLASSES}}) AS c(n, name, level, size) WHERE n = 2));

-- School-wide comments per grade, and one teacher's own.
INSERT INTO teacher_grade_comments (id, teacher_id, grade, min_mark, max_mark, comment, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(), NULL, g.grade, g.min_mark, g.max_mark, g.comment, false,
       base + (90 + g.n) * interval '1 ms', base + (90 + g.n) * interval '1 ms'
FROM demo_clock, (VALUES
    (1, 'A', 80, 100, 'Excellent work; keep it up.'),
    (2, 'B', 70, 79, 'Very good; a little more practice will make it excellent.'),
    (3, 'C', 60, 69, 'Good; steady effort is showing.'),
    (4, 'D', 50, 59, 'Fair; revise the weaker topics.'),
    (5, 'E', 40, 49, 'Below the pass mark next time without more work.'),
    (6, 'F', 0, 39, 'Needs support; please see the subject teacher.')
) AS g(n, grade, min_mark, max_mark, comment);

INSERT INTO teacher_grade_comments (id, teacher_id, grade, min_mark, max_mark, comment, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(), t.id, 'A', 90, 100, 'Outstanding: a joy to teach.', false,
       base + 99 * interval '1 ms', base + 99 * interval '1 ms'
FROM demo_clock, demo_teachers t WHERE t.n = 1;

-- The active session's enrollments: each student's class this year.
INSERT INTO enrollments (student_id, academic_class_id, academic_session_id, status)
SELECT st.id, st.academic_class_id, a.id, 'active'
FROM students st JOIN academic_sessions a ON a.is_active AND NOT a.is_deleted
WHERE st.academic_class_id IS NOT NULL AND NOT st.is_deleted;

-- A term of attendance, school days (Monday to Friday) from the first day of the active
-- session up to yesterday (at most to the end of term 1): most students are away a day or
-- two a term and late now and then; about one in twelve is often away (one day in six).
INSERT INTO attendance (id, student_id, academic_class_id, date, status, note, is_deleted, created_at, updated_at)
SELECT gen_random_uuid(), st.id, st.academic_class_id, d::date,
       CASE WHEN u < p THEN 'absent' WHEN u < p + 0.03 THEN 'late' WHEN u < p + 0.04 THEN 'excused' ELSE 'present' END,
       CASE WHEN u >= p + 0.03 AND u < p + 0.04 THEN 'Medical appointment' END,
       false, d + interval '8 hours 30 minutes', d + interval '8 hours 30 minutes'
FROM academic_sessions a
JOIN students st ON st.academic_class_id IS NOT NULL AND NOT st.is_deleted
CROSS JOIN LATERAL generate_series(a.start_date, least(current_date - 1, date '2026-12-18')::timestamptz, interval '1 day') d
CROSS JOIN LATERAL (
    SELECT abs(hashtext(st.admission_number || d::date::text)) % 1000 / 1000.0 AS u,
           CASE WHEN abs(hashtext(st.admission_number || ':often away')) % 12 = 0 THEN 0.16 ELSE 0.02 END AS p
) r
WHERE a.is_active AND extract(isodow FROM d) < 6;

-- The class teacher's remark on each term-1 report card, from the student's term: their
-- average mark and how often they were away.
INSERT INTO report_remarks (exam_session_id, student_id, remark, created_at, updated_at)
SELECT es.id, st.id,
       CASE
           WHEN t.away > 0.1 THEN st.first_name || ' has missed too many days this term, and it shows in the marks. '
                || 'Regular attendance next term will make the difference; please talk to me about any difficulty.'
           WHEN t.average >= 72 THEN st.first_name || ' has had an excellent term: focused, curious and a help to others. '
                || 'Keep reading widely and aim for the top grades next term.'
           WHEN t.average >= 60 THEN st.first_name || ' works steadily and takes part well in class. '
                || 'More care with homework deadlines would lift the marks further.'
           WHEN t.average >= 50 THEN st.first_name || ' is making progress but is not yet working to full potential. '
                || 'Short daily revision of the weaker subjects is the next step.'
           ELSE st.first_name || ' has found this term hard. Extra support sessions are offered on Tuesdays; '
                || 'I would like to meet at home-school evening to agree a plan.'
       END,
       es.end_date, es.end_date
FROM exam_sessions es
JOIN academic_sessions a ON a.id = es.academic_session_id AND a.is_active
JOIN students st ON NOT st.is_deleted
CROSS JOIN LATERAL (
    SELECT (SELECT avg(m.mark) FROM marks m JOIN exams e ON e.id = m.exam_id
            WHERE e.exam_session_id = es.id AND m.studentadmissionnumber = st.admission_number) AS average,
           (SELECT count(*) FILTER (WHERE status = 'absent')::float8 / greatest(count(*), 1)
            FROM attendance WHERE student_id = st.id) AS away
) t
WHERE es.term = '1' AND t.average IS NOT NULL;
