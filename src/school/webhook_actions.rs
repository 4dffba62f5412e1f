//! What a school's staff ask of a subscription by hand (API.md 9, the app's Webhooks
//! page): "send again", which queues an event already delivered (or given up) once more for
//! the relay, with the same `webhook-id`, after any earlier event of its record (the queue
//! keeps per-record order); and the test event's attempt, recorded like any other. The
//! HTTP side (and the test event's sending) is `api::school::webhook_actions`.

use diesel::{prelude::*, sql_types};
use uuid::Uuid;

use super::webhook_queue::Outcome;
use crate::{error::ApiResult, tenancy::TenantConn};

/// The type of the test event (no record's type: `<resource>` is never `webhook`).
pub const TEST_EVENT_TYPE: &str = "webhook.test";

/// Where a subscription delivers, with its secret (never answered by the API).
#[derive(QueryableByName, Debug, Clone)]
pub struct WebhookTarget {
    #[diesel(sql_type = sql_types::Text)]
    pub url: String,
    #[diesel(sql_type = sql_types::Text)]
    pub secret: String,
    #[diesel(sql_type = sql_types::Bool)]
    pub is_active: bool,
}

/// How a "send again" ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Resent {
    /// Queued; its next attempt has this number.
    Queued(i32),
    /// The subscription has no attempt of this event in the feed (a test event, or one
    /// pruned after `EVENT_RETENTION_DAYS`, or none at all).
    NoSuchEvent,
    /// The subscription is disabled: the relay sends it nothing.
    Inactive,
}

pub fn target(conn: &mut TenantConn, webhook: Uuid) -> ApiResult<Option<WebhookTarget>> {
    Ok(
        diesel::sql_query("SELECT url, secret, is_active FROM webhooks WHERE id = $1")
            .bind::<sql_types::Uuid, _>(webhook)
            .get_result(conn.pg())
            .optional()?,
    )
}

#[derive(QueryableByName)]
struct EventPlace {
    #[diesel(sql_type = sql_types::BigInt)]
    seq: i64,
    #[diesel(sql_type = sql_types::Uuid)]
    record_id: Uuid,
}

#[derive(QueryableByName)]
struct Attempts {
    #[diesel(sql_type = sql_types::Integer)]
    attempts: i32,
}

/// Queues `event` for `webhook` again (due now; already queued, it is made due now), and
/// makes the school due for the relays (`public.webhook_pending`, NOTIFY at commit).
/// Attempts go on being numbered from the last one made, and a failure is retried on the
/// rest of the schedule.
pub fn resend(conn: &mut TenantConn, webhook: Uuid, event: Uuid) -> ApiResult<Resent> {
    let schema = conn.tenant().schema_name.to_string();
    conn.transaction(|conn| {
        let Some(target) = target(conn, webhook)? else {
            return Ok(Resent::NoSuchEvent);
        };
        if !target.is_active {
            return Ok(Resent::Inactive);
        }
        // The event read apart, then VALUES: Citus 13.2 deparses an INSERT ... SELECT ...
        // WHERE ... ON CONFLICT into invalid SQL for its shard.
        let place: Option<EventPlace> =
            diesel::sql_query("SELECT seq, record_id FROM events WHERE id = $1")
                .bind::<sql_types::Uuid, _>(event)
                .get_result(conn.pg())
                .optional()?;
        let made: Option<Attempts> = diesel::sql_query(
            "SELECT max(attempt) AS attempts FROM webhook_deliveries \
              WHERE webhook_id = $1 AND event_id = $2 HAVING count(*) > 0",
        )
        .bind::<sql_types::Uuid, _>(webhook)
        .bind::<sql_types::Uuid, _>(event)
        .get_result(conn.pg())
        .optional()?;
        let (Some(place), Some(made)) = (place, made) else {
            return Ok(Resent::NoSuchEvent);
        };
        diesel::sql_query(
            "INSERT INTO webhook_queue (webhook_id, seq, event_id, record_id, attempts) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (webhook_id, seq) DO UPDATE SET next_at = EXCLUDED.next_at",
        )
        .bind::<sql_types::Uuid, _>(webhook)
        .bind::<sql_types::BigInt, _>(place.seq)
        .bind::<sql_types::Uuid, _>(event)
        .bind::<sql_types::Uuid, _>(place.record_id)
        .bind::<sql_types::Integer, _>(made.attempts)
        .execute(conn.pg())?;
        signal(conn, &schema)?;
        let queued: Attempts = diesel::sql_query(
            "SELECT attempts FROM webhook_queue WHERE webhook_id = $1 AND event_id = $2",
        )
        .bind::<sql_types::Uuid, _>(webhook)
        .bind::<sql_types::Uuid, _>(event)
        .get_result(conn.pg())?;
        Ok(Resent::Queued(queued.attempts + 1))
    })
}

/// Makes the school due for the relays now and wakes them (at commit), as a commit of an
/// event does (tenant migration `webhooks`).
pub fn signal(conn: &mut TenantConn, schema: &str) -> ApiResult<()> {
    diesel::sql_query(
        "INSERT INTO public.webhook_pending (schema_name, due_at) VALUES ($1, now()) \
         ON CONFLICT (schema_name) DO UPDATE SET due_at = LEAST(webhook_pending.due_at, now())",
    )
    .bind::<sql_types::Text, _>(schema)
    .execute(conn.pg())?;
    diesel::sql_query("SELECT pg_notify('webhook_pending', $1)")
        .bind::<sql_types::Text, _>(schema)
        .execute(conn.pg())?;
    Ok(())
}

/// Records the attempt of a test event (the subscription's failures and queue untouched:
/// a test is no event of the school).
pub fn record_test(
    conn: &mut TenantConn,
    webhook: Uuid,
    event: Uuid,
    outcome: &Outcome,
) -> ApiResult<super::webhooks::Delivery> {
    use super::schema::webhook_deliveries as d;
    let (status, error) = match outcome {
        Outcome::Acknowledged(status) => (Some(*status), None),
        Outcome::Failed(status, why) => (*status, Some(why.clone())),
    };
    Ok(diesel::insert_into(d::table)
        .values((
            d::id.eq(Uuid::new_v4()),
            d::webhook_id.eq(webhook),
            d::event_id.eq(event),
            d::attempt.eq(1),
            d::status_code.eq(status),
            d::error.eq(error),
        ))
        .returning(super::webhooks::Delivery::as_returning())
        .get_result(conn.pg())?)
}
