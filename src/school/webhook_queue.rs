//! The relay's queries over one school: queuing committed events for each active
//! subscription, the deliveries due (only the head of each record's queue: per-record
//! order), recording an attempt's outcome (retry schedule, giving up, disabling), and
//! settling the school's `public.webhook_pending` row when the relay lets go of it. The
//! HTTP side is the `relay` module.

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

/// Queues, for every active subscription, the events committed after its
/// `queued_through` that it subscribes to, and moves `queued_through` on. Events are
/// numbered at commit in commit order, so every event up to the newest number seen is
/// committed and visible, and none committed later can fall behind it. One statement, so
/// one snapshot: the newest number, the events queued and `queued_through` all agree (in
/// statements of their own, each seeing the commits made before it began, the update
/// could move `queued_through` past events committed after the insert's look: skipped).
/// Answers the number of subscriptions moved on.
pub fn queue_new_events(conn: &mut TenantConn) -> ApiResult<usize> {
    Ok(diesel::sql_query(
        "WITH newest AS (SELECT max(seq) AS seq FROM events), \
              queued AS ( \
                  INSERT INTO webhook_queue (webhook_id, seq, event_id, record_id) \
                  SELECT w.id, e.seq, e.id, e.record_id \
                    FROM webhooks w \
                    JOIN events e ON e.seq > w.queued_through \
                                 AND e.seq <= (SELECT seq FROM newest) \
                   WHERE w.is_active \
                     AND ('*' = ANY (w.event_types) OR e.type = ANY (w.event_types)) \
                  ON CONFLICT DO NOTHING) \
         UPDATE webhooks SET queued_through = (SELECT seq FROM newest) \
          WHERE is_active AND queued_through < (SELECT seq FROM newest)",
    )
    .execute(conn.pg())?)
}

/// Up to `limit` deliveries due now: for each (subscription, record), only its earliest
/// queued event, so a later event of a record waits for the earlier one.
pub fn due(conn: &mut TenantConn, limit: i64) -> ApiResult<Vec<Due>> {
    Ok(diesel::sql_query(
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
    .load(conn.pg())?)
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

/// One acknowledged delivery, to record with others (`record_acknowledged`).
pub struct Acknowledged {
    pub webhook_id: Uuid,
    pub seq: i64,
    pub event_id: Uuid,
    /// This attempt's number (1 for the first).
    pub attempt: i32,
    pub status: i32,
}

/// Records acknowledged deliveries in one statement, whatever their number: their
/// attempts, their events out of the queue, their subscriptions no longer failing. (A
/// failure takes `record_attempt`: retries, giving up, disabling.)
pub fn record_acknowledged(conn: &mut TenantConn, acked: &[Acknowledged]) -> ApiResult<()> {
    if acked.is_empty() {
        return Ok(());
    }
    let column = |f: fn(&Acknowledged) -> Uuid| acked.iter().map(f).collect::<Vec<Uuid>>();
    diesel::sql_query(
        "WITH acked AS ( \
             SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::uuid[], $4::int[], $5::int[]) \
                 AS a (webhook_id, seq, event_id, attempt, status_code)), \
         recorded AS ( \
             INSERT INTO webhook_deliveries (id, webhook_id, event_id, attempt, status_code) \
             SELECT gen_random_uuid(), webhook_id, event_id, attempt, status_code FROM acked), \
         healthy AS ( \
             UPDATE webhooks SET failing_since = NULL \
              WHERE id IN (SELECT webhook_id FROM acked) AND failing_since IS NOT NULL) \
         DELETE FROM webhook_queue q USING acked a \
          WHERE q.webhook_id = a.webhook_id AND q.seq = a.seq",
    )
    .bind::<sql_types::Array<sql_types::Uuid>, _>(column(|a| a.webhook_id))
    .bind::<sql_types::Array<sql_types::BigInt>, _>(acked.iter().map(|a| a.seq).collect::<Vec<_>>())
    .bind::<sql_types::Array<sql_types::Uuid>, _>(column(|a| a.event_id))
    .bind::<sql_types::Array<sql_types::Integer>, _>(
        acked.iter().map(|a| a.attempt).collect::<Vec<_>>(),
    )
    .bind::<sql_types::Array<sql_types::Integer>, _>(
        acked.iter().map(|a| a.status).collect::<Vec<_>>(),
    )
    .execute(conn.pg())?;
    Ok(())
}

/// Renews the relay's lease of the school (`public.webhook_pending`).
pub fn renew_lease(conn: &mut TenantConn, relay: Uuid, lease: Duration) -> ApiResult<()> {
    let schema = conn.tenant().schema_name.to_string();
    diesel::sql_query(
        "UPDATE public.webhook_pending \
            SET leased_until = now() + make_interval(secs => $3) \
          WHERE schema_name = $1 AND leased_by = $2",
    )
    .bind::<sql_types::Text, _>(schema)
    .bind::<sql_types::Uuid, _>(relay)
    .bind::<sql_types::Double, _>(lease.as_secs_f64())
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
    conn.transaction(|conn| {
        let attempt = due.attempts + 1;
        let (status, error) = match outcome {
            Outcome::Acknowledged(status) => (Some(*status), None),
            Outcome::Failed(status, why) => (*status, Some(why.as_str())),
        };
        diesel::sql_query(
            "INSERT INTO webhook_deliveries (id, webhook_id, event_id, attempt, status_code, error) \
             VALUES ($1, $2, $3, $4, $5, $6)",
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
                diesel::sql_query(
                    "UPDATE webhook_queue SET attempts = $3, \
                            next_at = now() + make_interval(secs => $4) \
                      WHERE webhook_id = $1 AND seq = $2",
                )
                .bind::<sql_types::Uuid, _>(due.webhook_id)
                .bind::<sql_types::BigInt, _>(due.seq)
                .bind::<sql_types::Integer, _>(attempt)
                .bind::<sql_types::Double, _>(wait.as_secs_f64())
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
        diesel::sql_query(
            "UPDATE webhooks SET failing_since = coalesce(failing_since, now()) WHERE id = $1",
        )
        .bind::<sql_types::Uuid, _>(due.webhook_id)
        .execute(conn.pg())?;
        let disabled = diesel::sql_query(
            "UPDATE webhooks SET is_active = false, disabled_reason = $3 \
              WHERE id = $1 AND is_active \
                AND failing_since < now() - make_interval(secs => $2)",
        )
        .bind::<sql_types::Uuid, _>(due.webhook_id)
        .bind::<sql_types::Double, _>(rules.disable_after.as_secs_f64())
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
pub fn settle(
    conn: &mut TenantConn,
    relay: Uuid,
    retention_days: u32,
    prune: bool,
) -> ApiResult<()> {
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
            return Ok(());
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
        diesel::sql_query(
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
              WHERE schema_name = $1 AND (SELECT due_at FROM next) IS NOT NULL",
        )
        .bind::<sql_types::Text, _>(&schema)
        .execute(conn.pg())?;
        Ok(())
    })
}
