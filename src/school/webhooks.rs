//! Webhook subscriptions of a school (API.md 9): the records `/webhooks/` reads and writes,
//! and the attempts `/webhooks/{id}/deliveries/` lists. Subscriptions are no `Store`: they
//! emit no events of their own. What the relay does with them is in `webhook_queue`.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, events,
    schema::{webhook_deliveries as d, webhooks as t},
};
use crate::{error::ApiResult, tenancy::TenantConn};

/// A subscription as the API answers it (the secret is shown once, at creation).
#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Webhook {
    pub id: Uuid,
    pub url: String,
    /// Event types (`mark.updated`), or `["*"]` for every one.
    pub event_types: Vec<String>,
    pub description: String,
    pub is_active: bool,
    /// Why the relay disabled it, when it did.
    #[schema(max_length = 1000)]
    pub disabled_reason: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// One delivery attempt.
#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = d, check_for_backend(diesel::pg::Pg))]
pub struct Delivery {
    /// The event's id (its `webhook-id`).
    #[serde(rename = "event")]
    #[diesel(column_name = event_id)]
    pub event: Uuid,
    /// 1 for the first attempt.
    pub attempt: i32,
    /// The receiver's status, if it answered.
    pub status_code: Option<i32>,
    /// Why the attempt failed (none when it was acknowledged).
    #[schema(max_length = 500)]
    pub error: Option<String>,
    pub at: DateTime<Utc>,
}

/// What a create writes.
pub struct NewWebhook {
    pub url: String,
    pub event_types: Vec<String>,
    pub description: String,
}

/// What a PATCH changes (`None`: unchanged).
#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct WebhookChanges {
    pub url: Option<String>,
    pub event_types: Option<Vec<String>>,
    pub description: Option<String>,
    pub is_active: Option<bool>,
}

pub struct Webhooks;

impl Webhooks {
    pub fn list(conn: &mut TenantConn, offset: i64, limit: i64) -> ApiResult<(i64, Vec<Webhook>)> {
        let count = t::table.count().get_result(conn.pg())?;
        let rows = t::table
            .order((t::created_at, t::id))
            .offset(offset)
            .limit(limit)
            .select(Webhook::as_select())
            .load(conn.pg())?;
        Ok((count, rows))
    }

    pub fn find(conn: &mut TenantConn, id: Uuid) -> ApiResult<Option<Webhook>> {
        Ok(t::table
            .find(id)
            .select(Webhook::as_select())
            .first(conn.pg())
            .optional()?)
    }

    /// Creates a subscription with `secret`; it receives the events committed from now on.
    pub fn create(
        conn: &mut TenantConn,
        new: NewWebhook,
        secret: &str,
        actor: &Actor,
    ) -> ApiResult<Webhook> {
        let from = events::newest(conn)?.unwrap_or(events::START);
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::url.eq(new.url),
                t::event_types.eq(new.event_types),
                t::description.eq(new.description),
                t::secret.eq(secret),
                t::queued_through.eq(from),
                t::created_by.eq(actor.user_id()),
                t::updated_by.eq(actor.user_id()),
            ))
            .returning(Webhook::as_returning())
            .get_result(conn.pg())?)
    }

    /// Changes a subscription; activating one clears why it was disabled and its failures.
    pub fn update(
        conn: &mut TenantConn,
        id: Uuid,
        changes: WebhookChanges,
        actor: &Actor,
    ) -> ApiResult<Option<Webhook>> {
        let reactivated = changes.is_active == Some(true);
        let row: Option<Webhook> = diesel::update(t::table.find(id))
            .set((
                &changes,
                t::updated_by.eq(actor.user_id()),
                t::updated_at.eq(Utc::now()),
            ))
            .returning(Webhook::as_returning())
            .get_result(conn.pg())
            .optional()?;
        if reactivated && row.is_some() {
            diesel::update(t::table.find(id))
                .set((
                    t::disabled_reason.eq(None::<String>),
                    t::failing_since.eq(None::<DateTime<Utc>>),
                ))
                .execute(conn.pg())?;
            return Self::find(conn, id);
        }
        Ok(row)
    }

    /// Deletes a subscription with its queue and deliveries; whether there was one.
    pub fn delete(conn: &mut TenantConn, id: Uuid) -> ApiResult<bool> {
        Ok(diesel::delete(t::table.find(id)).execute(conn.pg())? > 0)
    }

    /// The subscription's attempts, newest first.
    pub fn deliveries(
        conn: &mut TenantConn,
        id: Uuid,
        offset: i64,
        limit: i64,
    ) -> ApiResult<(i64, Vec<Delivery>)> {
        let count = d::table
            .filter(d::webhook_id.eq(id))
            .count()
            .get_result(conn.pg())?;
        let rows = d::table
            .filter(d::webhook_id.eq(id))
            .order((d::at.desc(), d::id.desc()))
            .offset(offset)
            .limit(limit)
            .select(Delivery::as_select())
            .load(conn.pg())?;
        Ok((count, rows))
    }
}
