//! The school's report settings: one record per school (its row is keyed `id = true`),
//! made with the defaults on first use. A store like the others, read and written through
//! `Store`'s operations, on a table of one row: its statements (below, by hand, since
//! `school_table!` describes tables of many rows) ignore ids, and the record has none, so
//! its events name the nil id.

use chrono::{DateTime, Utc};
use diesel::{pg::Pg, prelude::*};
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store, Target, Targets,
    schema::report_settings as t,
    store::{Narrowing, top_level},
    table::{Sealed, Table, school_forms},
};
use crate::{error::ApiResult, tenancy::TenantConn};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct ReportSettings {
    pub show_position: bool,
    pub show_class_average: bool,
    pub show_teacher_comments: bool,
    pub principal_signature: String,
    pub footer_text: String,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewReportSettings, ReportSettingsChanges {
    show_position: bool,
    show_class_average: bool,
    show_teacher_comments: bool,
    principal_signature: String,
    footer_text: String,
});

/// The school's one report settings record.
pub struct ReportSettingsStore;

impl ReportSettingsStore {
    /// The one record, whatever id a path would name.
    pub const RECORD: Target<()> = Target {
        parent: (),
        id: Uuid::nil(),
        include_deleted: false,
    };

    /// Makes the school's record with the defaults unless it exists: one INSERT that
    /// does nothing on conflict, so concurrent first uses make one.
    pub fn ensure(conn: &mut TenantConn) -> ApiResult<()> {
        diesel::insert_into(t::table)
            .values(t::id.eq(true))
            .on_conflict_do_nothing()
            .execute(conn.pg())?;
        Ok(())
    }

    /// The school's settings, made with the defaults on first use. The common case is
    /// one SELECT; the insert happens once per school.
    pub fn load(conn: &mut TenantConn) -> ApiResult<ReportSettings> {
        if let Some(found) = Self::find(conn, Self::RECORD)? {
            return Ok(found);
        }
        Self::ensure(conn)?;
        Self::find(conn, Self::RECORD)?.ok_or_else(crate::error::ApiError::not_found)
    }
}

impl Table for ReportSettingsStore {
    type Row = ReportSettings;
    type Parent = ();
    type New = NewReportSettings;
    type Changes = ReportSettingsChanges;
    type Query = t::BoxedQuery<'static, Pg>;

    fn resolve_parent(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<()> {
        top_level(conn, parents)
    }

    fn select(_: Sealed, _: (), _: bool) -> Self::Query {
        t::table.into_boxed()
    }

    fn search(_: Sealed, rows: Self::Query, _: &str) -> Self::Query {
        rows
    }

    fn with_id(_: Sealed, rows: Self::Query, _: Uuid) -> Self::Query {
        rows
    }

    fn with_ids(_: Sealed, rows: Self::Query, _: &[Uuid]) -> Self::Query {
        rows
    }

    /// The record has no id: it is named by the nil id (as `RECORD` names it).
    fn row_id(_: &ReportSettings) -> Uuid {
        Uuid::nil()
    }

    fn count(_: Sealed, conn: &mut TenantConn, rows: Self::Query) -> QueryResult<i64> {
        rows.count().get_result(conn.pg())
    }

    fn load(
        _: Sealed,
        conn: &mut TenantConn,
        rows: Self::Query,
        offset: i64,
        limit: i64,
    ) -> QueryResult<Vec<ReportSettings>> {
        let page = rows.offset(offset).limit(limit);
        page.select(ReportSettings::as_select()).load(conn.pg())
    }

    /// At most one row: the settings are one record.
    fn insert(
        _: Sealed,
        conn: &mut TenantConn,
        _: (),
        news: &[NewReportSettings],
        _: &[Uuid],
        by: Option<Uuid>,
        unless_present: bool,
    ) -> QueryResult<Vec<ReportSettings>> {
        let Some(new) = news.first() else {
            return Ok(Vec::new());
        };
        let insert =
            diesel::insert_into(t::table).values((new, t::id.eq(true), t::updated_by.eq(by)));
        let returning = ReportSettings::as_returning();
        match unless_present {
            false => insert.returning(returning).load(conn.pg()),
            true => insert
                .on_conflict_do_nothing()
                .returning(returning)
                .load(conn.pg()),
        }
    }

    fn update_all(
        _: Sealed,
        conn: &mut TenantConn,
        _: Target<()>,
        new: &NewReportSettings,
        by: Option<Uuid>,
    ) -> QueryResult<Option<ReportSettings>> {
        diesel::update(t::table)
            .set((new, t::updated_by.eq(by), t::updated_at.eq(Utc::now())))
            .returning(ReportSettings::as_returning())
            .get_result(conn.pg())
            .optional()
    }

    fn update_given(
        _: Sealed,
        conn: &mut TenantConn,
        _: &Targets<()>,
        changes: &ReportSettingsChanges,
        by: Option<Uuid>,
    ) -> QueryResult<Vec<ReportSettings>> {
        diesel::update(t::table)
            .set((changes, t::updated_by.eq(by), t::updated_at.eq(Utc::now())))
            .returning(ReportSettings::as_returning())
            .load(conn.pg())
    }

    fn delete_rows(_: Sealed, conn: &mut TenantConn, _: Target<()>) -> QueryResult<usize> {
        diesel::delete(t::table).execute(conn.pg())
    }

    fn lock_rows(_: Sealed, conn: &mut TenantConn, _: &[Uuid]) -> QueryResult<()> {
        t::table
            .select(t::id)
            .for_update()
            .load::<bool>(conn.pg())
            .map(drop)
    }

    /// The record has no id, so no id names it.
    fn live_rows(_: Sealed, _: &mut TenantConn, _: &[Uuid]) -> QueryResult<Vec<Uuid>> {
        Ok(Vec::new())
    }
}

impl Store for ReportSettingsStore {
    type Record = ReportSettings;
    const NAME: &'static str = "report_settings";

    /// The settings are about no student: whoever may read them reads them whole.
    fn about_students(_: &std::sync::Arc<[Uuid]>) -> Option<Narrowing<Self>> {
        Some(Box::new(|rows| rows))
    }
}
