//! Students (admission number unique among live students).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store,
    schema::students as t,
    store::LiveCount,
    table::{school_forms, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Student {
    pub id: Uuid,
    pub admission_number: String,
    pub first_name: String,
    pub last_name: String,
    #[serde(rename = "academic_class")]
    pub academic_class_id: Option<Uuid>,
    #[serde(rename = "user")]
    pub user_id: Option<Uuid>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewStudent, StudentChanges {
    admission_number: String,
    first_name: String,
    last_name: String,
    academic_class_id: Option<Uuid>,
    user_id: Option<Uuid>,
    is_deleted: bool,
});

/// Students.
pub struct Students;

school_table!(Students: Student in t, new: NewStudent, changes: StudentChanges,
    search: [admission_number, first_name, last_name], soft_delete: is_deleted);

impl Store for Students {
    type Record = Student;

    const LIVE_COUNT: Option<LiveCount<()>> = Some(LiveCount::kept_as("students"));
}

impl Students {
    /// Whether a live student has this admission number (marks must name one).
    pub fn admission_number_is_live(conn: &mut TenantConn, number: &str) -> ApiResult<bool> {
        Ok(diesel::select(diesel::dsl::exists(
            t::table
                .filter(t::admission_number.eq(number))
                .filter(t::is_deleted.eq(false)),
        ))
        .get_result(conn.pg())?)
    }
}
