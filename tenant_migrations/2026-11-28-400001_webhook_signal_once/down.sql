-- Back to signalling at every commit (tenant migration `webhooks`).
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
