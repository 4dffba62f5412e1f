-- Events are numbered by the application, not by a trigger (issue 40): a stock Citus
-- refuses triggers on distributed tables, and the trigger paid an UPDATE and the webhook
-- checks per event row. A writing transaction now numbers all of its events in one
-- statement just before its COMMIT, under the same advisory lock, and signals the relays
-- once (`TenantConn`'s commit path, src/tenancy/conn.rs). `tx_position` is an event's
-- place among its transaction's events until it is numbered (then null): the order the
-- numbering follows.
-- (On Citus the events migration made no trigger, only its function.)
DO $migration$
BEGIN
    IF EXISTS (SELECT FROM pg_trigger
                WHERE tgname = 'events_numbered_at_commit'
                  AND tgrelid = 'events'::regclass) THEN
        DROP TRIGGER events_numbered_at_commit ON events;
    END IF;
END
$migration$;
DROP FUNCTION number_event();
ALTER TABLE events ADD COLUMN tx_position integer;
