-- Servers cache each API key's record by its keyed hash; a change of what makes a key
-- usable or what it may do (revoked, expiry, scope, read-only, name, hash) or a delete
-- tells them which one to drop. `last_used_at`, written at most once a minute per key
-- and server, tells nobody. A truncate drops them all.
CREATE FUNCTION notify_api_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('api_keys', '*');
    ELSE
        PERFORM pg_notify('api_keys', OLD.key_hash);
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER api_keys_changed AFTER UPDATE ON api_keys
    FOR EACH ROW
    WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
       OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
       OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
       OR OLD.read_only IS DISTINCT FROM NEW.read_only
       OR OLD.name IS DISTINCT FROM NEW.name
       OR OLD.key_hash IS DISTINCT FROM NEW.key_hash)
    EXECUTE FUNCTION notify_api_key_changed();
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_api_key_changed();
CREATE TRIGGER api_keys_truncated AFTER TRUNCATE ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION notify_api_key_changed();
