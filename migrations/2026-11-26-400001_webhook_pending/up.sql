-- The schools that have webhook work to do (API.md 9): a row is made (or made due) by the
-- commit of an event of a school with an active subscription, and removed by the relay
-- once the school has nothing left to send. Relays read only this table to find work, so
-- an idle school costs nothing. `leased_until`/`leased_by`: the relay working on the
-- school (one at a time; a lease that ran out, its relay gone, is taken over).
CREATE TABLE webhook_pending (
    schema_name  text PRIMARY KEY,
    due_at       timestamptz NOT NULL DEFAULT now(),
    leased_until timestamptz,
    leased_by    uuid
);
CREATE INDEX webhook_pending_due ON webhook_pending (due_at);
