-- Servers cache each token user's row (active flag, token version, school, names); every
-- update or delete of a user tells them which one to drop. A truncate drops them all.
CREATE FUNCTION notify_user_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('users', '*');
    ELSE
        PERFORM pg_notify('users', OLD.id::text);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER users_changed AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION notify_user_changed();
CREATE TRIGGER users_truncated AFTER TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION notify_user_changed();
