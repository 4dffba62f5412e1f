-- Webhook subscriptions (API.md 9), the events waiting to be delivered to each, and the
-- record of every attempt. Subscriptions emit no events of their own.
CREATE TABLE webhooks (
    id              uuid PRIMARY KEY,
    url             text NOT NULL,
    event_types     text[] NOT NULL,
    description     text NOT NULL DEFAULT '',
    secret          text NOT NULL,
    is_active       boolean NOT NULL DEFAULT true,
    disabled_reason text,
    -- The number of the last event queued for this subscription: later ones come next.
    queued_through  bigint NOT NULL DEFAULT 0,
    -- Since when every attempt has failed (null: the last one succeeded, or none yet).
    failing_since   timestamptz,
    created_by      uuid,
    updated_by      uuid,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- One row per (subscription, event) still to deliver. The head of each record's row
-- (lowest `seq` of a `record_id`) is the only one sent: per-record order.
CREATE TABLE webhook_queue (
    webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    event_id   uuid NOT NULL,
    record_id  uuid NOT NULL,
    attempts   integer NOT NULL DEFAULT 0,
    next_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (webhook_id, seq)
);
CREATE INDEX webhook_queue_record ON webhook_queue (webhook_id, record_id, seq);
CREATE INDEX webhook_queue_due ON webhook_queue (next_at);

CREATE TABLE webhook_deliveries (
    id          uuid PRIMARY KEY,
    webhook_id  uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id    uuid NOT NULL,
    attempt     integer NOT NULL,
    status_code integer,
    error       text,
    at          timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (webhook_id, at);

-- Numbering at commit (see `events_history`) now also signals the relays when the school
-- has an active subscription: its `public.webhook_pending` row is made due, and a NOTIFY
-- wakes them at once (delivered at commit, once per transaction and school).
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
