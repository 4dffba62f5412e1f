//! The school's report settings: one row per school, created with the defaults on first
//! use.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor,
    change_log::{self, Action},
    schema::report_settings as t,
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

/// The fields a PUT or PATCH sets (a PUT gives every one, defaults included).
#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct ReportSettingsChanges {
    pub show_position: Option<bool>,
    pub show_class_average: Option<bool>,
    pub show_teacher_comments: Option<bool>,
    pub principal_signature: Option<String>,
    pub footer_text: Option<String>,
}

impl ReportSettings {
    /// The school's settings, created with the defaults on first use. The common case is
    /// one SELECT; the insert happens once per school.
    pub fn load(conn: &mut TenantConn) -> ApiResult<Self> {
        let select = || t::table.select(Self::as_select());
        if let Some(row) = select().first(conn.pg()).optional()? {
            return Ok(row);
        }
        diesel::insert_into(t::table)
            .values(t::id.eq(true))
            .on_conflict_do_nothing()
            .execute(conn.pg())?;
        Ok(select().first(conn.pg())?)
    }

    pub fn change(
        conn: &mut TenantConn,
        changes: &ReportSettingsChanges,
        actor: &Actor,
    ) -> ApiResult<Self> {
        Self::load(conn)?;
        let changed: Self = diesel::update(t::table)
            .set((
                changes,
                t::updated_by.eq(actor.user_id()),
                t::updated_at.eq(Utc::now()),
            ))
            .returning(Self::as_returning())
            .get_result(conn.pg())?;
        // The school's one record has no id; its events name the nil id.
        let data = serde_json::to_value(&changed).map_err(crate::error::ApiError::internal)?;
        change_log::emit(conn, "report_settings", Action::Updated, Uuid::nil(), &data)?;
        Ok(changed)
    }
}
