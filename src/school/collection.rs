//! `Collection`: what the generic CRUD handlers need of a school resource. Every [`Table`]
//! is a collection of its own records; resources whose record is more than one row
//! (departments with their teachers, teachers with their names, roles) or whose writes do
//! more (sessions) implement it themselves, on top of their table's queries.

use uuid::Uuid;

use crate::{
    error::ApiResult,
    school::{Actor, Incomplete, ListQuery, Table},
    tenancy::TenantConn,
};

pub trait Collection: Send + 'static {
    /// What the path's parent ids resolve to (`()` for top-level resources).
    type Scope: Send + Sync + 'static;
    /// The record as answered.
    type Record: Send + 'static;
    /// Every writable field, as create and replace give them.
    type New: TryFrom<Self::Changes, Error = Incomplete> + Send + 'static;
    /// The fields a patch gives.
    type Changes: Send + 'static;

    /// 404 when a parent is missing, deleted or under another parent.
    fn scope(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Self::Scope>;

    fn list(
        conn: &mut TenantConn,
        scope: &Self::Scope,
        query: &ListQuery,
    ) -> ApiResult<(i64, Vec<Self::Record>)>;

    fn find(
        conn: &mut TenantConn,
        scope: &Self::Scope,
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<Self::Record>>;

    fn create(
        conn: &mut TenantConn,
        scope: &Self::Scope,
        new: Self::New,
        actor: Actor,
    ) -> ApiResult<Self::Record>;

    fn replace(
        conn: &mut TenantConn,
        scope: &Self::Scope,
        id: Uuid,
        new: Self::New,
        actor: Actor,
    ) -> ApiResult<Self::Record>;

    fn update(
        conn: &mut TenantConn,
        scope: &Self::Scope,
        id: Uuid,
        changes: Self::Changes,
        actor: Actor,
    ) -> ApiResult<Self::Record>;

    /// A real delete; 409 while other records reference it.
    fn delete(conn: &mut TenantConn, scope: &Self::Scope, id: Uuid) -> ApiResult<()>;
}

impl<T> Collection for T
where
    T: Table,
    T::New: TryFrom<T::Changes, Error = Incomplete>,
{
    type Scope = T::Parent;
    type Record = T;
    type New = T::New;
    type Changes = T::Changes;

    fn scope(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<T::Parent> {
        T::scope(conn, parents)
    }

    fn list(
        conn: &mut TenantConn,
        parent: &T::Parent,
        query: &ListQuery,
    ) -> ApiResult<(i64, Vec<T>)> {
        T::page(conn, *parent, query)
    }

    fn find(
        conn: &mut TenantConn,
        parent: &T::Parent,
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<T>> {
        T::find(conn, *parent, id, include_deleted)
    }

    fn create(
        conn: &mut TenantConn,
        parent: &T::Parent,
        new: T::New,
        actor: Actor,
    ) -> ApiResult<T> {
        T::insert(conn, *parent, &new, actor)
    }

    fn replace(
        conn: &mut TenantConn,
        _: &T::Parent,
        id: Uuid,
        new: T::New,
        actor: Actor,
    ) -> ApiResult<T> {
        T::replace(conn, id, &new, actor)
    }

    fn update(
        conn: &mut TenantConn,
        _: &T::Parent,
        id: Uuid,
        changes: T::Changes,
        actor: Actor,
    ) -> ApiResult<T> {
        T::update(conn, id, &changes, actor)
    }

    fn delete(conn: &mut TenantConn, _: &T::Parent, id: Uuid) -> ApiResult<()> {
        T::delete(conn, id)
    }
}
