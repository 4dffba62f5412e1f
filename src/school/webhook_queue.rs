//! The relay's queries over one school. A subscription's `queued_through` is how far it
//! is handed on: every event up to it was delivered or waits in `webhook_queue`. The
//! relay reads events past it (`tenancy::events_after`), sends them, and moves it on in
//! the statement that records their answers (`record`). The queue holds only what could
//! not go straight away: an attempt that failed (retried on the schedule, given up past
//! its end, the subscription disabled after `disable_after`), "send again", and the later
//! events of their records, held behind them for per-record order (`queued_due` answers
//! only each record's head). `settle` lets go of the school's `public.webhook_pending` row
//! (`webhook_pending`). The HTTP side is the `relay` module.
//!
//! Why events are not queued first, then read back (as until issue 40's second pass): the
//! two statements per look, each planned anew on a connection that serves other schools,
//! cost PostgreSQL more than the write that made the event.

use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::{prelude::*, sql_types};
use serde_json::Value;
use uuid::Uuid;

use crate::{error::ApiResult, tenancy::TenantConn};

/// One delivery to make: an event to a subscription.
#[derive(QueryableByName, Debug, Clone)]
pub struct Due {
    #[diesel(sql_type = sql_types::Uuid)]
    pub webhook_id: Uuid,
    #[diesel(sql_type = sql_types::BigInt)]
    pub seq: i64,
    #[diesel(sql_type = sql_types::Uuid)]
    pub event_id: Uuid,
    /// Attempts made before this one.
    #[diesel(sql_type = sql_types::Integer)]
    pub attempts: i32,
    #[diesel(sql_type = sql_types::Text)]
    pub url: String,
    #[diesel(sql_type = sql_types::Text)]
    pub secret: String,
    #[diesel(sql_type = sql_types::Text)]
    pub event_type: String,
    #[diesel(sql_type = sql_types::Timestamptz)]
    pub occurred_at: DateTime<Utc>,
    #[diesel(sql_type = sql_types::Jsonb)]
    pub data: Value,
}

/// How one attempt ended.
pub enum Outcome {
    /// A 2xx.
    Acknowledged(i32),
    /// Anything else: the status, if the receiver answered, and why.
    Failed(Option<i32>, String),
}

/// The retry rules, from `EventSettings`.
pub struct RetryRules<'a> {
    pub schedule: &'a [Duration],
    pub disable_after: Duration,
}

/// An active subscription, as the relay needs it.
#[derive(QueryableByName, Debug, Clone)]
pub struct Subscription {
    #[diesel(sql_type = sql_types::Uuid)]
    pub id: Uuid,
    #[diesel(sql_type = sql_types::Text)]
    pub url: String,
    #[diesel(sql_type = sql_types::Text)]
    pub secret: String,
    #[diesel(sql_type = sql_types::Array<sql_types::Text>)]
    pub event_types: Vec<String>,
    #[diesel(sql_type = sql_types::BigInt)]
    pub queued_through: i64,
}

impl Subscription {
    pub fn wants(&self, event_type: &str) -> bool {
        self.event_types.iter().any(|t| t == "*" || t == event_type)
    }
}

pub fn subscriptions(conn: &mut TenantConn) -> ApiResult<Vec<Subscription>> {
    Ok(diesel::sql_query(
        "SELECT id, url, secret, event_types, queued_through FROM webhooks WHERE is_active",
    )
    .load(conn.pg())?)
}

/// A committed event, as deliveries carry it (read past a cursor, by the relay or for it
/// by a writer: `db::commit_watch`).
pub use crate::db::commit_watch::NewEvent;

/// A (subscription, record) with entries in the queue: its new events wait behind them.
#[derive(QueryableByName, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Held {
    #[diesel(sql_type = sql_types::Uuid)]
    pub webhook_id: Uuid,
    #[diesel(sql_type = sql_types::Uuid)]
    pub record_id: Uuid,
}

/// The queue at a look: every (subscription, record) it holds entries of, and up to
/// `limit` deliveries due now, for each record only its earliest entry (per-record order).
pub fn queued_due(conn: &mut TenantConn, limit: i64) -> ApiResult<(Vec<Held>, Vec<Due>)> {
    let held: Vec<Held> =
        diesel::sql_query("SELECT DISTINCT webhook_id, record_id FROM webhook_queue")
            .load(conn.pg())?;
    if held.is_empty() {
        // Nothing queued (nearly always): the costlier statement is not planned.
        return Ok((held, Vec::new()));
    }
    let due = diesel::sql_query(
        "SELECT q.webhook_id, q.seq, q.event_id, q.attempts, w.url, w.secret, \
                e.type AS event_type, e.occurred_at, e.data \
           FROM webhook_queue q \
           JOIN webhooks w ON w.id = q.webhook_id AND w.is_active \
           JOIN events e ON e.seq = q.seq \
          WHERE q.next_at <= now() \
            AND NOT EXISTS (SELECT 1 FROM webhook_queue p \
                             WHERE p.webhook_id = q.webhook_id AND p.record_id = q.record_id \
                               AND p.seq < q.seq) \
          ORDER BY q.seq LIMIT $1",
    )
    .bind::<sql_types::BigInt, _>(limit)
    .load(conn.pg())?;
    Ok((held, due))
}

/// Runs the relay's `work` in a transaction whose commit does not wait for the disk
/// (`synchronous_commit = off`, local to it). Safe for the relay's own bookkeeping: a
/// crash of PostgreSQL can lose only its last commits (the write-ahead log is flushed in
/// order, so never an earlier one without the later ones), and losing them only sends the
/// events again with their `webhook-id`, or queues them again from `queued_through`: at
/// least once, as after a relay's crash. The school's own writes are not relaxed.
pub fn relaxed<T>(
    conn: &mut TenantConn,
    work: impl FnOnce(&mut TenantConn) -> ApiResult<T>,
) -> ApiResult<T> {
    conn.transaction(|conn| {
        diesel::sql_query("SET LOCAL synchronous_commit = off").execute(conn.pg())?;
        work(conn)
    })
}

/// One acknowledged delivery, to record with others (`record`).
pub struct Acknowledged {
    pub webhook_id: Uuid,
    pub seq: i64,
    pub event_id: Uuid,
    /// This attempt's number (1 for the first).
    pub attempt: i32,
    pub status: i32,
    /// Sent from the queue (which it leaves now), not read past the cursor.
    pub queued: bool,
}

/// An event put in the queue without an attempt: held behind an earlier one of its
/// record, or about to have its failed first attempt recorded.
pub struct Parked {
    pub webhook_id: Uuid,
    pub seq: i64,
    pub event_id: Uuid,
    pub record_id: Uuid,
}

/// A subscription handed on through `through`; `acknowledged`: one of its deliveries was
/// (so it is not failing).
pub struct HandedOn {
    pub webhook_id: Uuid,
    pub through: i64,
    pub acknowledged: bool,
}

/// What a batch of answers changes, recorded together (`record`).
#[derive(Default)]
pub struct Recording {
    pub acknowledged: Vec<Acknowledged>,
    pub parked: Vec<Parked>,
    /// Failed attempts (their event queued already, or parked in this recording).
    pub failed: Vec<(Due, Outcome)>,
    pub handed_on: Vec<HandedOn>,
}

/// Records a batch of answers and moves the subscriptions on, in one transaction (the
/// answers of a subscription deleted meanwhile are dropped, not refused, so the rest of
/// the batch is recorded; its events parked in the same second would still be refused by
/// the queue's foreign key, a filter there being what Citus 13.2 deparses wrongly: the
/// visit then ends and the school is taken up again when its lease runs out): the
/// acknowledged attempts, their events out of the queue, the cursors moved and the
/// subscriptions no longer failing in one statement (nearly always the only one); events
/// parked and each failure (`record_attempt`) only when there are some (then in a
/// `relaxed` transaction). Answers the subscriptions disabled.
pub fn record(
    conn: &mut TenantConn,
    recording: &Recording,
    rules: &RetryRules<'_>,
) -> ApiResult<Vec<Uuid>> {
    if recording.parked.is_empty() && recording.failed.is_empty() {
        record_acknowledged(conn, &recording.acknowledged, &recording.handed_on)?;
        return Ok(Vec::new());
    }
    relaxed(conn, |conn| {
        park(conn, &recording.parked)?;
        record_acknowledged(conn, &recording.acknowledged, &recording.handed_on)?;
        let mut disabled = Vec::new();
        for (due, outcome) in &recording.failed {
            if record_attempt(conn, due, outcome, rules)? {
                disabled.push(due.webhook_id);
            }
        }
        Ok(disabled)
    })
}

fn park(conn: &mut TenantConn, parked: &[Parked]) -> ApiResult<()> {
    if parked.is_empty() {
        return Ok(());
    }
    diesel::sql_query(
        "INSERT INTO webhook_queue (webhook_id, seq, event_id, record_id) \
         SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::uuid[], $4::uuid[]) \
         ON CONFLICT DO NOTHING",
    )
    .bind::<sql_types::Array<sql_types::Uuid>, _>(
        parked.iter().map(|p| p.webhook_id).collect::<Vec<_>>(),
    )
    .bind::<sql_types::Array<sql_types::BigInt>, _>(
        parked.iter().map(|p| p.seq).collect::<Vec<_>>(),
    )
    .bind::<sql_types::Array<sql_types::Uuid>, _>(
        parked.iter().map(|p| p.event_id).collect::<Vec<_>>(),
    )
    .bind::<sql_types::Array<sql_types::Uuid>, _>(
        parked.iter().map(|p| p.record_id).collect::<Vec<_>>(),
    )
    .execute(conn.pg())?;
    Ok(())
}

/// The acknowledged attempts, their events out of the queue (when they were there), and
/// the subscriptions moved on and no longer failing: one statement, whatever the number.
/// Only deliveries sent from the queue take a statement of their own, to leave it: every
/// statement here is planned at each call (the connection serves other schools in
/// between), and planning was most of the cost. Its commit waits for the disk: recording
/// is off the path to the receivers, and a volatile `set_config` in an UPDATE (the
/// one-round-trip way to relax it) is refused by Citus.
fn record_acknowledged(
    conn: &mut TenantConn,
    acked: &[Acknowledged],
    handed_on: &[HandedOn],
) -> ApiResult<()> {
    if acked.is_empty() && handed_on.is_empty() {
        return Ok(());
    }
    let retried: Vec<&Acknowledged> = acked.iter().filter(|a| a.queued).collect();
    if !retried.is_empty() {
        diesel::sql_query(
            "DELETE FROM webhook_queue q USING unnest($1::uuid[], $2::bigint[]) AS a (id, seq) \
              WHERE q.webhook_id = a.id AND q.seq = a.seq",
        )
        .bind::<sql_types::Array<sql_types::Uuid>, _>(
            retried.iter().map(|a| a.webhook_id).collect::<Vec<_>>(),
        )
        .bind::<sql_types::Array<sql_types::BigInt>, _>(
            retried.iter().map(|a| a.seq).collect::<Vec<_>>(),
        )
        .execute(conn.pg())?;
    }
    let uuids = |f: fn(&Acknowledged) -> Uuid| acked.iter().map(f).collect::<Vec<Uuid>>();
    let ints = |f: fn(&Acknowledged) -> i32| acked.iter().map(f).collect::<Vec<i32>>();
    diesel::sql_query(
        "WITH recorded AS ( \
             INSERT INTO webhook_deliveries (id, webhook_id, event_id, attempt, status_code) \
             SELECT gen_random_uuid(), a.* \
               FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::int[]) \
                        AS a (webhook_id, event_id, attempt, status_code) \
              WHERE EXISTS (SELECT 1 FROM webhooks w WHERE w.id = a.webhook_id)), \
         handed AS ( \
             SELECT * FROM unnest($5::uuid[], $6::bigint[], $7::bool[]) \
                 AS h (webhook_id, through, acknowledged)) \
         UPDATE webhooks w \
            SET queued_through = GREATEST(w.queued_through, h.through), \
                failing_since = CASE WHEN h.acknowledged THEN NULL ELSE w.failing_since END \
           FROM handed h \
          WHERE w.id = h.webhook_id \
            AND (w.queued_through < h.through \
                 OR (h.acknowledged AND w.failing_since IS NOT NULL))",
    )
    .bind::<sql_types::Array<sql_types::Uuid>, _>(uuids(|a| a.webhook_id))
    .bind::<sql_types::Array<sql_types::Uuid>, _>(uuids(|a| a.event_id))
    .bind::<sql_types::Array<sql_types::Integer>, _>(ints(|a| a.attempt))
    .bind::<sql_types::Array<sql_types::Integer>, _>(ints(|a| a.status))
    .bind::<sql_types::Array<sql_types::Uuid>, _>(
        handed_on.iter().map(|h| h.webhook_id).collect::<Vec<_>>(),
    )
    .bind::<sql_types::Array<sql_types::BigInt>, _>(
        handed_on.iter().map(|h| h.through).collect::<Vec<_>>(),
    )
    .bind::<sql_types::Array<sql_types::Bool>, _>(
        handed_on.iter().map(|h| h.acknowledged).collect::<Vec<_>>(),
    )
    .execute(conn.pg())?;
    Ok(())
}

/// Records one attempt of `due` and what follows from it: acknowledged, the event leaves
/// the queue; failed, it is retried after the schedule's next wait or given up past its
/// end, and a subscription failing for longer than `disable_after` is disabled (its queue
/// dropped). Answers whether the subscription was disabled by this attempt.
pub fn record_attempt(
    conn: &mut TenantConn,
    due: &Due,
    outcome: &Outcome,
    rules: &RetryRules<'_>,
) -> ApiResult<bool> {
    let now = Utc::now();
    conn.transaction(|conn| {
        let attempt = due.attempts + 1;
        let (status, error) = match outcome {
            Outcome::Acknowledged(status) => (Some(*status), None),
            Outcome::Failed(status, why) => (*status, Some(why.as_str())),
        };
        diesel::sql_query(
            "INSERT INTO webhook_deliveries (id, webhook_id, event_id, attempt, status_code, error) \
             SELECT $1, $2, $3, $4, $5, $6 WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = $2)",
        )
        .bind::<sql_types::Uuid, _>(Uuid::new_v4())
        .bind::<sql_types::Uuid, _>(due.webhook_id)
        .bind::<sql_types::Uuid, _>(due.event_id)
        .bind::<sql_types::Integer, _>(attempt)
        .bind::<sql_types::Nullable<sql_types::Integer>, _>(status)
        .bind::<sql_types::Nullable<sql_types::Text>, _>(error)
        .execute(conn.pg())?;
        let wait = rules.schedule.get(usize::try_from(due.attempts).unwrap_or(usize::MAX));
        match (outcome, wait) {
            (Outcome::Acknowledged(_), _) | (Outcome::Failed(..), None) => {
                // Acknowledged, or given up after the schedule's last retry.
                diesel::sql_query("DELETE FROM webhook_queue WHERE webhook_id = $1 AND seq = $2")
                    .bind::<sql_types::Uuid, _>(due.webhook_id)
                    .bind::<sql_types::BigInt, _>(due.seq)
                    .execute(conn.pg())?;
            }
            (Outcome::Failed(..), Some(wait)) => {
                let next_at = now + chrono::Duration::from_std(*wait).unwrap_or_default();
                diesel::sql_query(
                    "UPDATE webhook_queue SET attempts = $3, next_at = $4 \
                      WHERE webhook_id = $1 AND seq = $2",
                )
                .bind::<sql_types::Uuid, _>(due.webhook_id)
                .bind::<sql_types::BigInt, _>(due.seq)
                .bind::<sql_types::Integer, _>(attempt)
                .bind::<sql_types::Timestamptz, _>(next_at)
                .execute(conn.pg())?;
            }
        }
        if let Outcome::Acknowledged(_) = outcome {
            diesel::sql_query("UPDATE webhooks SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL")
                .bind::<sql_types::Uuid, _>(due.webhook_id)
                .execute(conn.pg())?;
            return Ok(false);
        }
        // Every attempt since `failing_since` failed; past `disable_after`, disable.
        // Times are computed here and bound: Citus refuses a non-immutable function such as
        // `now()` inside a COALESCE of an UPDATE of a school (distributed) table.
        diesel::sql_query(
            "UPDATE webhooks SET failing_since = coalesce(failing_since, $2) WHERE id = $1",
        )
        .bind::<sql_types::Uuid, _>(due.webhook_id)
        .bind::<sql_types::Timestamptz, _>(now)
        .execute(conn.pg())?;
        let failing_before = now - chrono::Duration::from_std(rules.disable_after).unwrap_or_default();
        let disabled = diesel::sql_query(
            "UPDATE webhooks SET is_active = false, disabled_reason = $3 \
              WHERE id = $1 AND is_active AND failing_since < $2",
        )
        .bind::<sql_types::Uuid, _>(due.webhook_id)
        .bind::<sql_types::Timestamptz, _>(failing_before)
        .bind::<sql_types::Text, _>(format!(
            "every delivery failed for more than {} seconds (last: {})",
            rules.disable_after.as_secs(),
            error.unwrap_or("")
        ))
        .execute(conn.pg())?;
        if disabled > 0 {
            diesel::sql_query("DELETE FROM webhook_queue WHERE webhook_id = $1")
                .bind::<sql_types::Uuid, _>(due.webhook_id)
                .execute(conn.pg())?;
        }
        Ok(disabled > 0)
    })
}

/// Lets go of the school: under the school's numbering lock (the lock a commit holds
/// while it numbers its events and decides whether to signal: tenant migration
/// `webhook_signal_once`), so a commit either comes first and its events are seen here,
/// or comes after and finds the row gone or waiting, and signals; then under the row's
/// lock (taken after, as commits do), removes the row when nothing is left to send, or
/// makes it due at once or at the next retry. With `prune` (now and
/// then: each is a scan), also drops queue entries whose event is gone (pruned) and
/// attempts older than the retention.
///
/// Answers whether the school is due again at once: events committed after the visit's
/// last look signalled nothing (the row was still due), so the caller must wake a relay
/// for them, or they would wait for its idle look (seconds).
pub fn settle(
    conn: &mut TenantConn,
    relay: Uuid,
    retention_days: u32,
    prune: bool,
) -> ApiResult<bool> {
    let schema = conn.tenant().schema_name.to_string();
    relaxed(conn, |conn| {
        diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext($1 || '.events'))")
            .bind::<sql_types::Text, _>(&schema)
            .execute(conn.pg())?;
        let held = diesel::sql_query(
            "SELECT 1 FROM public.webhook_pending WHERE schema_name = $1 AND leased_by = $2 \
             FOR UPDATE",
        )
        .bind::<sql_types::Text, _>(&schema)
        .bind::<sql_types::Uuid, _>(relay)
        .execute(conn.pg())?;
        if held == 0 {
            return Ok(false);
        }
        if prune {
            diesel::sql_query(
                "DELETE FROM webhook_queue q \
                  WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = q.seq)",
            )
            .execute(conn.pg())?;
            diesel::sql_query(
                "DELETE FROM webhook_deliveries WHERE at < now() - make_interval(days => $1)",
            )
            .bind::<sql_types::Integer, _>(i32::try_from(retention_days).unwrap_or(i32::MAX))
            .execute(conn.pg())?;
        }
        let due = diesel::sql_query(
            "WITH next AS ( \
                 SELECT CASE \
                     WHEN EXISTS (SELECT 1 FROM webhooks WHERE is_active \
                                   AND queued_through < (SELECT coalesce(max(seq), 0) FROM events)) \
                     THEN now() \
                     ELSE (SELECT min(q.next_at) FROM webhook_queue q \
                             JOIN webhooks w ON w.id = q.webhook_id AND w.is_active) \
                 END AS due_at), \
             gone AS ( \
                 DELETE FROM public.webhook_pending \
                  WHERE schema_name = $1 AND (SELECT due_at FROM next) IS NULL) \
             UPDATE public.webhook_pending \
                SET due_at = (SELECT due_at FROM next), leased_until = NULL, leased_by = NULL \
              WHERE schema_name = $1 AND (SELECT due_at FROM next) IS NOT NULL \
             RETURNING due_at <= now() AS due_now",
        )
        .bind::<sql_types::Text, _>(&schema)
        .load::<DueNow>(conn.pg())?;
        Ok(due.first().is_some_and(|row| row.due_now))
    })
}

#[derive(QueryableByName)]
struct DueNow {
    #[diesel(sql_type = sql_types::Bool)]
    due_now: bool,
}
