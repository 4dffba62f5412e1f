-- The class teacher's remark on a student's report card for an exam session (issue 39):
-- one live remark per (exam session, student), printed on the card under the marks.
CREATE TABLE report_remarks (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    exam_session_id uuid NOT NULL REFERENCES exam_sessions (id),
    student_id      uuid NOT NULL REFERENCES students (id),
    remark          text NOT NULL CHECK (char_length(remark) BETWEEN 1 AND 2000),
    is_deleted      boolean NOT NULL DEFAULT false,
    created_by      uuid,
    updated_by      uuid,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX report_remarks_live ON report_remarks (exam_session_id, student_id)
    WHERE NOT is_deleted;
CREATE INDEX report_remarks_student ON report_remarks (student_id);
