//! `Store`: the one trait of a school resource. It reads and writes the resource's records
//! under their parent, never past it, and keeps soft-deleted records hidden unless asked
//! for: every method below does that through its table's statements ([`Table`], described
//! by `school_table!`). A store writes only what it does differently, in the hooks
//! (sessions' activation, departments' teachers, teachers' names and search); the
//! operations themselves are the default methods here, one body for every resource.
//!
//! Every write is a write of many records (`writes`): `create` is `create_many` of one, so a
//! bulk import and a single POST take the same statements, hooks, events and history.
//!
//! A store is a unit type of its own (`Classes`, `Sessions`), not the row type: the row
//! has no methods that write, and the API's resource is the store itself
//! (`api::school::crud::SchoolResource: Store`), so it cannot be paired with another.

mod writes;

use std::{collections::HashSet, marker::PhantomData, sync::Arc};

use diesel::{OptionalExtension, QueryDsl, QueryResult, RunQueryDsl};
use uuid::Uuid;

use super::{
    Actor, ListQuery, Table, Target, Targets,
    change_log::{self, Change},
    schema::live_counts,
};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

/// The key to a table's statements: only this module makes one (the field is private), so
/// only the methods of [`Store`] run them.
#[derive(Clone, Copy)]
pub struct Sealed(());

const SEALED: Sealed = Sealed(());

/// How a store's records are made from its rows: as they are (every row type answers
/// itself), or with what other tables add (one query for all the rows, in order).
pub trait FromRows<Row>: Sized {
    fn from_rows(conn: &mut TenantConn, rows: Vec<Row>) -> ApiResult<Vec<Self>>;
}

impl<T> FromRows<T> for T {
    fn from_rows(_: &mut TenantConn, rows: Vec<T>) -> ApiResult<Vec<T>> {
        Ok(rows)
    }
}

/// A list's narrowing beyond the table's search columns (see [`Store::narrowing`]).
pub type Narrowing<S> = Box<dyn Fn(<S as Table>::Query) -> <S as Table>::Query>;

/// The row of `live_counts` (tenant migration `live_counts`) that keeps a table's number
/// of live rows, read by its unfiltered lists. Only a top-level table's count can be kept
/// there (one number per table, not per parent), so only `LiveCount<()>` can be made.
pub struct LiveCount<Parent> {
    table: &'static str,
    parent: PhantomData<Parent>,
}

impl LiveCount<()> {
    /// The count kept under `table`, the table's own name (the triggers write it so).
    pub const fn kept_as(table: &'static str) -> Self {
        Self {
            table,
            parent: PhantomData,
        }
    }
}

impl<P> LiveCount<P> {
    /// The kept count; `None` where the database keeps none (Citus: no triggers there).
    fn read(&self, conn: &mut TenantConn) -> QueryResult<Option<i64>> {
        live_counts::table
            .find(self.table)
            .select(live_counts::live)
            .first(conn.pg())
            .optional()
    }
}

pub trait Store: Table {
    /// The record as answered (and as its change events carry it).
    type Record: FromRows<Self::Row> + serde::Serialize + Send + 'static;

    /// The resource's singular snake_case name: the `<resource>` of its events' types
    /// (`mark.updated`) and of its history entries.
    const NAME: &'static str;

    /// Whether every create, update and delete also writes a history entry (API.md 11).
    const KEEPS_HISTORY: bool = false;

    /// Whether a write changes which records a reader is narrowed to (a guardian's
    /// children): then every server process drops the school's cached grants, which carry
    /// them (`NOTIFY school_roles` at commit, `change_log`).
    const CHANGES_READ_SCOPES: bool = false;

    // The hooks: where a resource differs. Each does nothing unless a store says otherwise.

    /// Where the database keeps the count of live records (tables that grow with a school:
    /// students, attendance); `None`: lists count the rows.
    const LIVE_COUNT: Option<LiveCount<Self::Parent>> = None;

    /// What a reader narrowed to some students (a guardian: `ReadScope::Students`) may read
    /// of this resource: the rows about those students, or what those rows belong to.
    /// `None`, the default: nothing at all (a resource without a rule is never shown).
    fn about_students(_students: &Arc<[Uuid]>) -> Option<Narrowing<Self>> {
        None
    }

    /// What the disclosure log calls this resource's records when they are a student's
    /// records (`"student"`, `"mark"`); `None` (the default): reading them discloses
    /// nothing about a student.
    const STUDENT_RECORD: Option<&'static str> = None;

    /// The students `records` are about, for the disclosure log: asked only when
    /// `STUDENT_RECORD` is set and the reader is a party outside the school.
    fn students_in(_conn: &mut TenantConn, _records: &[Self::Record]) -> ApiResult<Vec<Uuid>> {
        Ok(Vec::new())
    }

    /// Narrows a list further, after `?search=` over the table's search columns (teachers
    /// search their users' names); `None` when `query` asks for no narrowing.
    fn narrowing(_conn: &mut TenantConn, _query: &ListQuery) -> ApiResult<Option<Narrowing<Self>>> {
        Ok(None)
    }

    /// The student each of `records` is about, in order, for history's `?student=`
    /// (stores that keep history).
    fn students_of(
        _conn: &mut TenantConn,
        records: &[&Self::Record],
    ) -> ApiResult<Vec<Option<Uuid>>> {
        Ok(vec![None; records.len()])
    }

    /// Before the records `news` are created under `parent`, in the write's transaction.
    fn before_create(
        _conn: &mut TenantConn,
        _parent: Self::Parent,
        _news: &mut [Self::New],
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Before a replace (PUT) of `target` is written.
    fn before_replace(
        _conn: &mut TenantConn,
        _target: Target<Self::Parent>,
        _new: &mut Self::New,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Before an update (PATCH) of `targets`, each with the same `changes`, is written.
    fn before_update(
        _conn: &mut TenantConn,
        _targets: &Targets<Self::Parent>,
        _changes: &mut Self::Changes,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// After `rows` were created, each from the `news` at its place (rows of other tables
    /// that go with them), by `actor`: the writes a hook makes through other stores name
    /// the same actor, so their events and history say who acted. A hook writes for all
    /// the rows at once (its own writes of many), not row by row.
    fn after_create(
        _conn: &mut TenantConn,
        _rows: &[Self::Row],
        _news: &[Self::New],
        _actor: &Actor,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// After `row` was replaced with `new` by `actor`.
    fn after_replace(
        _conn: &mut TenantConn,
        _row: &Self::Row,
        _new: &Self::New,
        _actor: &Actor,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// After `rows` were updated with `changes` by `actor`.
    fn after_update(
        _conn: &mut TenantConn,
        _rows: &[Self::Row],
        _changes: &Self::Changes,
        _actor: &Actor,
    ) -> ApiResult<()> {
        Ok(())
    }

    // The operations. No store overrides them: its hooks run inside.

    /// Resolves a path's parent ids (outermost first): 404 when one is missing,
    /// soft-deleted or under another parent.
    fn scope(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Self::Parent> {
        Self::resolve_parent(conn, parents)
    }

    /// One page of the records under `parent` (order `created_at, id`) and the count of
    /// all that match: those the connection's reader may read (`about_students`),
    /// soft-deleted ones only when asked for, `?search=` over the search columns, then the
    /// store's `narrowing`. The count of every live record is read where
    /// the database keeps it (`LIVE_COUNT`), else counted.
    fn list(
        conn: &mut TenantConn,
        parent: Self::Parent,
        query: &ListQuery,
    ) -> ApiResult<(i64, Vec<Self::Record>)> {
        let pattern = query.search.as_deref().map(crate::db::like_pattern);
        let readable = Readable::<Self>::of(conn);
        if matches!(readable, Readable::Nothing) {
            return Ok((0, Vec::new()));
        }
        let narrowing = Self::narrowing(conn, query)?;
        let every_live = pattern.is_none()
            && narrowing.is_none()
            && matches!(readable, Readable::All)
            && !query.include_deleted;
        let matching = || {
            let mut rows = Self::select(SEALED, parent, query.include_deleted);
            if let Readable::Narrowed(narrowing) = &readable {
                rows = narrowing(rows);
            }
            if let Some(pattern) = &pattern {
                rows = Self::search(SEALED, rows, pattern);
            }
            match &narrowing {
                Some(narrowing) => narrowing(rows),
                None => rows,
            }
        };
        let kept = match &Self::LIVE_COUNT {
            Some(live_count) if every_live => live_count.read(conn)?,
            _ => None,
        };
        let count = match kept {
            Some(count) => count,
            None => Self::count(SEALED, conn, matching())?,
        };
        let rows = Self::load(SEALED, conn, matching(), query.offset(), query.page_size)?;
        let records = Self::Record::from_rows(conn, rows)?;
        note_disclosures::<Self>(conn, &records)?;
        Ok((count, records))
    }

    /// The record `target` names, if there is one the connection's reader may read.
    fn find(
        conn: &mut TenantConn,
        target: Target<Self::Parent>,
    ) -> ApiResult<Option<Self::Record>> {
        let rows = Self::select(SEALED, target.parent, target.include_deleted);
        let Some(rows) = Readable::<Self>::of(conn).apply(rows) else {
            return Ok(None);
        };
        let mut found = Self::load(SEALED, conn, Self::with_id(SEALED, rows, target.id), 0, 1)?;
        let Some(row) = found.pop() else {
            return Ok(None);
        };
        let record = record_of::<Self>(conn, row)?;
        note_disclosures::<Self>(conn, std::slice::from_ref(&record))?;
        Ok(Some(record))
    }

    /// The records `targets` names that exist and the connection's reader may read, in
    /// the order of `targets.ids` (one query).
    fn find_many(
        conn: &mut TenantConn,
        targets: &Targets<Self::Parent>,
    ) -> ApiResult<Vec<Self::Record>> {
        writes::find_many::<Self>(conn, targets)
    }

    /// Every write below records its change (`change_log::record`: the event, and history
    /// where the store keeps it) in the write's transaction: the caller's, or one of its
    /// own when none is open (`TenantConn::writing`; its commit numbers the events).
    fn create(
        conn: &mut TenantConn,
        parent: Self::Parent,
        new: Self::New,
        actor: &Actor,
    ) -> ApiResult<Self::Record> {
        writes::create::<Self>(conn, parent, vec![new], actor, false)?
            .pop()
            .ok_or_else(ApiError::not_found)
    }

    /// Creates a record under `parent` for each of `news`, in order: one multi-row
    /// statement per table for `writes::BATCH` records at a time, with the same hooks,
    /// events and history as a create of each.
    fn create_many(
        conn: &mut TenantConn,
        parent: Self::Parent,
        news: Vec<Self::New>,
        actor: &Actor,
    ) -> ApiResult<Vec<Self::Record>> {
        writes::create::<Self>(conn, parent, news, actor, false)
    }

    /// Creates the record unless a live one conflicts on a unique index: `None` then (the
    /// concurrent-safe "create if missing").
    fn create_unless_present(
        conn: &mut TenantConn,
        parent: Self::Parent,
        new: Self::New,
        actor: &Actor,
    ) -> ApiResult<Option<Self::Record>> {
        Ok(writes::create::<Self>(conn, parent, vec![new], actor, true)?.pop())
    }

    /// Sets every writable field (PUT); 404 when `target` names no record.
    fn replace(
        conn: &mut TenantConn,
        target: Target<Self::Parent>,
        mut new: Self::New,
        actor: &Actor,
    ) -> ApiResult<Self::Record> {
        conn.writing(|conn| {
            let before = record_before::<Self>(conn, target)?;
            Self::before_replace(conn, target, &mut new)?;
            let row = Self::update_all(SEALED, conn, target, &new, actor.user_id())?
                .ok_or_else(ApiError::not_found)?;
            Self::after_replace(conn, &row, &new, actor)?;
            let after = record_of::<Self>(conn, row)?;
            change_log::record::<Self>(
                conn,
                actor,
                Change::Updated {
                    before: &before,
                    after: &after,
                },
            )?;
            Ok(after)
        })
    }

    /// Sets the given fields (PATCH); 404 when `target` names no record.
    fn update(
        conn: &mut TenantConn,
        target: Target<Self::Parent>,
        changes: Self::Changes,
        actor: &Actor,
    ) -> ApiResult<Self::Record> {
        writes::update::<Self>(conn, target.into(), changes, actor)?
            .pop()
            .ok_or_else(ApiError::not_found)
    }

    /// Sets the same given fields of every record `targets` names, answering them in the
    /// order of `targets.ids`: one statement, with the same hooks, events and history as
    /// an update of each; 404 (nothing written) when one of them names no record.
    fn update_many(
        conn: &mut TenantConn,
        targets: Targets<Self::Parent>,
        changes: Self::Changes,
        actor: &Actor,
    ) -> ApiResult<Vec<Self::Record>> {
        writes::update::<Self>(conn, targets, changes, actor)
    }

    /// A real delete: 404 when `target` names no record, 409 while others reference it.
    fn delete(conn: &mut TenantConn, target: Target<Self::Parent>, actor: &Actor) -> ApiResult<()> {
        conn.writing(|conn| {
            let before = record_before::<Self>(conn, target)?;
            match Self::delete_rows(SEALED, conn, target)? {
                0 => Err(ApiError::not_found()),
                _ => change_log::record::<Self>(conn, actor, Change::Deleted(&before)),
            }
        })
    }

    /// Whether a live record has this id, under any parent: the rule for references.
    fn live_exists(conn: &mut TenantConn, id: Uuid) -> ApiResult<bool> {
        Ok(Self::live_ids(conn, &[id])?.contains(&id))
    }

    /// Which of `ids` name live records: one query, however many ids.
    fn live_ids(conn: &mut TenantConn, ids: &[Uuid]) -> ApiResult<HashSet<Uuid>> {
        Ok(Self::live_rows(SEALED, conn, ids)?.into_iter().collect())
    }
}

/// The record `target` names before a write changes it (404 when there is none). Where
/// history is kept the row is locked first, so the entry's old values are the ones the
/// write replaces, whatever writes concurrently.
fn record_before<S: Store>(
    conn: &mut TenantConn,
    target: Target<S::Parent>,
) -> ApiResult<S::Record> {
    if change_log::keeps_history::<S>() {
        S::lock_rows(SEALED, conn, &[target.id])?;
    }
    S::find(conn, target)?.ok_or_else(ApiError::not_found)
}

/// Which of a store's rows the connection's reader may read.
enum Readable<S: Store> {
    /// Every row (the school's own staff, its keys).
    All,
    /// The rows about the reader's students (`Store::about_students`).
    Narrowed(Narrowing<S>),
    /// None (a resource without a rule for them).
    Nothing,
}

impl<S: Store> Readable<S> {
    fn of(conn: &TenantConn) -> Self {
        match conn.read_scope().students() {
            None => Self::All,
            Some(students) => S::about_students(students).map_or(Self::Nothing, Self::Narrowed),
        }
    }

    /// `rows` narrowed to the readable ones; `None` when none are.
    fn apply(&self, rows: S::Query) -> Option<S::Query> {
        match self {
            Self::All => Some(rows),
            Self::Narrowed(narrowing) => Some(narrowing(rows)),
            Self::Nothing => None,
        }
    }
}

/// Notes the students `records` are about as disclosed, when the reader is a party
/// outside the school and the records are a student's.
fn note_disclosures<S: Store>(conn: &mut TenantConn, records: &[S::Record]) -> ApiResult<()> {
    let Some(what) = S::STUDENT_RECORD.filter(|_| conn.reader().is_disclosing()) else {
        return Ok(());
    };
    let students = S::students_in(conn, records)?;
    conn.reader().disclosed(students, what);
    Ok(())
}

/// The record of one row.
fn record_of<S: Store>(conn: &mut TenantConn, row: S::Row) -> ApiResult<S::Record> {
    S::Record::from_rows(conn, vec![row])?
        .pop()
        .ok_or_else(ApiError::not_found)
}

/// The parent of a top-level store: a path with no parent ids.
pub fn top_level(_: &mut TenantConn, parents: &[Uuid]) -> ApiResult<()> {
    match parents {
        [] => Ok(()),
        _ => Err(ApiError::not_found()),
    }
}

/// The parent of a store nested in `P`: the last of `parents` must name a live record of
/// `P` under the ones before it.
pub fn nested_in<P: Store>(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Uuid> {
    let (&id, outer) = parents.split_last().ok_or_else(ApiError::not_found)?;
    let grandparent = P::scope(conn, outer)?;
    let rows = Readable::<P>::of(conn)
        .apply(P::select(SEALED, grandparent, false))
        .ok_or_else(ApiError::not_found)?;
    let rows = P::with_id(SEALED, rows, id);
    match P::count(SEALED, conn, rows)? {
        0 => Err(ApiError::not_found()),
        _ => Ok(id),
    }
}
