//! The write path's one record of a change: every write a store makes (its default
//! methods, and the special operations that write past them: confirm-students, class
//! takes, bulk soft delete, activation of sessions) ends here, in the change's own
//! transaction, with the record before and after and who acted. It writes
//!
//! - the change's event (API.md 9) into `events`: numbered in commit order just before
//!   the transaction's COMMIT by `TenantConn` (which refuses events outside a
//!   transaction), so a rollback leaves no event and a commit never lacks one;
//! - for the stores that keep history (`Store::KEEPS_HISTORY`: marks, attendance,
//!   students), the history entry (API.md 11) into `history`.
//!
//! Events older than `EVENT_RETENTION_DAYS` are pruned by writes: one write in
//! `PRUNE_ONE_IN` deletes a bounded batch of the school's expired events, so the table
//! stops growing past the retention without any process visiting idle schools.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use diesel::prelude::*;
use rand::Rng;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{
    Actor, Store,
    schema::{events, history},
};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

/// What a change did to its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Created,
    Updated,
    Deleted,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Updated => "updated",
            Self::Deleted => "deleted",
        }
    }
}

/// One change of one record, as the store saw it.
pub enum Change<'a, R> {
    Created(&'a R),
    /// An update; a soft delete (`is_deleted` false → true) is recorded as `deleted`, a
    /// restore as `updated` (API.md 9).
    Updated {
        before: &'a R,
        after: &'a R,
    },
    /// A real delete: the record as it was.
    Deleted(&'a R),
}

impl<'a, R> Change<'a, R> {
    /// The record changed: as it is after the change, or as it was before a delete.
    fn record(&self) -> &'a R {
        match *self {
            Self::Created(after) | Self::Updated { after, .. } => after,
            Self::Deleted(before) => before,
        }
    }
}

/// The fields history leaves out of `changes`: the record's identity and bookkeeping,
/// which every write touches.
const BOOKKEEPING: [&str; 5] = ["id", "created_at", "updated_at", "created_by", "updated_by"];

/// Expired events are pruned by one write in this many (on average).
const PRUNE_ONE_IN: u32 = 200;
/// At most this many expired events are deleted by one write.
const PRUNE_BATCH: i64 = 1000;

static RETENTION_DAYS: AtomicU32 = AtomicU32::new(30);

/// Sets how long events are kept (`EVENT_RETENTION_DAYS`); read by every write's pruning.
pub fn set_retention_days(days: u32) {
    RETENTION_DAYS.store(days.max(1), Ordering::Relaxed);
}

pub fn retention_days() -> u32 {
    RETENTION_DAYS.load(Ordering::Relaxed)
}

static HISTORY_WRITES: AtomicBool = AtomicBool::new(true);

/// Sets whether the stores that keep history write it (`HISTORY_WRITES`; on unless a
/// benchmark measures what it costs).
pub fn set_history_writes(on: bool) {
    HISTORY_WRITES.store(on, Ordering::Relaxed);
}

/// Whether `S`'s writes record history: it keeps history and history writes are on.
pub fn keeps_history<S: Store>() -> bool {
    S::KEEPS_HISTORY && HISTORY_WRITES.load(Ordering::Relaxed)
}

/// Records `change` of one of `S`'s records by `actor`: its event and, where `S` keeps
/// history, its history entry.
pub fn record<S: Store>(
    conn: &mut TenantConn,
    actor: &Actor,
    change: Change<'_, S::Record>,
) -> ApiResult<()> {
    record_all::<S>(conn, actor, [change])
}

/// Records `changes` of `S`'s records by `actor`, in order, as [`record`] records each:
/// the events by one statement, the history entries by another (`ROWS_A_STATEMENT` at a
/// time).
pub fn record_all<'a, S: Store>(
    conn: &mut TenantConn,
    actor: &Actor,
    changes: impl IntoIterator<Item = Change<'a, S::Record>>,
) -> ApiResult<()> {
    let changes: Vec<Change<'a, S::Record>> = changes.into_iter().collect();
    if S::CHANGES_READ_SCOPES && !changes.is_empty() {
        // The cached grants carry who reads what (`cache::roles`): every process drops the
        // school's at commit.
        super::roles::announce_change(conn)?;
    }
    let students = match keeps_history::<S>() {
        true => {
            let records: Vec<&S::Record> = changes.iter().map(Change::record).collect();
            Some(S::students_of(conn, &records)?)
        }
        false => None,
    };
    let mut events = Vec::new();
    let mut entries = Vec::new();
    for (index, change) in changes.into_iter().enumerate() {
        let (before, after) = match change {
            Change::Created(after) => (None, Some(json(after)?)),
            Change::Updated { before, after } => (Some(json(before)?), Some(json(after)?)),
            Change::Deleted(before) => (Some(json(before)?), None),
        };
        let action = action_of(before.as_ref(), after.as_ref());
        let record_id = match after.as_ref().or(before.as_ref()) {
            Some(data) => id_of(data)?,
            None => continue,
        };
        if let Some(students) = &students {
            let student = students.get(index).copied().flatten();
            let changes = field_changes(action, before.as_ref(), after.as_ref());
            entries.push((
                history::id.eq(Uuid::new_v4()),
                history::resource.eq(S::NAME),
                history::record_id.eq(record_id),
                history::student_id.eq(student),
                history::actor_type.eq(actor.kind.as_str()),
                history::actor_id.eq(actor.id),
                history::actor_name.eq(actor.name.clone()),
                history::action.eq(action.as_str()),
                history::changes.eq(Value::Object(changes)),
            ));
        }
        let data = after.or(before).unwrap_or_default();
        events.push(event(S::NAME, action, record_id, data));
    }
    insert_events(conn, events)?;
    // Each row's `at` is its own `clock_timestamp()`: the entries keep their order.
    for chunk in entries.chunks(ROWS_A_STATEMENT) {
        diesel::insert_into(history::table)
            .values(chunk)
            .execute(conn.pg())?;
    }
    Ok(())
}

/// Writes one event, `<resource>.<action>` of record `record_id` with `data` (the record as
/// the API answers it); for the records a hook changes besides its own (sessions
/// deactivated by an activation).
pub fn emit(
    conn: &mut TenantConn,
    resource: &str,
    action: Action,
    record_id: Uuid,
    data: &Value,
) -> ApiResult<()> {
    insert_events(conn, vec![event(resource, action, record_id, data.clone())])
}

/// The most rows one change-record statement inserts (bind parameters are bounded).
const ROWS_A_STATEMENT: usize = 1000;

type EventRow = (
    diesel::dsl::Eq<events::id, Uuid>,
    diesel::dsl::Eq<events::type_, String>,
    diesel::dsl::Eq<events::record_id, Uuid>,
    diesel::dsl::Eq<events::data, Value>,
);

fn event(resource: &str, action: Action, record_id: Uuid, data: Value) -> EventRow {
    (
        events::id.eq(Uuid::new_v4()),
        events::type_.eq(format!("{resource}.{}", action.as_str())),
        events::record_id.eq(record_id),
        events::data.eq(data),
    )
}

/// Inserts `rows` in order, each with its place in the transaction (the order its commit
/// numbers them in); then, as often as one write in `PRUNE_ONE_IN` would, prunes.
fn insert_events(conn: &mut TenantConn, rows: Vec<EventRow>) -> ApiResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let first = conn.place_events(rows.len())?;
    let rows: Vec<_> = rows
        .into_iter()
        .zip(first..)
        .map(|(row, place)| (row, events::tx_position.eq(place)))
        .collect();
    for chunk in rows.chunks(ROWS_A_STATEMENT) {
        diesel::insert_into(events::table)
            .values(chunk)
            .execute(conn.pg())?;
    }
    let writes = u32::try_from(rows.len())
        .unwrap_or(u32::MAX)
        .min(PRUNE_ONE_IN);
    if rand::thread_rng().gen_ratio(writes, PRUNE_ONE_IN) {
        prune_expired(conn)?;
    }
    Ok(())
}

/// Deletes a batch of the school's events older than the retention. The newest event is
/// always kept: the next event's number follows it, so a cursor never names two events.
pub fn prune_expired(conn: &mut TenantConn) -> ApiResult<usize> {
    let days = i32::try_from(retention_days()).unwrap_or(i32::MAX);
    Ok(diesel::sql_query(
        "DELETE FROM events WHERE id IN ( \
             SELECT id FROM events \
              WHERE occurred_at < now() - make_interval(days => $1) \
                AND seq < (SELECT max(seq) FROM events) \
              ORDER BY occurred_at LIMIT $2)",
    )
    .bind::<diesel::sql_types::Integer, _>(days)
    .bind::<diesel::sql_types::BigInt, _>(PRUNE_BATCH)
    .execute(conn.pg())?)
}

fn json<R: serde::Serialize>(record: &R) -> ApiResult<Value> {
    serde_json::to_value(record).map_err(ApiError::internal)
}

/// The id of a changed record as answered; the nil id for a record without one (a
/// school's one report settings record).
fn id_of(data: &Value) -> ApiResult<Uuid> {
    let Some(id) = data.get("id") else {
        return Ok(Uuid::nil());
    };
    id.as_str()
        .and_then(|raw| Uuid::parse_str(raw).ok())
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("a changed record with a bad id")))
}

fn is_deleted(record: Option<&Value>) -> bool {
    record
        .and_then(|r| r.get("is_deleted"))
        .and_then(Value::as_bool)
        == Some(true)
}

fn action_of(before: Option<&Value>, after: Option<&Value>) -> Action {
    match (before, after) {
        (None, _) => Action::Created,
        (Some(_), None) => Action::Deleted,
        (Some(_), Some(_)) if !is_deleted(before) && is_deleted(after) => Action::Deleted,
        (Some(_), Some(_)) => Action::Updated,
    }
}

/// `{field: [old, new]}`: every field (but bookkeeping) of a created record as
/// `[null, value]`, of a deleted one as `[value, null]`, and of an update the fields
/// that differ.
fn field_changes(
    action: Action,
    before: Option<&Value>,
    after: Option<&Value>,
) -> Map<String, Value> {
    let fields = |record: Option<&Value>| -> Map<String, Value> {
        let mut fields = record
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        fields.retain(|name, _| !BOOKKEEPING.contains(&name.as_str()));
        fields
    };
    let (old, new) = (fields(before), fields(after));
    let pair = |old: &Value, new: &Value| Value::Array(vec![old.clone(), new.clone()]);
    match action {
        Action::Created => new
            .iter()
            .map(|(k, v)| (k.clone(), pair(&Value::Null, v)))
            .collect(),
        Action::Deleted => old
            .iter()
            .map(|(k, v)| (k.clone(), pair(v, &Value::Null)))
            .collect(),
        Action::Updated => new
            .iter()
            .filter(|(k, v)| old.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), pair(old.get(k).unwrap_or(&Value::Null), v)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_soft_delete_is_deleted_and_a_restore_updated() {
        let live = json!({"id": "x", "is_deleted": false});
        let gone = json!({"id": "x", "is_deleted": true});
        assert_eq!(action_of(Some(&live), Some(&gone)), Action::Deleted);
        assert_eq!(action_of(Some(&gone), Some(&live)), Action::Updated);
        assert_eq!(action_of(None, Some(&live)), Action::Created);
        assert_eq!(action_of(Some(&live), None), Action::Deleted);
    }

    #[test]
    fn changes_name_the_fields_that_moved_without_bookkeeping() {
        let before = json!({"id": "x", "mark": 38, "comment": "ok", "updated_at": "a"});
        let after = json!({"id": "x", "mark": 52, "comment": "ok", "updated_at": "b"});
        let updated = field_changes(Action::Updated, Some(&before), Some(&after));
        assert_eq!(Value::Object(updated), json!({"mark": [38, 52]}));
        let created = field_changes(Action::Created, None, Some(&after));
        assert_eq!(
            Value::Object(created),
            json!({"mark": [null, 52], "comment": [null, "ok"]})
        );
        let deleted = field_changes(Action::Deleted, Some(&before), None);
        assert_eq!(
            Value::Object(deleted),
            json!({"mark": [38, null], "comment": ["ok", null]})
        );
    }
}
