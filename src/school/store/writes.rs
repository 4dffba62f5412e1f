//! The creates and updates of [`Store`], for any number of records: each table written by
//! one multi-row statement (a create's rows `BATCH` at a time), the hooks given every row
//! at once, the events and history of every record in one statement each. One record is
//! the case of one: a POST and a 5,000-row import take the same statements. Each runs in
//! the caller's transaction, or in one of its own (`TenantConn::writing`): the commit
//! numbers its events.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::{Readable, SEALED, Store, note_disclosures};
use crate::{
    error::{ApiError, ApiResult},
    school::{
        Actor, FromRows, Targets,
        change_log::{self, Change},
    },
    tenancy::TenantConn,
};

/// The most records one create writes by one statement (a statement's bind parameters are
/// bounded: 65,535).
pub const BATCH: usize = 1000;

/// Creates a record under `parent` for each of `news`, in order, `BATCH` at a time; with
/// `unless_present`, those that conflict on a unique index are left out (and not
/// answered).
pub(super) fn create<S: Store>(
    conn: &mut TenantConn,
    parent: S::Parent,
    news: Vec<S::New>,
    actor: &Actor,
    unless_present: bool,
) -> ApiResult<Vec<S::Record>> {
    conn.writing(|conn| create_in::<S>(conn, parent, news, actor, unless_present))
}

fn create_in<S: Store>(
    conn: &mut TenantConn,
    parent: S::Parent,
    news: Vec<S::New>,
    actor: &Actor,
    unless_present: bool,
) -> ApiResult<Vec<S::Record>> {
    let mut records = Vec::with_capacity(news.len());
    let mut news = news.into_iter().peekable();
    while news.peek().is_some() {
        let batch: Vec<S::New> = news.by_ref().take(BATCH).collect();
        records.extend(create_batch::<S>(
            conn,
            parent,
            batch,
            actor,
            unless_present,
        )?);
    }
    Ok(records)
}

fn create_batch<S: Store>(
    conn: &mut TenantConn,
    parent: S::Parent,
    mut news: Vec<S::New>,
    actor: &Actor,
    unless_present: bool,
) -> ApiResult<Vec<S::Record>> {
    S::before_create(conn, parent, &mut news)?;
    let ids: Vec<Uuid> = news.iter().map(|_| Uuid::new_v4()).collect();
    let inserted = S::insert(
        SEALED,
        conn,
        parent,
        &news,
        &ids,
        actor.user_id(),
        unless_present,
    )?;
    let mut by_id: HashMap<Uuid, S::Row> =
        inserted.into_iter().map(|r| (S::row_id(&r), r)).collect();
    let (rows, news): (Vec<S::Row>, Vec<S::New>) = ids
        .iter()
        .zip(news)
        .filter_map(|(id, new)| by_id.remove(id).map(|row| (row, new)))
        .unzip();
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    S::after_create(conn, &rows, &news, actor)?;
    let records = S::Record::from_rows(conn, rows)?;
    change_log::record_all::<S>(conn, actor, records.iter().map(Change::Created))?;
    Ok(records)
}

/// Sets `changes` on every record `targets` names (404, nothing written, when one names
/// none), answering them in the order of `targets.ids`.
pub(super) fn update<S: Store>(
    conn: &mut TenantConn,
    targets: Targets<S::Parent>,
    changes: S::Changes,
    actor: &Actor,
) -> ApiResult<Vec<S::Record>> {
    conn.writing(|conn| update_in::<S>(conn, targets, changes, actor))
}

fn update_in<S: Store>(
    conn: &mut TenantConn,
    mut targets: Targets<S::Parent>,
    mut changes: S::Changes,
    actor: &Actor,
) -> ApiResult<Vec<S::Record>> {
    let mut seen = HashSet::new();
    targets.ids.retain(|id| seen.insert(*id));
    if targets.ids.is_empty() {
        return Ok(Vec::new());
    }
    // Where history is kept the rows are locked first, so the entries' old values are the
    // ones the write replaces, whatever writes concurrently.
    if change_log::keeps_history::<S>() {
        S::lock_rows(SEALED, conn, &targets.ids)?;
    }
    let before = find_many::<S>(conn, &targets)?;
    if before.len() != targets.ids.len() {
        return Err(ApiError::not_found());
    }
    S::before_update(conn, &targets, &mut changes)?;
    let updated = S::update_given(SEALED, conn, &targets, &changes, actor.user_id())?;
    let rows = in_order::<S>(updated, &targets.ids);
    if rows.len() != targets.ids.len() {
        return Err(ApiError::not_found());
    }
    S::after_update(conn, &rows, &changes, actor)?;
    let after = S::Record::from_rows(conn, rows)?;
    let changed = before
        .iter()
        .zip(&after)
        .map(|(before, after)| Change::Updated { before, after });
    change_log::record_all::<S>(conn, actor, changed)?;
    Ok(after)
}

/// The readable records of `targets` that exist, in the order of `targets.ids`.
pub(super) fn find_many<S: Store>(
    conn: &mut TenantConn,
    targets: &Targets<S::Parent>,
) -> ApiResult<Vec<S::Record>> {
    if targets.ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = S::select(SEALED, targets.parent, targets.include_deleted);
    let Some(rows) = Readable::<S>::of(conn).apply(rows) else {
        return Ok(Vec::new());
    };
    let rows = S::with_ids(SEALED, rows, &targets.ids);
    let limit = i64::try_from(targets.ids.len()).unwrap_or(i64::MAX);
    let found = S::load(SEALED, conn, rows, 0, limit)?;
    let records = S::Record::from_rows(conn, in_order::<S>(found, &targets.ids))?;
    note_disclosures::<S>(conn, &records)?;
    Ok(records)
}

/// `rows` in the order of `ids` (those of `ids` with no row left out).
fn in_order<S: Store>(rows: Vec<S::Row>, ids: &[Uuid]) -> Vec<S::Row> {
    let mut by_id: HashMap<Uuid, S::Row> = rows.into_iter().map(|r| (S::row_id(&r), r)).collect();
    ids.iter().filter_map(|id| by_id.remove(id)).collect()
}
