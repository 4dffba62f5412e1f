DROP TABLE webhook_deliveries;
DROP TABLE webhook_queue;
DROP TABLE webhooks;
CREATE OR REPLACE FUNCTION number_event() RETURNS trigger LANGUAGE plpgsql AS $body$
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
