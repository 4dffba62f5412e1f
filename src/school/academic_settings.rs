//! Pass mark, maximum mark, terms and grading scale (an ordinary collection; a school
//! usually keeps one record).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::{
    schema::academic_settings as t,
    table::{school_forms, school_table},
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct AcademicSettings {
    pub id: Uuid,
    pub pass_mark: i32,
    pub max_mark: i32,
    pub terms_per_session: i32,
    pub grading_scale: Value,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewAcademicSettings, AcademicSettingsChanges {
    pass_mark: i32,
    max_mark: i32,
    terms_per_session: i32,
    grading_scale: Value,
});

school_table!(AcademicSettings in t, new: NewAcademicSettings, changes: AcademicSettingsChanges,
    search: []);
