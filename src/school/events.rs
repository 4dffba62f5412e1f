//! The school's event feed (API.md 9): the events its writes recorded
//! (`change_log`), read in commit order from a cursor. The cursor is an event's number
//! (`seq`, given at commit), so reading again from one answers the same events.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::schema::events as t;
use crate::{error::ApiResult, tenancy::TenantConn};

/// One change event, as the feed and webhooks carry it.
#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Event {
    /// Unique and stable: the `webhook-id` of its deliveries too.
    pub id: Uuid,
    /// `<resource>.<created|updated|deleted>`.
    #[serde(rename = "type")]
    #[diesel(column_name = type_)]
    pub kind: String,
    /// The commit's time.
    #[serde(rename = "timestamp")]
    #[diesel(column_name = occurred_at)]
    pub at: DateTime<Utc>,
    /// The record as the school API answers it after the change (before it, for a delete).
    pub data: Value,
}

/// A page of the feed: the events after a cursor, and the cursor after them.
pub struct FeedPage {
    pub events: Vec<Event>,
    /// The last event's number, or the cursor given when there was none.
    pub next: i64,
}

/// The position before every event: a feed read from it starts at the oldest kept.
pub const START: i64 = 0;

/// The newest event's number, if the school has any (uncommitted ones have none).
pub fn newest(conn: &mut TenantConn) -> ApiResult<Option<i64>> {
    Ok(t::table.select(diesel::dsl::max(t::seq)).first(conn.pg())?)
}

/// Up to `limit` events after `after` in commit order, of type `kind` when given.
pub fn after(
    conn: &mut TenantConn,
    after: i64,
    limit: i64,
    kind: Option<&str>,
) -> ApiResult<FeedPage> {
    let mut rows = t::table
        .filter(t::seq.gt(after))
        .order(t::seq)
        .limit(limit)
        .select((t::seq.assume_not_null(), Event::as_select()))
        .into_boxed();
    if let Some(kind) = kind {
        rows = rows.filter(t::type_.eq(kind.to_owned()));
    }
    let rows: Vec<(i64, Event)> = rows.load(conn.pg())?;
    let next = rows.last().map_or(after, |(seq, _)| *seq);
    Ok(FeedPage {
        events: rows.into_iter().map(|(_, event)| event).collect(),
        next,
    })
}
