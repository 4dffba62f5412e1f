//! `/api/v1/school/students/`: students (admission number unique among live students).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, any, len},
        school::{
            classes,
            crud::{SchoolResource, check_ref, table_queries, top_level_methods},
        },
    },
    auth::{Caller, permissions::Resource},
    db::{models::User, schema_tenant::students as t},
    error::{ApiResult, FieldErrors},
    tenancy::TenantConn,
};

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

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct StudentInput {
    admission_number: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    academic_class_id: Option<Option<Uuid>>,
    user_id: Option<Option<Uuid>>,
    is_deleted: Option<bool>,
}

table_queries!(t, Student, search: [admission_number, first_name, last_name], soft_delete: is_deleted, changes: StudentInput);

/// Whether a live student has this admission number (marks must name one).
pub fn admission_number_is_live(conn: &mut TenantConn, admission_number: &str) -> ApiResult<bool> {
    Ok(diesel::select(diesel::dsl::exists(
        t::table
            .filter(t::admission_number.eq(admission_number))
            .filter(t::is_deleted.eq(false)),
    ))
    .get_result(conn.pg())?)
}

/// Records an error when `user` is given and is not a user of this school.
pub fn check_school_user(
    conn: &mut TenantConn,
    field: &str,
    user: Option<Uuid>,
    errors: &mut FieldErrors,
) -> ApiResult<()> {
    if let Some(user_id) = user {
        let tenant_id = conn.tenant().id;
        let belongs =
            User::find(conn.pg(), user_id)?.is_some_and(|u| u.client_id == Some(tenant_id));
        if !belongs {
            errors.add(field, "no user of this school has this id");
        }
    }
    Ok(())
}

pub struct Students;

impl SchoolResource for Students {
    const CREATE_RULES: Option<&'static str> =
        Some("`admission_number` is unique among live students (409 `conflict`).");
    const PERMISSION: Resource = Resource::Student;
    const PATH: &'static str = "/api/v1/school/students/";
    type Scope = ();
    type Record = Student;
    type Input = StudentInput;

    top_level_methods!();

    fn parse(f: &mut Fields<'_>) -> StudentInput {
        StudentInput {
            admission_number: f.required("admission_number", &len(1, 50)),
            first_name: f.required("first_name", &len(1, 150)),
            last_name: f.required("last_name", &len(1, 150)),
            academic_class_id: f.nullable("academic_class", None, &any),
            user_id: f.nullable("user", None, &any),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        input: &StudentInput,
        _: Option<&Student>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref(
            conn,
            errors,
            "academic_class",
            input.academic_class_id.flatten(),
            "class",
            classes::live_exists,
        )?;
        check_school_user(conn, "user", input.user_id.flatten(), errors)
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: StudentInput,
        caller: &Caller,
    ) -> ApiResult<Student> {
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::admission_number.eq(input.admission_number.unwrap_or_default()),
                t::first_name.eq(input.first_name.unwrap_or_default()),
                t::last_name.eq(input.last_name.unwrap_or_default()),
                t::academic_class_id.eq(input.academic_class_id.flatten()),
                t::user_id.eq(input.user_id.flatten()),
                t::is_deleted.eq(input.is_deleted.unwrap_or(false)),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(Student::as_returning())
            .get_result(conn.pg())?)
    }
}
