//! Numbering a transaction's events at its commit (issue 40): the one place an event gets
//! its `seq`, the feed's order. `TenantConn` runs it as the last statements before the
//! COMMIT of every transaction that wrote events (its only commit paths: `transaction`
//! at the outermost level, `finish` in transaction mode), so seq order is commit order.
//!
//! Why at commit and not at insert: a number taken earlier (a sequence, a default) would
//! follow the order of the inserts, and a reader past a later number would skip an
//! earlier one still committing. Why not a trigger (as until tenant migration
//! `2026-11-29-400001_events_numbered_by_app`): a stock Citus refuses triggers on
//! distributed tables, and the trigger paid an UPDATE and the webhook checks per row.

use diesel::{RunQueryDsl, connection::SimpleConnection, pg::PgConnection, sql_types};

use super::TenantConn;
use crate::db::commit_watch::NewEvent;

/// The school's numbering lock, then every unnumbered event of the transaction numbered
/// in one statement after the newest, in the order they were written (`tx_position`),
/// all stamped with the time the lock was had (read on the clock after the lock, so the
/// times follow the numbers; through a setting of the transaction because Citus refuses
/// a volatile function such as `clock_timestamp()` in an UPDATE of a distributed table);
/// then the relays' signal, once.
///
/// Separate statements in one round trip (simple query protocol): each takes its own
/// snapshot in READ COMMITTED, so the numbering sees every event committed by whoever
/// held the lock before (a lock taken inside the numbering statement would come after
/// its snapshot). The key is the one `webhook_queue::settle` takes:
/// `hashtext('<schema>.events')`, the schema being the connection's `search_path`.
///
/// The signal (as tenant migration `webhook_signal_once` had it): only when the school
/// has an active subscription and is not already due, its `public.webhook_pending` row
/// is made due and `NOTIFY webhook_pending` wakes a relay (delivered at commit). While
/// the row is due a relay is on the school and finds these events itself, so a busy
/// school's commits write nothing public. `settle` lets go of a school under the same
/// lock, so a commit either sees the row gone and signals, or is seen by the relay.
/// Numbered rows already carrying a `seq` (a restored archive's) are left as they are.
/// `EXISTS (SELECT 1 ...)`, not `SELECT FROM`: Citus plans the subquery over the school's
/// (distributed) table apart and cannot read back a result with no column.
const NUMBER_AND_SIGNAL: &str = "\
SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.events'));
SELECT set_config('school.numbered_at', clock_timestamp()::text, true);
UPDATE events e
   SET seq = n.base + n.place, tx_position = NULL,
       occurred_at = current_setting('school.numbered_at')::timestamptz
  FROM (SELECT id, row_number() OVER (ORDER BY tx_position, id) AS place,
               (SELECT coalesce(max(seq), 0) FROM events) AS base
          FROM events WHERE seq IS NULL) n
 WHERE e.id = n.id;
WITH due AS (
    SELECT current_schema() AS schema_name
     WHERE NOT EXISTS (SELECT 1 FROM public.webhook_pending
                        WHERE schema_name = current_schema() AND due_at <= now())
       AND EXISTS (SELECT 1 FROM webhooks WHERE is_active))
INSERT INTO public.webhook_pending (schema_name, due_at)
SELECT schema_name, now() FROM due
    ON CONFLICT (schema_name) DO UPDATE SET due_at = LEAST(webhook_pending.due_at, now())
RETURNING pg_notify('webhook_pending', schema_name);
COMMIT;";

/// Numbers the open transaction's events, signals the relays and commits (see
/// `NUMBER_AND_SIGNAL`), in one round trip: the school's numbering lock is held from the
/// numbering to the end of the COMMIT and for no round trip between them (with the COMMIT
/// sent apart, one school's concurrent writes ran at half the rate: `make bench`'s write
/// scenario, 690 against 1,470 a second). diesel follows libpq's transaction status, so it
/// knows the transaction has ended. When a statement fails the rest do not run and the
/// transaction is still open: the caller rolls it back.
pub(super) fn number_signal_and_commit(conn: &mut PgConnection) -> diesel::QueryResult<()> {
    conn.batch_execute(NUMBER_AND_SIGNAL)
}

/// Up to `limit` events numbered after `after`, in order: the relay's look past its
/// cursor, and the writer's for it right after a commit (`db::commit_watch`). Events are
/// numbered at commit in commit order, so none committed later can appear behind the last
/// one read, and what one read answers follows on from `after` with no gap.
pub(crate) fn events_after(
    conn: &mut TenantConn,
    after: i64,
    limit: i64,
) -> diesel::QueryResult<Vec<NewEvent>> {
    diesel::sql_query(
        "SELECT seq, id, type AS event_type, record_id, occurred_at, data FROM events \
          WHERE seq > $1 ORDER BY seq LIMIT $2",
    )
    .bind::<sql_types::BigInt, _>(after)
    .bind::<sql_types::BigInt, _>(limit)
    .load(conn.pg())
}

#[cfg(test)]
mod tests {
    use std::{fs, path::Path};

    /// The ways to commit a school connection's transaction without numbering its events:
    /// only `TenantConn` (src/tenancy/conn.rs) may use them.
    const PAST_THE_NUMBERING: [&str; 4] = [
        "commit_transaction",
        ".pg().transaction(",
        ".pg().build_transaction(",
        "batch_execute(\"COMMIT",
    ];

    fn sources(dir: &Path, found: &mut Vec<(String, String)>) {
        for entry in fs::read_dir(dir).expect("src/").filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                sources(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).expect("source");
                found.push((path.display().to_string(), text));
            }
        }
    }

    #[test]
    fn only_tenant_conn_commits_a_school_transaction() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&root, &mut files);
        let offenders: Vec<String> = files
            .iter()
            .filter(|(path, _)| {
                !path.ends_with("tenancy/conn.rs") && !path.ends_with("numbering.rs")
            })
            .flat_map(|(path, text)| {
                PAST_THE_NUMBERING
                    .iter()
                    .filter(|pattern| text.contains(*pattern))
                    .map(move |pattern| format!("{path}: {pattern}"))
            })
            .collect();
        assert!(offenders.is_empty(), "{offenders:#?}");
    }
}
