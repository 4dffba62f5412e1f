//! History (API.md 11): the entries `change_log` writes for marks, attendance and
//! students, read newest first by record or by student. Entries outlive their record.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::{
    actor::{Actor, ActorKind},
    schema::history as t,
};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

/// One create, update or delete of a record.
#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct HistoryEntry {
    pub at: DateTime<Utc>,
    pub actor: Actor,
    /// `created`, `updated` or `deleted`.
    pub action: String,
    /// `{field: [old, new]}`; a created record's fields as `[null, value]`, a deleted one's
    /// as `[value, null]`.
    #[schema(value_type = Object)]
    pub changes: Value,
    /// The resource (`mark`, `attendance`, `student`) and the record the entry is about.
    pub resource: String,
    pub record: Uuid,
}

type Row = (
    DateTime<Utc>,
    String,
    Uuid,
    String,
    String,
    Value,
    String,
    Uuid,
);

/// Whose history: one record's, or everything about one student.
#[derive(Debug, Clone, Copy)]
pub enum About {
    Record(Uuid),
    Student(Uuid),
}

/// One page of the entries about `about`, newest first, and how many there are.
pub fn page(
    conn: &mut TenantConn,
    about: About,
    offset: i64,
    limit: i64,
) -> ApiResult<(i64, Vec<HistoryEntry>)> {
    let select = || {
        let rows = t::table.into_boxed();
        match about {
            About::Record(id) => rows.filter(t::record_id.eq(id)),
            About::Student(id) => rows.filter(t::student_id.eq(id)),
        }
    };
    let count: i64 = select().count().get_result(conn.pg())?;
    let rows: Vec<Row> = select()
        .order((t::at.desc(), t::id.desc()))
        .offset(offset)
        .limit(limit)
        .select((
            t::at,
            t::actor_type,
            t::actor_id,
            t::actor_name,
            t::action,
            t::changes,
            t::resource,
            t::record_id,
        ))
        .load(conn.pg())?;
    let entries = rows
        .into_iter()
        .map(|(at, kind, id, name, action, changes, resource, record)| {
            let kind = ActorKind::parse(&kind)
                .ok_or_else(|| ApiError::internal(anyhow::anyhow!("unknown actor type {kind}")))?;
            Ok(HistoryEntry {
                at,
                actor: Actor { kind, id, name },
                action,
                changes,
                resource,
                record,
            })
        })
        .collect::<ApiResult<Vec<_>>>()?;
    Ok((count, entries))
}
