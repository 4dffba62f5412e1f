-- Every change to the school's records as an event (API.md 9), and the history of marks,
-- attendance, students and enrollments (API.md 11): both written by the data layer's write
-- path in the change's own transaction, so a rollback leaves neither and a commit never
-- lacks one.
--
-- `seq` is the feed's order: commit order. It is given at commit, by a deferred trigger
-- that numbers the transaction's events under the school's advisory lock, the last lock a
-- writing transaction takes (so it cannot deadlock), held only until the commit ends. A
-- number taken earlier (a sequence, or a column default) would follow the order of the
-- inserts, not of the commits, and a reader past a later number would skip an earlier one
-- still committing. Rows with a NULL `seq` exist only inside their uncommitted transaction.
CREATE TABLE events (
    id          uuid PRIMARY KEY,
    seq         bigint UNIQUE,
    type        text NOT NULL,
    record_id   uuid NOT NULL,
    data        jsonb NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_occurred_at ON events (occurred_at);

-- Numbers one event at its transaction's commit, after the ones before it. The table is
-- named by the trigger's own schema, whatever the session's search_path. An event that
-- already has its number (loaded from a school archive) keeps it.
CREATE FUNCTION number_event() RETURNS trigger LANGUAGE plpgsql AS $body$
BEGIN
    IF NEW.seq IS NOT NULL THEN
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext(TG_TABLE_SCHEMA || '.events'));
    EXECUTE format(
        'UPDATE %1$I.events SET occurred_at = clock_timestamp(), '
        'seq = (SELECT coalesce(max(seq), 0) + 1 FROM %1$I.events) WHERE id = $1',
        TG_TABLE_SCHEMA) USING NEW.id;
    RETURN NULL;
END
$body$;

-- Only events still to number queue the trigger: rows loaded with their number (a school
-- archive's restore) leave nothing pending, so the restore's later index builds can run.
-- Only on plain PostgreSQL: Citus refuses triggers on distributed tables, and a school
-- replaying this migration there (one made before it, or an archive's) is numbered by the
-- application from 2026-11-29-400001 on, which drops the trigger where it was made.
DO $migration$
BEGIN
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RETURN;
    END IF;
    CREATE CONSTRAINT TRIGGER events_numbered_at_commit AFTER INSERT ON events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.seq IS NULL)
        EXECUTE FUNCTION number_event();
END
$migration$;

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
