-- The school schema as it is today, in one script: what a new school is created from.
-- Existing schools reach the same schema by replaying tenant_migrations/ (the history);
-- `TENANT_BASELINE` in src/db/migrations.rs names the last migration this script
-- contains, and a new school records every version up to it as applied. A test
-- (tests/api/fleet/baseline.rs) compares the catalog this script makes with the one the
-- history makes, so the two cannot drift: a new tenant migration goes into its folder
-- AND into this script, and `through` moves to it.
--
-- Run with `search_path` set to the new school's schema only, so every name below lands
-- in it; platform tables and the trigram operator class are named `public.*`.
-- "Live" means not soft-deleted: uniqueness rules hold among live records only.
-- `created_at` defaults to clock_timestamp(), not now(): rows created in one transaction
-- keep their order (lists are ordered by created_at, then id). User ids (`user_id`,
-- `created_by`, ...) name rows of public.users, checked by the application, not by
-- foreign keys (a key into public.users from every school would put thousands of
-- triggers on that one table). Each `<table>_search` index is a trigram index over
-- exactly the columns `?search=` matches. The only triggers keep `live_counts`, and only
-- where Citus is absent: it refuses statement triggers on distributed tables.

-- diesel's table of applied migrations, as diesel creates it.
CREATE TABLE __diesel_schema_migrations (
    version VARCHAR(50) PRIMARY KEY NOT NULL,
    run_on  TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
);

CREATE TABLE academic_sessions (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       varchar(255) NOT NULL CHECK (char_length(name) >= 1),
    start_date timestamptz NOT NULL,
    end_date   timestamptz NOT NULL,
    is_active  boolean NOT NULL DEFAULT false,
    is_deleted boolean NOT NULL DEFAULT false,
    created_by uuid,
    updated_by uuid,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (end_date >= start_date),
    -- A deleted session is never active.
    CONSTRAINT academic_sessions_deleted_inactive CHECK (NOT (is_active AND is_deleted))
);
-- At most one active session per school.
CREATE UNIQUE INDEX academic_sessions_one_active ON academic_sessions ((true)) WHERE is_active;
CREATE INDEX academic_sessions_search ON academic_sessions USING gin (name public.gin_trgm_ops);

CREATE TABLE exam_sessions (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    academic_session_id uuid NOT NULL REFERENCES academic_sessions (id),
    name                varchar(255) NOT NULL CHECK (char_length(name) >= 1),
    term                varchar(50) NOT NULL CHECK (char_length(term) >= 1),
    start_date          timestamptz,
    end_date            timestamptz,
    is_deleted          boolean NOT NULL DEFAULT false,
    created_by          uuid,
    updated_by          uuid,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CHECK (end_date IS NULL OR start_date IS NULL OR end_date >= start_date)
);
CREATE INDEX exam_sessions_academic_session_id ON exam_sessions (academic_session_id);
CREATE INDEX exam_sessions_search ON exam_sessions USING gin (name public.gin_trgm_ops, term public.gin_trgm_ops);

CREATE TABLE academic_classes (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       varchar(255) NOT NULL CHECK (char_length(name) >= 1),
    level      integer CHECK (level BETWEEN 0 AND 100),
    is_deleted boolean NOT NULL DEFAULT false,
    created_by uuid,
    updated_by uuid,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX academic_classes_live_name ON academic_classes (name) WHERE NOT is_deleted;
CREATE INDEX academic_classes_search ON academic_classes USING gin (name public.gin_trgm_ops);

CREATE TABLE teacher_profiles (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL UNIQUE,
    staff_number varchar(50),
    is_deleted   boolean NOT NULL DEFAULT false,
    created_by   uuid,
    updated_by   uuid,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX teacher_profiles_search ON teacher_profiles USING gin (staff_number public.gin_trgm_ops);

CREATE TABLE departments (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       varchar(255) NOT NULL CHECK (char_length(name) >= 1),
    hod_id     uuid NOT NULL REFERENCES teacher_profiles (id),
    subject_id uuid NOT NULL,
    is_deleted boolean NOT NULL DEFAULT false,
    created_by uuid,
    updated_by uuid,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX departments_search ON departments USING gin (name public.gin_trgm_ops);

CREATE TABLE subjects (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name          varchar(255) NOT NULL CHECK (char_length(name) >= 1),
    code          varchar(50) NOT NULL CHECK (char_length(code) >= 1),
    department_id uuid REFERENCES departments (id),
    is_deleted    boolean NOT NULL DEFAULT false,
    created_by    uuid,
    updated_by    uuid,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX subjects_live_code ON subjects (code) WHERE NOT is_deleted;
CREATE INDEX subjects_search ON subjects USING gin (name public.gin_trgm_ops, code public.gin_trgm_ops);
ALTER TABLE departments
    ADD CONSTRAINT departments_subject_id_fkey FOREIGN KEY (subject_id) REFERENCES subjects (id);

CREATE TABLE department_teachers (
    department_id uuid NOT NULL REFERENCES departments (id) ON DELETE CASCADE,
    teacher_id    uuid NOT NULL REFERENCES teacher_profiles (id),
    position      integer NOT NULL,
    PRIMARY KEY (department_id, teacher_id)
);
CREATE INDEX department_teachers_teacher_id ON department_teachers (teacher_id);

CREATE TABLE students (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    admission_number  varchar(50) NOT NULL CHECK (char_length(admission_number) >= 1),
    first_name        varchar(150) NOT NULL CHECK (char_length(first_name) >= 1),
    last_name         varchar(150) NOT NULL CHECK (char_length(last_name) >= 1),
    academic_class_id uuid REFERENCES academic_classes (id),
    user_id           uuid,
    is_deleted        boolean NOT NULL DEFAULT false,
    created_by        uuid,
    updated_by        uuid,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX students_live_admission_number ON students (admission_number) WHERE NOT is_deleted;
-- Lists are ordered by (created_at, id): a first page of live students reads 50 index
-- entries, and counting them is an index-only scan.
CREATE INDEX students_list_order ON students (created_at, id) WHERE NOT is_deleted;
CREATE INDEX students_search ON students
    USING gin (admission_number public.gin_trgm_ops, first_name public.gin_trgm_ops, last_name public.gin_trgm_ops);

CREATE TABLE teacher_assignments (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    teacher_id        uuid NOT NULL REFERENCES teacher_profiles (id),
    academic_class_id uuid NOT NULL REFERENCES academic_classes (id),
    subject_id        uuid NOT NULL REFERENCES subjects (id),
    is_deleted        boolean NOT NULL DEFAULT false,
    created_by        uuid,
    updated_by        uuid,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX teacher_assignments_live_triple
    ON teacher_assignments (teacher_id, academic_class_id, subject_id) WHERE NOT is_deleted;

CREATE TABLE exams (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    exam_session_id   uuid NOT NULL REFERENCES exam_sessions (id),
    name              varchar(255) NOT NULL CHECK (char_length(name) >= 1),
    subject_id        uuid NOT NULL REFERENCES subjects (id),
    academic_class_id uuid NOT NULL REFERENCES academic_classes (id),
    teacher_id        uuid REFERENCES teacher_profiles (id),
    max_mark          integer NOT NULL DEFAULT 100 CHECK (max_mark BETWEEN 1 AND 1000),
    is_deleted        boolean NOT NULL DEFAULT false,
    created_by        uuid,
    updated_by        uuid,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX exams_live_session_subject_class
    ON exams (exam_session_id, subject_id, academic_class_id) WHERE NOT is_deleted;
CREATE INDEX exams_search ON exams USING gin (name public.gin_trgm_ops);

CREATE TABLE marks (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    exam_id                uuid NOT NULL REFERENCES exams (id),
    studentadmissionnumber text NOT NULL CHECK (char_length(studentadmissionnumber) >= 1),
    mark                   integer,
    symbol                 varchar(255),
    comment                text,
    is_deleted             boolean NOT NULL DEFAULT false,
    created_by             uuid,
    updated_by             uuid,
    created_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX marks_live_exam_student ON marks (exam_id, studentadmissionnumber) WHERE NOT is_deleted;
CREATE INDEX marks_search ON marks USING gin (studentadmissionnumber public.gin_trgm_ops);

CREATE TABLE teacher_grade_comments (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    teacher_id uuid REFERENCES teacher_profiles (id),
    grade      varchar(10) NOT NULL CHECK (char_length(grade) >= 1),
    min_mark   integer NOT NULL,
    max_mark   integer NOT NULL,
    comment    text NOT NULL CHECK (char_length(comment) >= 1),
    is_deleted boolean NOT NULL DEFAULT false,
    created_by uuid,
    updated_by uuid,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK (max_mark >= min_mark)
);
CREATE INDEX teacher_grade_comments_search ON teacher_grade_comments
    USING gin (grade public.gin_trgm_ops, comment public.gin_trgm_ops);

CREATE TABLE session_setups (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    session_type        text NOT NULL CHECK (session_type IN ('exam_session', 'academic_session')),
    academic_session_id uuid REFERENCES academic_sessions (id),
    exam_session_id     uuid REFERENCES exam_sessions (id),
    status              text NOT NULL DEFAULT 'not_started'
        CHECK (status IN ('not_started', 'pending', 'completed')),
    current_step        integer NOT NULL DEFAULT 0,
    created_by          uuid,
    updated_by          uuid,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE general_settings (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    school_name varchar(255) NOT NULL CHECK (char_length(school_name) >= 1),
    address     text NOT NULL,
    phone       text NOT NULL,
    email       varchar(254) NOT NULL CHECK (char_length(email) >= 1),
    logo        text NOT NULL DEFAULT '',
    created_by  uuid,
    updated_by  uuid,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE academic_settings (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    pass_mark         integer NOT NULL DEFAULT 50 CHECK (pass_mark BETWEEN 0 AND 1000),
    max_mark          integer NOT NULL DEFAULT 100 CHECK (max_mark BETWEEN 1 AND 1000),
    terms_per_session integer NOT NULL DEFAULT 3 CHECK (terms_per_session BETWEEN 1 AND 6),
    grading_scale     jsonb NOT NULL DEFAULT '[]',
    created_by        uuid,
    updated_by        uuid,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

-- One row per school: the primary key can only be `true`.
CREATE TABLE report_settings (
    id                    boolean PRIMARY KEY DEFAULT true CHECK (id),
    show_position         boolean NOT NULL DEFAULT true,
    show_class_average    boolean NOT NULL DEFAULT true,
    show_teacher_comments boolean NOT NULL DEFAULT true,
    principal_signature   text NOT NULL DEFAULT '',
    footer_text           text NOT NULL DEFAULT '',
    updated_by            uuid,
    updated_at            timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE school_roles (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name        varchar(100) NOT NULL UNIQUE CHECK (char_length(name) >= 1),
    permissions text[] NOT NULL DEFAULT '{}',
    created_by  uuid,
    updated_by  uuid,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX school_roles_search ON school_roles USING gin (name public.gin_trgm_ops);

CREATE TABLE user_role_assignments (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id    uuid NOT NULL,
    role_id    uuid NOT NULL REFERENCES school_roles (id),
    created_by uuid,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_by uuid,
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (user_id, role_id)
);
CREATE INDEX user_role_assignments_role_id ON user_role_assignments (role_id);

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

-- Live rows of the tables that grow with a school, kept by statement triggers so an
-- unfiltered list reads its count here (tenant_migrations/2026-11-24-000002_live_counts).
-- Plain PostgreSQL only: on Citus the table stays empty and lists count rows.
CREATE TABLE live_counts (
    table_name text PRIMARY KEY,
    live       bigint NOT NULL CHECK (live >= 0)
);

-- Lists of live attendance records are ordered by (created_at, id), as students' are.
CREATE INDEX attendance_list_order ON attendance (created_at, id) WHERE NOT is_deleted;

DO $migration$
BEGIN
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RETURN;
    END IF;
    -- The change in live rows of one statement, from its transition tables. The counter is
    -- named by the trigger's own schema, whatever the session's search_path.
    CREATE FUNCTION count_live_rows() RETURNS trigger LANGUAGE plpgsql AS $body$
    DECLARE
        delta bigint := 0;
    BEGIN
        IF TG_OP = 'TRUNCATE' THEN
            EXECUTE format('UPDATE %I.live_counts SET live = 0 WHERE table_name = $1',
                           TG_TABLE_SCHEMA) USING TG_TABLE_NAME;
            RETURN NULL;
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            SELECT delta + count(*) INTO delta FROM new_rows WHERE NOT is_deleted;
        END IF;
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
            SELECT delta - count(*) INTO delta FROM old_rows WHERE NOT is_deleted;
        END IF;
        IF delta <> 0 THEN
            EXECUTE format('UPDATE %I.live_counts SET live = live + $1 WHERE table_name = $2',
                           TG_TABLE_SCHEMA) USING delta, TG_TABLE_NAME;
        END IF;
        RETURN NULL;
    END
    $body$;

    CREATE TRIGGER students_live_insert AFTER INSERT ON students
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_live_rows();
    CREATE TRIGGER students_live_update AFTER UPDATE ON students
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION count_live_rows();
    CREATE TRIGGER students_live_delete AFTER DELETE ON students
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_live_rows();
    CREATE TRIGGER students_live_truncate AFTER TRUNCATE ON students
        FOR EACH STATEMENT EXECUTE FUNCTION count_live_rows();

    CREATE TRIGGER attendance_live_insert AFTER INSERT ON attendance
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_live_rows();
    CREATE TRIGGER attendance_live_update AFTER UPDATE ON attendance
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION count_live_rows();
    CREATE TRIGGER attendance_live_delete AFTER DELETE ON attendance
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_live_rows();
    CREATE TRIGGER attendance_live_truncate AFTER TRUNCATE ON attendance
        FOR EACH STATEMENT EXECUTE FUNCTION count_live_rows();

    -- The triggers' locks keep writers out until this transaction ends: nothing written
    -- meanwhile is missed or counted twice.
    INSERT INTO live_counts (table_name, live)
    SELECT 'students', count(*) FROM students WHERE NOT is_deleted
    UNION ALL
    SELECT 'attendance', count(*) FROM attendance WHERE NOT is_deleted;
END
$migration$;

-- 2026-11-26-200001_oneroster
-- OneRoster 1.2 (issue 37), in the school's schema so it moves with the school.

-- Integration clients: OAuth 2.0 client credentials. The secret is kept only as its keyed
-- hash; revoking sets `revoked_at`, and the client's tokens stop working at once.
CREATE TABLE oauth_clients (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         varchar(100) NOT NULL CHECK (char_length(name) >= 1),
    client_id    text NOT NULL UNIQUE,
    secret_hash  text NOT NULL,
    scopes       text[] NOT NULL,
    created_by   uuid,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);

-- Access tokens issued to clients, by the keyed hash of the token.
CREATE TABLE oauth_tokens (
    token_hash text PRIMARY KEY,
    client_id  uuid NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scopes     text[] NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);

-- Gradebook categories (school-wide, so every class has them); sourcedIds as the client
-- chose them. A default set to start from.
CREATE TABLE gradebook_categories (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    sourced_id text NOT NULL UNIQUE CHECK (char_length(sourced_id) BETWEEN 1 AND 255),
    title      text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 255),
    weight     text CHECK (weight ~ '^-?[0-9]+(\.[0-9]+)?$'),
    is_deleted boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO gradebook_categories (sourced_id, title) VALUES
    ('exam', 'Exams'), ('test', 'Tests'), ('assignment', 'Assignments');

-- What OneRoster says of a line item (an exam) beyond the exam itself: the sourcedId a
-- client chose, its category, description, dates and value range.
CREATE TABLE line_items (
    exam_id          uuid PRIMARY KEY REFERENCES exams (id),
    sourced_id       text NOT NULL UNIQUE CHECK (char_length(sourced_id) BETWEEN 1 AND 255),
    category_id      uuid REFERENCES gradebook_categories (id),
    description      text,
    assign_date      timestamptz,
    due_date         timestamptz,
    result_value_min text CHECK (result_value_min ~ '^-?[0-9]+(\.[0-9]+)?$'),
    result_value_max text CHECK (result_value_max ~ '^-?[0-9]+(\.[0-9]+)?$')
);

-- The sourcedId a client chose for a result (a mark).
CREATE TABLE result_ids (
    mark_id    uuid PRIMARY KEY REFERENCES marks (id),
    sourced_id text NOT NULL UNIQUE CHECK (char_length(sourced_id) BETWEEN 1 AND 255)
);

-- A result's own fields, on the mark itself so every write of them goes through the
-- marks' store: the exact decimal score (as its canonical text), the OneRoster
-- scoreStatus, the score's date and a text score.
ALTER TABLE marks
    ADD COLUMN score text,
    ADD COLUMN score_status text,
    ADD COLUMN score_date date,
    ADD COLUMN text_score text;
-- Each check added on its own, under the name PostgreSQL gives an inline one: Citus
-- refuses ADD COLUMN with a constraint on a distributed table (schema-based sharding).
ALTER TABLE marks ADD CONSTRAINT marks_score_check CHECK (score ~ '^-?[0-9]+(\.[0-9]+)?$');
ALTER TABLE marks ADD CONSTRAINT marks_score_status_check CHECK (score_status IN
    ('exempt', 'fully graded', 'not submitted', 'partially graded', 'submitted'));
ALTER TABLE marks ADD CONSTRAINT marks_text_score_check CHECK (char_length(text_score) <= 255);
-- 2026-11-26-300001_enrollments
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
-- Events and history (tenant_migrations/2026-11-26-400001_events_history).
CREATE TABLE events (
    id          uuid PRIMARY KEY,
    seq         bigint UNIQUE,
    type        text NOT NULL,
    record_id   uuid NOT NULL,
    data        jsonb NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    -- The event's place among its transaction's events until it is numbered (then null).
    tx_position integer
);
CREATE INDEX events_occurred_at ON events (occurred_at);

-- `seq` is the feed's order, commit order: a writing transaction numbers all of its
-- events in one statement just before its COMMIT, under the school's advisory lock, and
-- signals the relays once, only when the school is not already due (tenant migrations
-- 2026-11-28-400001_webhook_signal_once, 2026-11-29-400001_events_numbered_by_app;
-- `TenantConn`'s commit path). No trigger: Citus refuses them on distributed tables.

-- One entry per create, update or delete of a record whose history is kept, at the time
-- of the statement (not of the transaction: the entries of one transaction keep their
-- order). No sequence: a school archive carries rows, not sequence positions. Entries
-- outlive their record.
CREATE TABLE history (
    id         uuid PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    resource   text NOT NULL,
    record_id  uuid NOT NULL,
    student_id uuid,
    actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'oauth_client', 'system')),
    actor_id   uuid NOT NULL,
    actor_name text NOT NULL,
    action     text NOT NULL CHECK (action IN ('created', 'updated', 'deleted')),
    changes    jsonb NOT NULL
);
CREATE INDEX history_record ON history (record_id, at);
CREATE INDEX history_student ON history (student_id, at) WHERE student_id IS NOT NULL;

-- Webhooks (tenant_migrations/2026-11-26-400002_webhooks).
CREATE TABLE webhooks (
    id              uuid PRIMARY KEY,
    url             text NOT NULL,
    event_types     text[] NOT NULL,
    description     text NOT NULL DEFAULT '',
    secret          text NOT NULL,
    is_active       boolean NOT NULL DEFAULT true,
    disabled_reason text,
    -- The number of the last event queued for this subscription: later ones come next.
    queued_through  bigint NOT NULL DEFAULT 0,
    -- Since when every attempt has failed (null: the last one succeeded, or none yet).
    failing_since   timestamptz,
    created_by      uuid,
    updated_by      uuid,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- One row per (subscription, event) still to deliver. The head of each record's row
-- (lowest `seq` of a `record_id`) is the only one sent: per-record order.
CREATE TABLE webhook_queue (
    webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    event_id   uuid NOT NULL,
    record_id  uuid NOT NULL,
    attempts   integer NOT NULL DEFAULT 0,
    next_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (webhook_id, seq)
);
CREATE INDEX webhook_queue_record ON webhook_queue (webhook_id, record_id, seq);
CREATE INDEX webhook_queue_due ON webhook_queue (next_at);

CREATE TABLE webhook_deliveries (
    id          uuid PRIMARY KEY,
    webhook_id  uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id    uuid NOT NULL,
    attempt     integer NOT NULL,
    status_code integer,
    error       text,
    at          timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (webhook_id, at);

-- 2026-11-26-500001_guardians
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

-- 2026-11-26-500002_disclosures
-- Disclosures (API.md 11; FERPA 34 CFR 99.32): each read of a student's records by a party
-- outside the school (an API key; an integration client), one row per student answered.
-- Written in batches after the read; no foreign key to students, so a batch never fails
-- on a student deleted since, and the record of what was shown outlives the student.
CREATE TABLE disclosures (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    student_id uuid NOT NULL,
    at         timestamptz NOT NULL,
    party_type text NOT NULL,
    party_id   uuid NOT NULL,
    party_name text NOT NULL,
    what       text NOT NULL
);
CREATE INDEX disclosures_student_at ON disclosures (student_id, at DESC, id DESC);

-- 2026-11-27-400001_report_remarks
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

