//! `Table`: the queries every school table has, and `school_table!`, which implements them
//! for a record type from a short description of its table.

use std::collections::HashSet;

use uuid::Uuid;

use crate::{error::ApiResult, school::ListQuery, tenancy::TenantConn};

/// Who writes: the user recorded in `created_by` / `updated_by` (`None` for an API key).
pub type Actor = Option<Uuid>;

/// A `NewX` was built from changes that lack a field it needs: the parser let through a
/// create or replace without a required field. A bug, never the client's fault.
#[derive(Debug, thiserror::Error)]
#[error("the form lacks `{0}`")]
pub struct Incomplete(pub &'static str);

/// The value of a field every create and replace gives.
pub fn given<T>(value: Option<T>, field: &'static str) -> Result<T, Incomplete> {
    value.ok_or(Incomplete(field))
}

/// A record of a school table with the usual columns (`id`, `created_by`, `updated_by`,
/// `created_at`, `updated_at`, optionally `is_deleted` and a parent id).
pub trait Table: Sized + Send + 'static {
    /// What the record lives under: `()` for a top-level table, the parent's id for a
    /// nested one.
    type Parent: Copy + Send + Sync + 'static;
    /// Every writable field, as create and replace set them; made from a complete set of
    /// changes.
    type New: TryFrom<Self::Changes, Error = Incomplete> + Send + 'static;
    /// The fields a patch sets (`None`: unchanged).
    type Changes: Send + 'static;
    /// The boxed query lists are built on, for narrowing them further.
    type Query;

    /// Resolves the ids of a path's parents (outermost first) to the parent: 404 when one
    /// is missing, soft-deleted or under another parent.
    fn parent_scope(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Self::Parent>;

    /// One page (order `created_at, id`) and the count of all matches: soft-deleted rows
    /// only when asked for, `search` over the name-like columns, then `narrow`.
    fn page_where(
        conn: &mut TenantConn,
        parent: Self::Parent,
        query: &ListQuery,
        narrow: impl Fn(Self::Query) -> Self::Query,
    ) -> ApiResult<(i64, Vec<Self>)>;

    fn page(
        conn: &mut TenantConn,
        parent: Self::Parent,
        query: &ListQuery,
    ) -> ApiResult<(i64, Vec<Self>)> {
        Self::page_where(conn, parent, query, |q| q)
    }

    /// The record `id` under `parent`; a soft-deleted one only with `include_deleted`.
    fn get(
        conn: &mut TenantConn,
        parent: Self::Parent,
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<Self>>;

    /// Whether a live (not soft-deleted) record has this id: the rule for references.
    fn live_exists(conn: &mut TenantConn, id: Uuid) -> ApiResult<bool>;

    /// Which of `ids` name live records: one `= ANY($1)` query, however many ids.
    fn live_ids(conn: &mut TenantConn, ids: &[Uuid]) -> ApiResult<HashSet<Uuid>>;

    fn insert(
        conn: &mut TenantConn,
        parent: Self::Parent,
        new: &Self::New,
        actor: Actor,
    ) -> ApiResult<Self>;

    /// Inserts unless a live record conflicts on a unique index: `None` then (the
    /// concurrent-safe "create if missing").
    fn insert_unless_present(
        conn: &mut TenantConn,
        parent: Self::Parent,
        new: &Self::New,
        actor: Actor,
    ) -> ApiResult<Option<Self>>;

    /// Sets every writable field (PUT).
    fn overwrite(conn: &mut TenantConn, id: Uuid, new: &Self::New, actor: Actor)
    -> ApiResult<Self>;

    /// Sets the given fields (PATCH).
    fn change(
        conn: &mut TenantConn,
        id: Uuid,
        changes: &Self::Changes,
        actor: Actor,
    ) -> ApiResult<Self>;

    /// A real delete: 404 when there is no such row, 409 while others reference it.
    fn remove(conn: &mut TenantConn, id: Uuid) -> ApiResult<()>;
}

/// Declares the two forms of a school table from one list of its writable fields: `NewX`
/// (every field; create and PUT, a nullable field given as `None` is written as NULL) and
/// `XChanges` (each field optional; PATCH), with `TryFrom<XChanges> for NewX`.
///
/// ```ignore
/// school_forms!(academic_classes: NewClass, ClassChanges {
///     name: String,
///     level: Option<i32>,
///     is_deleted: bool,
/// });
/// ```
macro_rules! school_forms {
    ($table:ident: $new:ident, $changes:ident { $($field:ident: $ty:ty),+ $(,)? }) => {
        #[derive(diesel::Insertable, diesel::AsChangeset, Debug)]
        #[diesel(table_name = $table, treat_none_as_null = true)]
        pub struct $new {
            $(pub $field: $ty,)+
        }

        #[derive(diesel::AsChangeset, Default, Debug)]
        #[diesel(table_name = $table)]
        pub struct $changes {
            $(pub $field: Option<$ty>,)+
        }

        impl TryFrom<$changes> for $new {
            type Error = $crate::school::Incomplete;

            fn try_from(changes: $changes) -> Result<Self, $crate::school::Incomplete> {
                Ok(Self {
                    $($field: $crate::school::table::given(changes.$field, stringify!($field))?,)+
                })
            }
        }
    };
}
pub(crate) use school_forms;

/// Implements [`Table`] for a record type:
///
/// ```ignore
/// school_table!(Exam in exams, new: NewExam, changes: ExamChanges, search: [name],
///     soft_delete: is_deleted, parent: exam_session_id in ExamSession);
/// ```
///
/// `search` names the text columns `?search=` looks in; `soft_delete` the flag that hides
/// rows; `parent` the column that holds the parent's id and the parent's record type.
macro_rules! school_table {
    (
        $row:ident in $table:ident, new: $new:ty, changes: $changes:ty, search: [$($column:ident),*]
        $(, soft_delete: $live:ident)? $(, parent: $parent_column:ident in $parent:ident)? $(,)?
    ) => {
        impl $crate::school::Table for $row {
            type Parent = $crate::school::table::school_table!(@parent_type $($parent)?);
            type New = $new;
            type Changes = $changes;
            type Query = $table::BoxedQuery<'static, diesel::pg::Pg>;

            fn parent_scope(
                conn: &mut $crate::tenancy::TenantConn,
                parents: &[uuid::Uuid],
            ) -> $crate::error::ApiResult<Self::Parent> {
                $crate::school::table::school_table!(@scope conn, parents $(, $parent)?)
            }

            fn page_where(
                conn: &mut $crate::tenancy::TenantConn,
                parent: Self::Parent,
                query: &$crate::school::ListQuery,
                narrow: impl Fn(Self::Query) -> Self::Query,
            ) -> $crate::error::ApiResult<(i64, Vec<Self>)> {
                use diesel::prelude::*;
                let _ = parent;
                let filtered = || {
                    #[allow(unused_mut)]
                    let mut q = $table::table.into_boxed();
                    $(q = q.filter($table::$parent_column.eq(parent));)?
                    $(if !query.include_deleted {
                        q = q.filter($table::$live.eq(false));
                    })?
                    if let Some(search) = &query.search {
                        q = $crate::school::table::school_table!(@search q, $table, search, [$($column),*]);
                    }
                    narrow(q)
                };
                let count = filtered().count().get_result(conn.pg())?;
                let rows = filtered()
                    .order(($table::created_at, $table::id))
                    .offset(query.offset())
                    .limit(query.page_size)
                    .select(<$row>::as_select())
                    .load(conn.pg())?;
                Ok((count, rows))
            }

            fn get(
                conn: &mut $crate::tenancy::TenantConn,
                parent: Self::Parent,
                id: uuid::Uuid,
                include_deleted: bool,
            ) -> $crate::error::ApiResult<Option<Self>> {
                use diesel::prelude::*;
                let (_, _) = (parent, include_deleted);
                #[allow(unused_mut)]
                let mut q = $table::table.filter($table::id.eq(id)).into_boxed();
                $(q = q.filter($table::$parent_column.eq(parent));)?
                $(if !include_deleted {
                    q = q.filter($table::$live.eq(false));
                })?
                Ok(q.select(<$row>::as_select()).first(conn.pg()).optional()?)
            }

            fn live_exists(
                conn: &mut $crate::tenancy::TenantConn,
                id: uuid::Uuid,
            ) -> $crate::error::ApiResult<bool> {
                use diesel::prelude::*;
                Ok(diesel::select(diesel::dsl::exists(
                    $table::table.find(id)$(.filter($table::$live.eq(false)))?,
                ))
                .get_result(conn.pg())?)
            }

            fn live_ids(
                conn: &mut $crate::tenancy::TenantConn,
                ids: &[uuid::Uuid],
            ) -> $crate::error::ApiResult<std::collections::HashSet<uuid::Uuid>> {
                use diesel::prelude::*;
                Ok($table::table
                    .filter($table::id.eq_any(ids))
                    $(.filter($table::$live.eq(false)))?
                    .select($table::id)
                    .load::<uuid::Uuid>(conn.pg())?
                    .into_iter()
                    .collect())
            }

            fn insert(
                conn: &mut $crate::tenancy::TenantConn,
                parent: Self::Parent,
                new: &$new,
                actor: $crate::school::Actor,
            ) -> $crate::error::ApiResult<Self> {
                $crate::school::table::school_table!(@insert $row, $table, conn, parent, new, actor $(, $parent_column)?)
                    .get_result(conn.pg())
                    .map_err(Into::into)
            }

            fn insert_unless_present(
                conn: &mut $crate::tenancy::TenantConn,
                parent: Self::Parent,
                new: &$new,
                actor: $crate::school::Actor,
            ) -> $crate::error::ApiResult<Option<Self>> {
                use diesel::prelude::*;
                $crate::school::table::school_table!(@insert $row, $table, conn, parent, new, actor $(, $parent_column)?)
                    .on_conflict_do_nothing()
                    .get_result(conn.pg())
                    .optional()
                    .map_err(Into::into)
            }

            fn overwrite(
                conn: &mut $crate::tenancy::TenantConn,
                id: uuid::Uuid,
                new: &$new,
                actor: $crate::school::Actor,
            ) -> $crate::error::ApiResult<Self> {
                use diesel::prelude::*;
                Ok(diesel::update($table::table.find(id))
                    .set((new, $table::updated_by.eq(actor), $table::updated_at.eq(chrono::Utc::now())))
                    .returning(<$row>::as_returning())
                    .get_result(conn.pg())?)
            }

            fn change(
                conn: &mut $crate::tenancy::TenantConn,
                id: uuid::Uuid,
                changes: &$changes,
                actor: $crate::school::Actor,
            ) -> $crate::error::ApiResult<Self> {
                use diesel::prelude::*;
                Ok(diesel::update($table::table.find(id))
                    .set((changes, $table::updated_by.eq(actor), $table::updated_at.eq(chrono::Utc::now())))
                    .returning(<$row>::as_returning())
                    .get_result(conn.pg())?)
            }

            fn remove(
                conn: &mut $crate::tenancy::TenantConn,
                id: uuid::Uuid,
            ) -> $crate::error::ApiResult<()> {
                use diesel::prelude::*;
                match diesel::delete($table::table.find(id)).execute(conn.pg())? {
                    0 => Err($crate::error::ApiError::not_found()),
                    _ => Ok(()),
                }
            }
        }
    };
    (@insert $row:ident, $table:ident, $conn:ident, $parent:ident, $new:ident, $actor:ident $(, $parent_column:ident)?) => {{
        use diesel::prelude::*;
        let _ = $parent;
        diesel::insert_into($table::table)
            .values((
                $new,
                $table::id.eq(uuid::Uuid::new_v4()),
                $table::created_by.eq($actor),
                $table::updated_by.eq($actor),
                $($table::$parent_column.eq($parent),)?
            ))
            .returning(<$row>::as_returning())
    }};
    (@parent_type) => { () };
    (@parent_type $parent:ident) => { uuid::Uuid };
    (@scope $conn:ident, $parents:ident) => {{
        let _ = $conn;
        match $parents {
            [] => Ok(()),
            _ => Err($crate::error::ApiError::not_found()),
        }
    }};
    (@scope $conn:ident, $parents:ident, $parent:ident) => {{
        let (&id, outer) = $parents.split_last().ok_or_else($crate::error::ApiError::not_found)?;
        let grandparent = <$parent as $crate::school::Table>::parent_scope($conn, outer)?;
        <$parent as $crate::school::Table>::get($conn, grandparent, id, false)?
            .map(|_| id)
            .ok_or_else($crate::error::ApiError::not_found)
    }};
    (@search $q:ident, $table:ident, $search:ident, []) => {{
        let _ = $search;
        $q
    }};
    (@search $q:ident, $table:ident, $search:ident, [$($column:ident),+]) => {{
        let pattern = $crate::db::like_pattern($search);
        $q.filter(diesel::dsl::sql::<diesel::sql_types::Bool>("false") $(.or($table::$column.ilike(pattern.clone())))+)
    }};
}
pub(crate) use school_table;

#[cfg(test)]
mod tests {
    use crate::school::classes::{ClassChanges, NewClass};

    #[test]
    fn a_form_is_complete_only_with_every_field() {
        let partial = ClassChanges {
            name: Some("Form 1".into()),
            ..Default::default()
        };
        let missing = NewClass::try_from(partial).expect_err("incomplete");
        assert_eq!(missing.0, "level");
        let complete = NewClass::try_from(ClassChanges {
            name: Some("Form 1".into()),
            level: Some(None),
            is_deleted: Some(false),
        })
        .expect("complete");
        assert_eq!((complete.name.as_str(), complete.level), ("Form 1", None));
    }
}
