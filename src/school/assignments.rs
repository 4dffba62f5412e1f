//! Teacher assignments: which teacher teaches which subject to which class (one live
//! assignment per triple).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store,
    schema::{teacher_assignments as t, teacher_profiles},
    table::{school_forms, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct TeacherAssignment {
    pub id: Uuid,
    #[serde(rename = "teacher")]
    pub teacher_id: Uuid,
    #[serde(rename = "academic_class")]
    pub academic_class_id: Uuid,
    #[serde(rename = "subject")]
    pub subject_id: Uuid,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewAssignment, AssignmentChanges {
    teacher_id: Uuid,
    academic_class_id: Uuid,
    subject_id: Uuid,
    is_deleted: bool,
});

/// Teacher assignments.
pub struct Assignments;

school_table!(Assignments: TeacherAssignment in t, new: NewAssignment, changes: AssignmentChanges,
    search: [], soft_delete: is_deleted);

impl Store for Assignments {
    type Record = TeacherAssignment;
    const NAME: &'static str = "teacher_assignment";
}

impl Assignments {
    /// Whether the live teacher profile of `user_id` has a live assignment to `class_id`
    /// (what lets a teacher reach a class's attendance and report cards).
    pub fn teaches_class(conn: &mut TenantConn, user_id: Uuid, class_id: Uuid) -> ApiResult<bool> {
        Ok(diesel::select(diesel::dsl::exists(
            t::table
                .inner_join(teacher_profiles::table)
                .filter(teacher_profiles::user_id.eq(user_id))
                .filter(teacher_profiles::is_deleted.eq(false))
                .filter(t::is_deleted.eq(false))
                .filter(t::academic_class_id.eq(class_id)),
        ))
        .get_result(conn.pg())?)
    }
}
