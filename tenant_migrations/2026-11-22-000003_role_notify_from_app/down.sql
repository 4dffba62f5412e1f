CREATE FUNCTION notify_school_roles() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('school_roles', TG_TABLE_SCHEMA);
    RETURN NULL;
END
$$;
CREATE TRIGGER school_roles_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON school_roles
    FOR EACH STATEMENT EXECUTE FUNCTION notify_school_roles();
CREATE TRIGGER user_role_assignments_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON user_role_assignments
    FOR EACH STATEMENT EXECUTE FUNCTION notify_school_roles();
