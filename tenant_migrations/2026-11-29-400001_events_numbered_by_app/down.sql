-- Back to numbering by the deferred trigger (tenant migration `webhook_signal_once`).
ALTER TABLE events DROP COLUMN tx_position;
CREATE OR REPLACE FUNCTION number_event() RETURNS trigger LANGUAGE plpgsql AS $body$
DECLARE
    subscribed boolean;
BEGIN
    IF NEW.seq IS NOT NULL THEN
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext(TG_TABLE_SCHEMA || '.events'));
    EXECUTE format(
        'UPDATE %1$I.events SET occurred_at = clock_timestamp(), '
        'seq = (SELECT coalesce(max(seq), 0) + 1 FROM %1$I.events) WHERE id = $1',
        TG_TABLE_SCHEMA) USING NEW.id;
    IF EXISTS (SELECT FROM public.webhook_pending
                WHERE schema_name = TG_TABLE_SCHEMA AND due_at <= now()) THEN
        RETURN NULL;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT FROM %I.webhooks WHERE is_active)', TG_TABLE_SCHEMA)
        INTO subscribed;
    IF subscribed THEN
        INSERT INTO public.webhook_pending (schema_name, due_at)
        VALUES (TG_TABLE_SCHEMA, now())
        ON CONFLICT (schema_name) DO UPDATE SET due_at = LEAST(webhook_pending.due_at, now());
        PERFORM pg_notify('webhook_pending', TG_TABLE_SCHEMA);
    END IF;
    RETURN NULL;
END
$body$;
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
