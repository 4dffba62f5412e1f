//! The pieces school resource modules share: query functions generated per table, the
//! standard `SchoolResource` methods, and the reference rule.

use uuid::Uuid;

use crate::{
    error::{ApiResult, FieldErrors},
    tenancy::TenantConn,
};

/// Generates the query functions school tables share, in the resource's module:
/// `list_rows` (pagination, `search` over the named text columns, order `created_at, id`,
/// narrowed by a scope filter), `find_row`, `live_exists` and `delete_row`. With
/// `soft_delete: is_deleted`, soft-deleted rows are hidden unless `include_deleted`.
macro_rules! table_queries {
    (@search $q:ident, $table:ident, $search:ident, []) => {{
        let _ = $search;
        $q
    }};
    (@search $q:ident, $table:ident, $search:ident, [$($column:ident),+]) => {{
        let pattern = $crate::db::like_pattern($search);
        $q.filter(diesel::dsl::sql::<diesel::sql_types::Bool>("false") $(.or($table::$column.ilike(pattern.clone())))+)
    }};
    ($table:ident, $record:ty, search: [$($column:ident),*] $(, soft_delete: $live:ident)? $(, changes: $input:ty)?) => {
        $(
            /// Applies `changes` and records who changed the row, and when.
            pub fn update_row(
                conn: &mut $crate::tenancy::TenantConn,
                id: uuid::Uuid,
                changes: &$input,
                caller: &$crate::auth::Caller,
            ) -> $crate::error::ApiResult<$record> {
                use diesel::prelude::*;
                Ok(diesel::update($table::table.find(id))
                    .set((changes, $table::updated_by.eq(caller.user_id()), $table::updated_at.eq(chrono::Utc::now())))
                    .returning(<$record>::as_returning())
                    .get_result(conn.pg())?)
            }
        )?

        pub type Boxed = $table::BoxedQuery<'static, diesel::pg::Pg>;

        fn filtered(query: &$crate::api::pagination::ListQuery) -> Boxed {
            use diesel::prelude::*;
            let mut q = $table::table.into_boxed();
            $(if !query.include_deleted {
                q = q.filter($table::$live.eq(false));
            })?
            if let Some(search) = &query.search {
                q = $crate::api::school::crud::table_queries!(@search q, $table, search, [$($column),*]);
            }
            q
        }

        pub fn list_rows(
            conn: &mut $crate::tenancy::TenantConn,
            query: &$crate::api::pagination::ListQuery,
            scope: impl Fn(Boxed) -> Boxed,
        ) -> $crate::error::ApiResult<(i64, Vec<$record>)> {
            use diesel::prelude::*;
            let count = scope(filtered(query)).count().get_result(conn.pg())?;
            let rows = scope(filtered(query))
                .order(($table::created_at, $table::id))
                .offset(query.offset())
                .limit(query.page_size)
                .select(<$record>::as_select())
                .load(conn.pg())?;
            Ok((count, rows))
        }

        pub fn find_row(
            conn: &mut $crate::tenancy::TenantConn,
            id: uuid::Uuid,
            include_deleted: bool,
        ) -> $crate::error::ApiResult<Option<$record>> {
            use diesel::prelude::*;
            // Tables without soft deletion ignore the flag.
            let _ = include_deleted;
            Ok($table::table
                .find(id)
                .select(<$record>::as_select())
                .first(conn.pg())
                .optional()?
                .filter(|_row| true $(&& (include_deleted || !_row.$live))?))
        }

        /// Whether a live (not soft-deleted) record has this id: the rule for references.
        /// (Not every table is referenced.)
        #[allow(dead_code)]
        pub fn live_exists(conn: &mut $crate::tenancy::TenantConn, id: uuid::Uuid) -> $crate::error::ApiResult<bool> {
            use diesel::prelude::*;
            Ok(diesel::select(diesel::dsl::exists(
                $table::table.find(id)$(.filter($table::$live.eq(false)))?,
            ))
            .get_result(conn.pg())?)
        }

        /// Which of `ids` name live records: one `= ANY($1)` query, however many ids.
        #[allow(dead_code)]
        pub fn live_ids(
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

        pub fn delete_row(conn: &mut $crate::tenancy::TenantConn, id: uuid::Uuid) -> $crate::error::ApiResult<()> {
            use diesel::prelude::*;
            match diesel::delete($table::table.find(id)).execute(conn.pg())? {
                0 => Err($crate::error::ApiError::not_found()),
                _ => Ok(()),
            }
        }
    };
}
pub(crate) use table_queries;

/// The `SchoolResource` methods of a top-level resource whose record is its table row:
/// scope, list, find, update and delete through the `table_queries!` functions of the
/// module (declared with `changes:`).
macro_rules! top_level_methods {
    () => {
        fn scope(
            _: &mut $crate::tenancy::TenantConn,
            _: &[uuid::Uuid],
        ) -> $crate::error::ApiResult<()> {
            Ok(())
        }

        fn list(
            conn: &mut $crate::tenancy::TenantConn,
            _: &(),
            query: &$crate::api::pagination::ListQuery,
        ) -> $crate::error::ApiResult<(i64, Vec<Self::Record>)> {
            list_rows(conn, query, |q| q)
        }

        fn find(
            conn: &mut $crate::tenancy::TenantConn,
            _: &(),
            id: uuid::Uuid,
            include_deleted: bool,
        ) -> $crate::error::ApiResult<Option<Self::Record>> {
            find_row(conn, id, include_deleted)
        }

        fn update(
            conn: &mut $crate::tenancy::TenantConn,
            _: &(),
            id: uuid::Uuid,
            input: Self::Input,
            caller: &$crate::auth::Caller,
        ) -> $crate::error::ApiResult<Self::Record> {
            update_row(conn, id, &input, caller)
        }

        fn delete(
            conn: &mut $crate::tenancy::TenantConn,
            _: &(),
            id: uuid::Uuid,
        ) -> $crate::error::ApiResult<()> {
            delete_row(conn, id)
        }
    };
}
pub(crate) use top_level_methods;

/// The rule for references: the id must name a live record of this school. Records a
/// message on `field` otherwise (`id` of `None`: nothing to check).
pub fn check_ref(
    conn: &mut TenantConn,
    errors: &mut FieldErrors,
    field: &str,
    id: Option<Uuid>,
    what: &str,
    live_exists: fn(&mut TenantConn, Uuid) -> ApiResult<bool>,
) -> ApiResult<()> {
    if let Some(id) = id {
        if !live_exists(conn, id)? {
            errors.add(field, format!("no live {what} has the id {id}"));
        }
    }
    Ok(())
}

/// The `SchoolResource` methods of a resource nested under one parent (`Scope = Uuid`),
/// whose record is its row and whose `$parent` column (and field) names the parent: list
/// and find see only the parent's records.
macro_rules! nested_methods {
    ($table:ident, $parent:ident) => {
        fn list(
            conn: &mut $crate::tenancy::TenantConn,
            parent: &uuid::Uuid,
            query: &$crate::api::pagination::ListQuery,
        ) -> $crate::error::ApiResult<(i64, Vec<Self::Record>)> {
            use diesel::prelude::*;
            let parent = *parent;
            list_rows(conn, query, move |q| q.filter($table::$parent.eq(parent)))
        }

        fn find(
            conn: &mut $crate::tenancy::TenantConn,
            parent: &uuid::Uuid,
            id: uuid::Uuid,
            include_deleted: bool,
        ) -> $crate::error::ApiResult<Option<Self::Record>> {
            Ok(find_row(conn, id, include_deleted)?.filter(|row| row.$parent == *parent))
        }

        fn update(
            conn: &mut $crate::tenancy::TenantConn,
            _: &uuid::Uuid,
            id: uuid::Uuid,
            input: Self::Input,
            caller: &$crate::auth::Caller,
        ) -> $crate::error::ApiResult<Self::Record> {
            update_row(conn, id, &input, caller)
        }

        fn delete(
            conn: &mut $crate::tenancy::TenantConn,
            _: &uuid::Uuid,
            id: uuid::Uuid,
        ) -> $crate::error::ApiResult<()> {
            delete_row(conn, id)
        }
    };
}
pub(crate) use nested_methods;
