-- A student's class in one academic session: one live enrollment per (student, session).
-- `students.academic_class_id` is the class of the active session's enrollment.
CREATE TABLE enrollments (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    student_id          uuid NOT NULL REFERENCES students (id) ON DELETE CASCADE,
    academic_class_id   uuid NOT NULL REFERENCES academic_classes (id),
    academic_session_id uuid NOT NULL REFERENCES academic_sessions (id),
    status              text NOT NULL DEFAULT 'active'
                        CHECK (status IN ('active', 'completed', 'withdrawn')),
    is_deleted          boolean NOT NULL DEFAULT false,
    created_by          uuid,
    updated_by          uuid,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX enrollments_live_student_session ON enrollments (student_id, academic_session_id)
    WHERE NOT is_deleted;
CREATE INDEX enrollments_session_class ON enrollments (academic_session_id, academic_class_id)
    WHERE NOT is_deleted;

-- Which session a rollover made from which: one rollover per session (the second is refused).
CREATE TABLE rollovers (
    from_session_id uuid PRIMARY KEY REFERENCES academic_sessions (id),
    to_session_id   uuid NOT NULL REFERENCES academic_sessions (id),
    created_by      uuid,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Today's classes are the active session's enrollments.
INSERT INTO enrollments (student_id, academic_class_id, academic_session_id, status)
SELECT s.id, s.academic_class_id, a.id, 'active'
  FROM students s
  JOIN academic_sessions a ON a.is_active AND NOT a.is_deleted
 WHERE s.academic_class_id IS NOT NULL AND NOT s.is_deleted;
