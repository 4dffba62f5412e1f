//! `Collection`: what the generic CRUD handlers need of a school resource. A collection is
//! backed by one [`Table`] (`Rows`) and answers `Record`s made from its rows; every method
//! has the plain default (the table's query, then `records`), so a collection writes only
//! what it does differently. Every `Table` is a collection of its own rows.

use uuid::Uuid;

use crate::{
    error::{ApiError, ApiResult},
    school::{Actor, ListQuery, Table},
    tenancy::TenantConn,
};

/// The form of a create or replace of `C`.
pub type New<C> = <<C as Collection>::Rows as Table>::New;
/// The form of a patch of `C`.
pub type Changes<C> = <<C as Collection>::Rows as Table>::Changes;
/// What the parent ids of `C`'s paths resolve to (`()` for top-level resources).
pub type Scope<C> = <<C as Collection>::Rows as Table>::Parent;

pub trait Collection: Send + 'static {
    /// The table behind the collection.
    type Rows: Table;
    /// The record as answered.
    type Record: Send + 'static;

    /// The records of `rows`, in order (one query for all of them, when it takes one).
    fn records(conn: &mut TenantConn, rows: Vec<Self::Rows>) -> ApiResult<Vec<Self::Record>>;

    fn record(conn: &mut TenantConn, row: Self::Rows) -> ApiResult<Self::Record> {
        Self::records(conn, vec![row])?
            .pop()
            .ok_or_else(ApiError::not_found)
    }

    /// 404 when a parent is missing, deleted or under another parent.
    fn scope(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Scope<Self>> {
        Self::Rows::parent_scope(conn, parents)
    }

    fn list(
        conn: &mut TenantConn,
        scope: Scope<Self>,
        query: &ListQuery,
    ) -> ApiResult<(i64, Vec<Self::Record>)> {
        let (count, rows) = Self::Rows::page(conn, scope, query)?;
        Ok((count, Self::records(conn, rows)?))
    }

    fn find(
        conn: &mut TenantConn,
        scope: Scope<Self>,
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<Self::Record>> {
        Self::Rows::get(conn, scope, id, include_deleted)?
            .map(|row| Self::record(conn, row))
            .transpose()
    }

    fn create(
        conn: &mut TenantConn,
        scope: Scope<Self>,
        new: New<Self>,
        actor: Actor,
    ) -> ApiResult<Self::Record> {
        let row = Self::Rows::insert(conn, scope, &new, actor)?;
        Self::record(conn, row)
    }

    fn replace(
        conn: &mut TenantConn,
        _scope: Scope<Self>,
        id: Uuid,
        new: New<Self>,
        actor: Actor,
    ) -> ApiResult<Self::Record> {
        let row = Self::Rows::overwrite(conn, id, &new, actor)?;
        Self::record(conn, row)
    }

    fn update(
        conn: &mut TenantConn,
        _scope: Scope<Self>,
        id: Uuid,
        changes: Changes<Self>,
        actor: Actor,
    ) -> ApiResult<Self::Record> {
        let row = Self::Rows::change(conn, id, &changes, actor)?;
        Self::record(conn, row)
    }

    /// A real delete; 409 while other records reference it.
    fn delete(conn: &mut TenantConn, _scope: Scope<Self>, id: Uuid) -> ApiResult<()> {
        Self::Rows::remove(conn, id)
    }
}

/// A table whose rows are answered as they are.
impl<T: Table> Collection for T {
    type Rows = T;
    type Record = T;

    fn records(_: &mut TenantConn, rows: Vec<T>) -> ApiResult<Vec<T>> {
        Ok(rows)
    }
}
