//! `Table`: the few statements over one school table that [`Store`](super::Store)'s
//! default methods are made of, and `school_table!`, which implements them from a
//! description of the table's columns (parent, soft-delete flag, search columns).
//!
//! Every statement keeps to the rows a store may touch: the parent's rows, and live ones
//! unless soft-deleted ones were asked for. Each takes a [`Sealed`], which only the
//! default methods of `Store` can make, so nothing reads or writes a school's records
//! past its store (and past its hooks, such as sessions' activation).

use diesel::QueryResult;
use uuid::Uuid;

use crate::{error::ApiResult, tenancy::TenantConn};

pub use super::store::Sealed;

pub use super::actor::Actor;

/// A `NewX` was built from changes that lack a field it needs: the parser let through a
/// create or replace without a required field. A bug, never the client's fault.
#[derive(Debug, thiserror::Error)]
#[error("the form lacks `{0}`")]
pub struct Incomplete(pub &'static str);

/// The value of a field every create and replace gives.
pub fn given<T>(value: Option<T>, field: &'static str) -> Result<T, Incomplete> {
    value.ok_or(Incomplete(field))
}

/// The record a read or write addresses: `id` under `parent`, a soft-deleted one only
/// with `include_deleted`.
#[derive(Debug, Clone, Copy)]
pub struct Target<P> {
    pub parent: P,
    pub id: Uuid,
    pub include_deleted: bool,
}

impl<P> Target<P> {
    /// The live (not soft-deleted) record `id` under `parent`.
    pub fn live(parent: P, id: Uuid) -> Self {
        Self {
            parent,
            id,
            include_deleted: false,
        }
    }
}

/// The records a write of many addresses: each of `ids` under `parent`, soft-deleted ones
/// only with `include_deleted` (one record is the `Target` of a single write).
#[derive(Debug, Clone)]
pub struct Targets<P> {
    pub parent: P,
    pub ids: Vec<Uuid>,
    pub include_deleted: bool,
}

impl<P> Targets<P> {
    /// The live records `ids` under `parent`.
    pub fn live(parent: P, ids: Vec<Uuid>) -> Self {
        Self {
            parent,
            ids,
            include_deleted: false,
        }
    }
}

impl<P> From<Target<P>> for Targets<P> {
    fn from(target: Target<P>) -> Self {
        Self {
            parent: target.parent,
            ids: vec![target.id],
            include_deleted: target.include_deleted,
        }
    }
}

/// The statements over one school table (see the module's documentation).
pub trait Table: Sized + Send + 'static {
    /// A row as selected.
    type Row: Send + 'static;
    /// What the rows live under: `()` for a top-level table, the parent's id for a nested
    /// one.
    type Parent: Copy + PartialEq + Send + Sync + 'static;
    /// Every writable field, as create and replace set them; made from a complete set of
    /// changes.
    type New: TryFrom<Self::Changes, Error = Incomplete> + Send + 'static;
    /// The fields a patch sets (`None`: unchanged).
    type Changes: Send + 'static;
    /// A boxed select of the table, for narrowing a list further (`Store::narrowing`).
    type Query;

    /// Resolves the ids of a path's parents (outermost first) to the parent: 404 when one
    /// is missing, soft-deleted or under another parent.
    fn resolve_parent(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Self::Parent>;

    /// The rows under `parent`; soft-deleted ones only with `include_deleted`.
    fn select(_: Sealed, parent: Self::Parent, include_deleted: bool) -> Self::Query;

    /// `rows` narrowed to those whose search columns contain `pattern` (an `ILIKE`
    /// pattern); `rows` unchanged when the table has no search columns.
    fn search(_: Sealed, rows: Self::Query, pattern: &str) -> Self::Query;

    /// `rows` narrowed to the row `id`.
    fn with_id(_: Sealed, rows: Self::Query, id: Uuid) -> Self::Query;

    /// `rows` narrowed to the rows `ids`.
    fn with_ids(_: Sealed, rows: Self::Query, ids: &[Uuid]) -> Self::Query;

    /// A row's id.
    fn row_id(row: &Self::Row) -> Uuid;

    fn count(_: Sealed, conn: &mut TenantConn, rows: Self::Query) -> QueryResult<i64>;

    /// `limit` rows of `rows` from `offset`, in list order (`created_at, id`).
    fn load(
        _: Sealed,
        conn: &mut TenantConn,
        rows: Self::Query,
        offset: i64,
        limit: i64,
    ) -> QueryResult<Vec<Self::Row>>;

    /// Inserts a row under `parent` for each of `news`, with the id of the same place in
    /// `ids`, made and last changed `by` (the user, if one acted): one multi-row
    /// statement, answering the rows inserted (in any order). With `unless_present`, a
    /// row that conflicts on a unique index is not inserted (nor answered).
    fn insert(
        _: Sealed,
        conn: &mut TenantConn,
        parent: Self::Parent,
        news: &[Self::New],
        ids: &[Uuid],
        by: Option<Uuid>,
        unless_present: bool,
    ) -> QueryResult<Vec<Self::Row>>;

    /// Sets every writable field of the row `target` names (`None`: there is none).
    fn update_all(
        _: Sealed,
        conn: &mut TenantConn,
        target: Target<Self::Parent>,
        new: &Self::New,
        by: Option<Uuid>,
    ) -> QueryResult<Option<Self::Row>>;

    /// Sets the given fields of the rows `targets` names (one statement), answering those
    /// it found (in any order).
    fn update_given(
        _: Sealed,
        conn: &mut TenantConn,
        targets: &Targets<Self::Parent>,
        changes: &Self::Changes,
        by: Option<Uuid>,
    ) -> QueryResult<Vec<Self::Row>>;

    /// Deletes the row `target` names; how many were deleted.
    fn delete_rows(
        _: Sealed,
        conn: &mut TenantConn,
        target: Target<Self::Parent>,
    ) -> QueryResult<usize>;

    /// Locks the rows `ids` (any parent, deleted or not; in id order, so two writers of
    /// overlapping rows cannot deadlock) until the transaction ends, so the records read
    /// next are the ones the following write changes.
    fn lock_rows(_: Sealed, conn: &mut TenantConn, ids: &[Uuid]) -> QueryResult<()>;

    /// Which of `ids` name live rows (any parent): one `= ANY($1)` query.
    fn live_rows(_: Sealed, conn: &mut TenantConn, ids: &[Uuid]) -> QueryResult<Vec<Uuid>>;
}

/// Declares the two forms of a school table from one list of its writable fields: `NewX`
/// (every field; create and PUT, a nullable field given as `None` is written as NULL) and
/// `XChanges` (each field optional; PATCH), with `TryFrom<XChanges> for NewX`.
///
/// Two kinds of field may follow the columns. `when_given`: columns a PUT leaves as they
/// are unless given (optional in both forms; a hook may decide them). `linked`: what is
/// stored in other tables by the store's hooks (every create and PUT gives it; never
/// written to this table).
///
/// ```ignore
/// school_forms!(academic_classes: NewClass, ClassChanges {
///     name: String,
///     level: Option<i32>,
///     is_deleted: bool,
/// });
/// school_forms!(departments: NewDepartment, DepartmentChanges {
///     name: String,
/// } linked {
///     teachers: Vec<Uuid>,
/// });
/// ```
macro_rules! school_forms {
    (
        $table:ident: $new:ident, $changes:ident { $($field:ident: $ty:ty),+ $(,)? }
        $(when_given { $($(#[doc = $kept_doc:literal])* $kept:ident: $kept_ty:ty),+ $(,)? })?
        $(linked { $($(#[doc = $link_doc:literal])* $link:ident: $link_ty:ty),+ $(,)? })?
    ) => {
        #[derive(diesel::Insertable, diesel::AsChangeset, Debug)]
        #[diesel(table_name = $table, treat_none_as_null = true)]
        pub struct $new {
            $(pub $field: $ty,)+
            $($(
                $(#[doc = $kept_doc])*
                #[diesel(treat_none_as_null = false)]
                pub $kept: Option<$kept_ty>,
            )+)?
            $($(
                $(#[doc = $link_doc])*
                #[diesel(skip_insertion, skip_update)]
                pub $link: $link_ty,
            )+)?
        }

        #[derive(diesel::AsChangeset, Default, Debug)]
        #[diesel(table_name = $table)]
        pub struct $changes {
            $(pub $field: Option<$ty>,)+
            $($(pub $kept: Option<$kept_ty>,)+)?
            $($(#[diesel(skip_update)] pub $link: Option<$link_ty>,)+)?
        }

        impl TryFrom<$changes> for $new {
            type Error = $crate::school::Incomplete;

            fn try_from(changes: $changes) -> Result<Self, $crate::school::Incomplete> {
                Ok(Self {
                    $($field: $crate::school::table::given(changes.$field, stringify!($field))?,)+
                    $($($kept: changes.$kept,)+)?
                    $($($link: $crate::school::table::given(changes.$link, stringify!($link))?,)+)?
                })
            }
        }
    };
}
pub(crate) use school_forms;

/// Implements [`Table`] for a store from a description of its table:
///
/// ```ignore
/// school_table!(Exams: Exam in exams, new: NewExam, changes: ExamChanges,
///     search: [name], soft_delete: is_deleted, parent: exam_session_id in ExamSessions);
/// ```
///
/// `search`: the text columns `?search=` looks in; `soft_delete`: the flag that hides rows
/// (none: rows are never hidden); `parent`: the column holding the parent's id, and the
/// parent's store (none: a top-level table). The table also has `id`, `created_by`,
/// `updated_by`, `created_at` and `updated_at`. Each method is one statement.
macro_rules! school_table {
    (
        $store:ident: $row:ident in $t:ident, new: $new:ty, changes: $changes:ty,
        search: [$($column:ident),*] $(, soft_delete: $live:ident)?
        $(, parent: $parent_column:ident in $parent:ident)? $(,)?
    ) => {
        const _: () = {
            use diesel::{QueryResult, pg::Pg, prelude::*};
            use uuid::Uuid;
            use $crate::{
                error::ApiResult,
                school::table::{Sealed, Table, Target, Targets, school_table},
                tenancy::TenantConn,
            };

            impl Table for $store {
                type Row = $row;
                type Parent = school_table!(@parent_type $($parent)?);
                type New = $new;
                type Changes = $changes;
                type Query = $t::BoxedQuery<'static, Pg>;

                fn resolve_parent(conn: &mut TenantConn, parents: &[Uuid])
                -> ApiResult<Self::Parent> {
                    school_table!(@resolve conn, parents $(, $parent)?)
                }

                fn select(_: Sealed, parent: Self::Parent, include_deleted: bool) -> Self::Query {
                    let _ = (parent, include_deleted);
                    #[allow(unused_mut)]
                    let mut rows = $t::table.into_boxed();
                    $(rows = rows.filter($t::$parent_column.eq(parent));)?
                    $(if !include_deleted { rows = rows.filter($t::$live.eq(false)); })?
                    rows
                }

                fn search(_: Sealed, rows: Self::Query, pattern: &str) -> Self::Query {
                    school_table!(@search rows, $t, pattern, [$($column),*])
                }

                fn with_id(_: Sealed, rows: Self::Query, id: Uuid) -> Self::Query {
                    rows.filter($t::id.eq(id))
                }

                fn with_ids(_: Sealed, rows: Self::Query, ids: &[Uuid]) -> Self::Query {
                    rows.filter($t::id.eq_any(ids.to_vec()))
                }

                fn row_id(row: &$row) -> Uuid {
                    row.id
                }

                fn count(_: Sealed, conn: &mut TenantConn, rows: Self::Query) -> QueryResult<i64> {
                    rows.count().get_result(conn.pg())
                }

                fn load(_: Sealed, conn: &mut TenantConn, rows: Self::Query, offset: i64, limit: i64)
                -> QueryResult<Vec<$row>> {
                    let page = rows.order(($t::created_at, $t::id)).offset(offset).limit(limit);
                    page.select(<$row>::as_select()).load(conn.pg())
                }

                fn insert(_: Sealed, conn: &mut TenantConn, parent: Self::Parent, news: &[$new],
                    ids: &[Uuid], by: Option<Uuid>, unless_present: bool)
                -> QueryResult<Vec<$row>> {
                    let _ = parent;
                    if news.is_empty() {
                        return Ok(Vec::new());
                    }
                    let values: Vec<_> = news.iter().zip(ids).map(|(new, id)| (
                        new,
                        $t::id.eq(*id),
                        $t::created_by.eq(by),
                        $t::updated_by.eq(by),
                        $($t::$parent_column.eq(parent),)?
                    )).collect();
                    let insert = diesel::insert_into($t::table).values(values);
                    let returning = <$row>::as_returning();
                    match unless_present {
                        false => insert.returning(returning).get_results(conn.pg()),
                        true => insert.on_conflict_do_nothing().returning(returning)
                            .get_results(conn.pg()),
                    }
                }

                fn update_all(_: Sealed, conn: &mut TenantConn, target: Target<Self::Parent>,
                    new: &$new, by: Option<Uuid>) -> QueryResult<Option<$row>> {
                    school_table!(@target diesel::update($t::table), $t, target $(, $live)? $(; $parent_column)?)
                        .set((new, $t::updated_by.eq(by), $t::updated_at.eq(chrono::Utc::now())))
                        .returning(<$row>::as_returning()).get_result(conn.pg()).optional()
                }

                fn update_given(_: Sealed, conn: &mut TenantConn, targets: &Targets<Self::Parent>,
                    changes: &$changes, by: Option<Uuid>) -> QueryResult<Vec<$row>> {
                    if targets.ids.is_empty() {
                        return Ok(Vec::new());
                    }
                    #[allow(unused_mut)]
                    let mut statement = diesel::update($t::table)
                        .filter($t::id.eq_any(targets.ids.clone())).into_boxed();
                    $(statement = statement.filter($t::$parent_column.eq(targets.parent));)?
                    $(if !targets.include_deleted { statement = statement.filter($t::$live.eq(false)); })?
                    statement
                        .set((changes, $t::updated_by.eq(by), $t::updated_at.eq(chrono::Utc::now())))
                        .returning(<$row>::as_returning()).get_results(conn.pg())
                }

                fn delete_rows(_: Sealed, conn: &mut TenantConn, target: Target<Self::Parent>)
                -> QueryResult<usize> {
                    school_table!(@target diesel::delete($t::table), $t, target $(, $live)? $(; $parent_column)?)
                        .execute(conn.pg())
                }

                fn lock_rows(_: Sealed, conn: &mut TenantConn, ids: &[Uuid]) -> QueryResult<()> {
                    $t::table.filter($t::id.eq_any(ids)).order($t::id).select($t::id).for_update()
                        .load::<Uuid>(conn.pg()).map(drop)
                }

                fn live_rows(_: Sealed, conn: &mut TenantConn, ids: &[Uuid]) -> QueryResult<Vec<Uuid>> {
                    let rows = $t::table.filter($t::id.eq_any(ids))$(.filter($t::$live.eq(false)))?;
                    rows.select($t::id).load(conn.pg())
                }
            }
        };
    };
    // The one row `target` names, under its parent, live unless `include_deleted`.
    (@target $statement:expr, $t:ident, $target:ident $(, $live:ident)? $(; $parent_column:ident)?) => {{
        #[allow(unused_mut)]
        let mut statement = $statement.filter($t::id.eq($target.id)).into_boxed();
        $(statement = statement.filter($t::$parent_column.eq($target.parent));)?
        $(if !$target.include_deleted { statement = statement.filter($t::$live.eq(false)); })?
        statement
    }};
    (@search $rows:ident, $t:ident, $pattern:ident, []) => {{
        let _ = $pattern;
        $rows
    }};
    (@search $rows:ident, $t:ident, $pattern:ident, [$($column:ident),+]) => {{
        let any_column = diesel::dsl::sql::<diesel::sql_types::Bool>("false");
        $rows.filter(any_column $(.or($t::$column.ilike($pattern.to_owned())))+)
    }};
    (@parent_type) => { () };
    (@parent_type $parent:ident) => { Uuid };
    (@resolve $conn:ident, $parents:ident) => { $crate::school::store::top_level($conn, $parents) };
    (@resolve $conn:ident, $parents:ident, $parent:ident) => {
        $crate::school::store::nested_in::<$parent>($conn, $parents)
    };
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

    #[test]
    fn a_when_given_field_may_be_left_out_and_a_linked_one_may_not() {
        use crate::school::{
            departments::{DepartmentChanges, NewDepartment},
            sessions::{NewSession, SessionChanges},
        };
        let now = chrono::Utc::now();
        let session = NewSession::try_from(SessionChanges {
            name: Some("2026/27".into()),
            start_date: Some(now),
            end_date: Some(now),
            is_deleted: Some(false),
            is_active: None,
        })
        .expect("complete without is_active");
        assert_eq!(session.is_active, None);
        let department = DepartmentChanges {
            name: Some("Sciences".into()),
            hod_id: Some(uuid::Uuid::nil()),
            subject_id: Some(uuid::Uuid::nil()),
            is_deleted: Some(false),
            teachers: None,
        };
        let missing = NewDepartment::try_from(department).expect_err("no teachers");
        assert_eq!(missing.0, "teachers");
    }
}
