ALTER TABLE user_role_assignments DROP COLUMN updated_at, DROP COLUMN updated_by;
