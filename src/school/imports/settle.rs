//! The one mechanism every kind ends with: each good row is a [`RowWrite`] (create, update
//! or leave a record alone); when any row was bad nothing is written and every bad row is
//! answered; otherwise the writes are counted and, unless a dry run, made in order.
//! [`Write`] is the row write of any store: its creates in a row are made together, by
//! the store's create of many (a few multi-row statements for a thousand rows, the same
//! events and history as one create each); a kind whose record is more than one store's
//! row (a teacher: an account and a profile) has its own, written row by row.

use std::collections::HashMap;

use uuid::Uuid;

use super::{Cells, Refusal, RowError};
use crate::{
    error::ApiResult,
    school::{Actor, ListQuery, Store, Target},
    tenancy::TenantConn,
};

/// (created, updated, unchanged), or the bad rows.
pub type Counts = Result<(usize, usize, usize), Refusal>;

/// What a row does to its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    Created,
    Updated,
    Unchanged,
}

/// A good row's write.
pub trait RowWrite: Sized {
    fn effect(&self) -> Effect;
    fn write(self, conn: &mut TenantConn, actor: &Actor) -> ApiResult<()>;

    /// Writes `writes` in order; one after the other unless a kind writes many at once.
    fn write_all(writes: Vec<Self>, conn: &mut TenantConn, actor: &Actor) -> ApiResult<()> {
        writes.into_iter().try_for_each(|w| w.write(conn, actor))
    }
}

/// What one row does to a record of store `S`, written through the store.
pub enum Write<S: Store> {
    Create(S::Parent, S::New),
    Update(Target<S::Parent>, S::Changes),
    Unchanged,
}

impl<S: Store> Write<S> {
    /// An update of the live record `id` under `parent`, or nothing when `same`.
    pub fn update(parent: S::Parent, id: Uuid, changes: S::Changes, same: bool) -> Self {
        match same {
            true => Self::Unchanged,
            false => Self::Update(Target::live(parent, id), changes),
        }
    }
}

impl<S: Store> RowWrite for Write<S> {
    fn effect(&self) -> Effect {
        match self {
            Self::Create(..) => Effect::Created,
            Self::Update(..) => Effect::Updated,
            Self::Unchanged => Effect::Unchanged,
        }
    }

    fn write(self, conn: &mut TenantConn, actor: &Actor) -> ApiResult<()> {
        Self::write_all(vec![self], conn, actor)
    }

    /// The creates of a run of rows (under one parent) by one create of many, each update
    /// by itself, in the rows' order.
    fn write_all(writes: Vec<Self>, conn: &mut TenantConn, actor: &Actor) -> ApiResult<()> {
        let mut run: Option<(S::Parent, Vec<S::New>)> = None;
        for w in writes {
            match w {
                Self::Create(parent, new) => match &mut run {
                    Some((under, news)) if *under == parent => news.push(new),
                    _ => {
                        create_run::<S>(conn, run.replace((parent, vec![new])), actor)?;
                    }
                },
                Self::Update(target, changes) => {
                    create_run::<S>(conn, run.take(), actor)?;
                    S::update(conn, target, changes, actor)?;
                }
                Self::Unchanged => {}
            }
        }
        create_run::<S>(conn, run, actor)
    }
}

fn create_run<S: Store>(
    conn: &mut TenantConn,
    run: Option<(S::Parent, Vec<S::New>)>,
    actor: &Actor,
) -> ApiResult<()> {
    if let Some((parent, news)) = run {
        S::create_many(conn, parent, news, actor)?;
    }
    Ok(())
}

/// The rows of a sheet as a kind reads them: every bad cell collected, the good rows'
/// writes in order.
pub struct Rows<W> {
    errors: Vec<RowError>,
    writes: Vec<W>,
}

impl<W: RowWrite> Rows<W> {
    /// Reads each row with `read`, which reports bad cells on the row and answers its write
    /// when the row is good.
    pub fn read<'a>(
        rows: Vec<Cells<'a>>,
        mut read: impl FnMut(&mut Cells<'a>) -> ApiResult<Option<W>>,
    ) -> ApiResult<Self> {
        let mut all = Self {
            errors: Vec::new(),
            writes: Vec::new(),
        };
        for mut cells in rows {
            let write = read(&mut cells)?;
            if cells.errors.is_empty() {
                all.writes.extend(write);
            }
            all.errors.append(&mut cells.errors);
        }
        Ok(all)
    }

    /// Counts the writes or, when any row was bad, answers every bad row; then (unless a
    /// dry run, and only when every row was good) writes them.
    pub fn settle(self, conn: &mut TenantConn, dry_run: bool, actor: &Actor) -> ApiResult<Counts> {
        if !self.errors.is_empty() {
            return Ok(Err(Refusal::Rows(self.errors)));
        }
        let mut counts = (0, 0, 0);
        for w in &self.writes {
            match w.effect() {
                Effect::Created => counts.0 += 1,
                Effect::Updated => counts.1 += 1,
                Effect::Unchanged => counts.2 += 1,
            }
        }
        if !dry_run {
            W::write_all(self.writes, conn, actor)?;
        }
        Ok(Ok(counts))
    }
}

/// Keeps the first row of each natural key; a later one is a bad row.
pub struct Keys(HashMap<String, usize>);

impl Keys {
    pub fn new() -> Self {
        Self(HashMap::new())
    }

    /// Whether `key` is new to the file (else the row gets a `duplicate_key` error on
    /// `column`, naming `shown`).
    pub fn first(&mut self, cells: &mut Cells<'_>, column: &str, key: &str, shown: &str) -> bool {
        match self.0.get(key) {
            Some(row) => {
                let message = format!("\"{shown}\" is also on row {row}");
                cells.error(column, "duplicate_key", message);
                false
            }
            None => {
                self.0.insert(key.to_owned(), cells.row());
                true
            }
        }
    }
}

/// Every live record of a store under `parent` (imports match against all of them).
pub fn all_live<S: Store>(conn: &mut TenantConn, parent: S::Parent) -> ApiResult<Vec<S::Record>> {
    let everything = ListQuery {
        page: 1,
        page_size: i64::from(i32::MAX),
        include_deleted: false,
        search: None,
        filter: Default::default(),
    };
    Ok(S::list(conn, parent, &everything)?.1)
}

/// A look-up of live records by natural key, for the cells that name them.
pub struct Named<'m> {
    pub what: &'static str,
    pub key: &'static str,
    pub ids: &'m HashMap<String, Uuid>,
}

impl Named<'_> {
    /// The record the cell of `column` names (`Some(None)`: an empty cell), or a bad cell.
    pub fn cell(&self, cells: &mut Cells<'_>, column: &str) -> Option<Option<Uuid>> {
        let Some(key) = cells.get(column) else {
            return Some(None);
        };
        match self.ids.get(key) {
            Some(id) => Some(Some(*id)),
            None => {
                let message = format!("no live {} has the {} \"{key}\"", self.what, self.key);
                cells.error(column, "unknown_reference", message);
                None
            }
        }
    }

    /// The record a required cell names, or a bad cell.
    pub fn required(&self, cells: &mut Cells<'_>, column: &str) -> Option<Uuid> {
        match self.cell(cells, column)? {
            Some(id) => Some(id),
            None => {
                cells.error(column, "required", "this cell must not be empty");
                None
            }
        }
    }
}
