-- A commit signals the relays only when the school is not already due: it makes the
-- school's `public.webhook_pending` row and sends the NOTIFY only if there is no row, or
-- its row waits for a later retry. While the row is due, a relay is on the school (or
-- about to be) and finds the commit's events itself, so a busy school's commits write
-- nothing to the public schema and send no NOTIFY (whose database-wide commit lock
-- serialized every notifying commit, fsync included). The relay lets go of a school
-- under the school's numbering lock (`webhook_queue::settle`), so a commit either sees
-- the row gone and signals, or is seen by the relay's last look.
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
