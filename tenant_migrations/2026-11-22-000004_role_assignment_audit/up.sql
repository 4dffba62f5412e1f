-- Role assignments get the audit columns every other school table has (who changed a
-- record, and when), so they are written like the rest.
ALTER TABLE user_role_assignments
    ADD COLUMN updated_by uuid,
    ADD COLUMN updated_at timestamptz NOT NULL DEFAULT clock_timestamp();
