-- The number of live rows of the tables that grow with a school (students, attendance),
-- kept by statement triggers in the writing transaction, so that an unfiltered list's
-- count reads one row here instead of counting every live row (4-5 ms at 50,000
-- students, a second at millions of attendance records). Lists count rows whenever a
-- table has no row here. Derived data: archives leave it out, a restore rebuilds it (the
-- rows start at 0 and the triggers count what is loaded).
--
-- Only on plain PostgreSQL: Citus refuses statement-level triggers on a distributed
-- table, so there the table stays empty and lists count rows as before.
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
