-- A deleted session is never active: the API refuses it, and the table holds to it too.
UPDATE academic_sessions SET is_active = false WHERE is_active AND is_deleted;
ALTER TABLE academic_sessions
    ADD CONSTRAINT academic_sessions_deleted_inactive CHECK (NOT (is_active AND is_deleted));
