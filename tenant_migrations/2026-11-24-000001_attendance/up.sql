-- One live record per (student, date); `academic_class_id` is the student's class that day.
CREATE TABLE attendance (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    student_id        uuid NOT NULL REFERENCES students (id),
    academic_class_id uuid REFERENCES academic_classes (id),
    date              date NOT NULL,
    status            text NOT NULL CHECK (status IN ('present', 'absent', 'late', 'excused')),
    note              text CHECK (char_length(note) <= 500),
    is_deleted        boolean NOT NULL DEFAULT false,
    created_by        uuid,
    updated_by        uuid,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
-- A class's take upserts on this index (ON CONFLICT ... WHERE NOT is_deleted).
CREATE UNIQUE INDEX attendance_live_student_date ON attendance (student_id, date) WHERE NOT is_deleted;
CREATE INDEX attendance_class_date ON attendance (academic_class_id, date) WHERE NOT is_deleted;

-- The permission codenames this school has been given: a codename added to the catalogue
-- later is granted once to the default roles that have it by default (auth::roles).
CREATE TABLE known_permissions (
    codename    text PRIMARY KEY,
    recorded_at timestamptz NOT NULL DEFAULT now()
);

-- Schools that exist already were given the catalogue as it stood before this migration;
-- what came after it (attendance, report cards) reaches their default roles at `migrate`.
INSERT INTO known_permissions (codename)
SELECT action || '_' || resource
  FROM unnest(ARRAY['view', 'add', 'change', 'delete']) AS action,
       unnest(ARRAY['academicsession', 'examsession', 'exam', 'mark', 'department', 'subject',
                    'academicclass', 'student', 'teacherprofile', 'teacherassignment',
                    'teachergradecomment', 'sessionsetup', 'generalsettings', 'academicsettings',
                    'reportsettings', 'schoolrole', 'userroleassignment']) AS resource;
