//! Pass mark, maximum mark, terms and grading scale (an ordinary collection; a school
//! usually keeps one record).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::{
    schema::academic_settings as t,
    table::{Incomplete, given, school_table},
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

#[derive(Insertable, AsChangeset, Debug)]
#[diesel(table_name = t)]
pub struct NewAcademicSettings {
    pub pass_mark: i32,
    pub max_mark: i32,
    pub terms_per_session: i32,
    pub grading_scale: Value,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct AcademicSettingsChanges {
    pub pass_mark: Option<i32>,
    pub max_mark: Option<i32>,
    pub terms_per_session: Option<i32>,
    pub grading_scale: Option<Value>,
}

impl TryFrom<AcademicSettingsChanges> for NewAcademicSettings {
    type Error = Incomplete;

    fn try_from(c: AcademicSettingsChanges) -> Result<Self, Incomplete> {
        Ok(Self {
            pass_mark: given(c.pass_mark, "pass_mark")?,
            max_mark: given(c.max_mark, "max_mark")?,
            terms_per_session: given(c.terms_per_session, "terms_per_session")?,
            grading_scale: given(c.grading_scale, "grading_scale")?,
        })
    }
}

school_table!(AcademicSettings in t, new: NewAcademicSettings, changes: AcademicSettingsChanges,
    search: []);
