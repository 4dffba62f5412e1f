-- Guardians (API.md 11): a parent or carer, optionally a user of the school, linked to the
-- students they answer for. A user holding the `guardian` role reads only the records of
-- the students linked to their live guardian records.
CREATE TABLE guardians (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    first_name   varchar(150) NOT NULL CHECK (char_length(first_name) >= 1),
    last_name    varchar(150) NOT NULL CHECK (char_length(last_name) >= 1),
    email        varchar(254),
    phone        varchar(32),
    relationship varchar(50) NOT NULL DEFAULT '',
    user_id      uuid,
    is_deleted   boolean NOT NULL DEFAULT false,
    created_by   uuid,
    updated_by   uuid,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
-- Every request of a guardian user looks its children up by user.
CREATE INDEX guardians_user ON guardians (user_id) WHERE NOT is_deleted;

CREATE TABLE guardian_students (
    guardian_id uuid NOT NULL REFERENCES guardians (id) ON DELETE CASCADE,
    student_id  uuid NOT NULL REFERENCES students (id),
    position    integer NOT NULL,
    PRIMARY KEY (guardian_id, student_id)
);
CREATE INDEX guardian_students_student ON guardian_students (student_id);
