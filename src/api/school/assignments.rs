//! `/api/v1/school/teacher-assignments/`: which teacher teaches which subject to which class
//! (one live assignment per triple).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, any},
        school::{
            classes,
            crud::{SchoolResource, check_ref, table_queries, top_level_methods},
            subjects, teachers,
        },
    },
    auth::{Caller, permissions::Resource},
    db::schema_tenant::teacher_assignments as t,
    error::{ApiResult, FieldErrors},
    tenancy::TenantConn,
};

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

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct AssignmentInput {
    teacher_id: Option<Uuid>,
    academic_class_id: Option<Uuid>,
    subject_id: Option<Uuid>,
    is_deleted: Option<bool>,
}

table_queries!(t, TeacherAssignment, search: [], soft_delete: is_deleted, changes: AssignmentInput);

pub struct Assignments;

impl SchoolResource for Assignments {
    const CREATE_RULES: Option<&'static str> = Some(
        "The (teacher, academic class, subject) triple is unique among live assignments (409 `conflict`).",
    );
    const PERMISSION: Resource = Resource::TeacherAssignment;
    const PATH: &'static str = "/api/v1/school/teacher-assignments/";
    type Scope = ();
    type Record = TeacherAssignment;
    type Input = AssignmentInput;

    top_level_methods!();

    fn parse(f: &mut Fields<'_>) -> AssignmentInput {
        AssignmentInput {
            teacher_id: f.required("teacher", &any),
            academic_class_id: f.required("academic_class", &any),
            subject_id: f.required("subject", &any),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        input: &AssignmentInput,
        _: Option<&TeacherAssignment>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref(
            conn,
            errors,
            "teacher",
            input.teacher_id,
            "teacher profile",
            teachers::live_exists,
        )?;
        check_ref(
            conn,
            errors,
            "academic_class",
            input.academic_class_id,
            "class",
            classes::live_exists,
        )?;
        check_ref(
            conn,
            errors,
            "subject",
            input.subject_id,
            "subject",
            subjects::live_exists,
        )?;
        Ok(())
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: AssignmentInput,
        caller: &Caller,
    ) -> ApiResult<TeacherAssignment> {
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::teacher_id.eq(input.teacher_id.unwrap_or_default()),
                t::academic_class_id.eq(input.academic_class_id.unwrap_or_default()),
                t::subject_id.eq(input.subject_id.unwrap_or_default()),
                t::is_deleted.eq(input.is_deleted.unwrap_or(false)),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(TeacherAssignment::as_returning())
            .get_result(conn.pg())?)
    }
}
