//! `/api/v1/school/departments/`: departments with a head (a teacher profile), a subject and
//! their teachers (kept in order in `department_teachers`).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        fields::{DistinctIds, Fields, any, len},
        pagination::ListQuery,
        school::{
            crud::{SchoolResource, check_ref, table_queries},
            subjects, teachers,
        },
    },
    auth::{Caller, permissions::Resource},
    db::schema_tenant::{department_teachers as dt, departments as t},
    error::ApiResult,
    error::FieldErrors,
    tenancy::TenantConn,
};

/// The most teachers one department lists: bounds the work one request can ask for.
pub const MAX_TEACHERS: usize = 200;

#[derive(Queryable, Selectable, Debug, Clone)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct DepartmentRow {
    pub id: Uuid,
    pub name: String,
    pub hod_id: Uuid,
    pub subject_id: Uuid,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct Department {
    pub id: Uuid,
    pub name: String,
    pub hod: Uuid,
    pub subject: Uuid,
    pub teachers: Vec<Uuid>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct DepartmentInput {
    name: Option<String>,
    hod_id: Option<Uuid>,
    subject_id: Option<Uuid>,
    is_deleted: Option<bool>,
    #[diesel(skip_update)]
    teachers: Option<Vec<Uuid>>,
}

table_queries!(t, DepartmentRow, search: [name], soft_delete: is_deleted);

/// Attaches each department's teachers (one query for the whole page).
fn with_teachers(conn: &mut TenantConn, rows: Vec<DepartmentRow>) -> ApiResult<Vec<Department>> {
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let mut by_department: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
    let links: Vec<(Uuid, Uuid)> = dt::table
        .filter(dt::department_id.eq_any(&ids))
        .order((dt::department_id, dt::position))
        .select((dt::department_id, dt::teacher_id))
        .load(conn.pg())?;
    for (department, teacher) in links {
        by_department.entry(department).or_default().push(teacher);
    }
    Ok(rows
        .into_iter()
        .map(|r| Department {
            teachers: by_department.remove(&r.id).unwrap_or_default(),
            id: r.id,
            name: r.name,
            hod: r.hod_id,
            subject: r.subject_id,
            is_deleted: r.is_deleted,
            created_by: r.created_by,
            updated_by: r.updated_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
        .collect())
}

fn set_teachers(conn: &mut TenantConn, department: Uuid, teachers: &[Uuid]) -> ApiResult<()> {
    diesel::delete(dt::table.filter(dt::department_id.eq(department))).execute(conn.pg())?;
    let rows: Vec<_> = teachers
        .iter()
        .enumerate()
        .map(|(position, teacher)| {
            (
                dt::department_id.eq(department),
                dt::teacher_id.eq(*teacher),
                dt::position.eq(position as i32),
            )
        })
        .collect();
    diesel::insert_into(dt::table)
        .values(rows)
        .execute(conn.pg())?;
    Ok(())
}

fn one(conn: &mut TenantConn, row: DepartmentRow) -> ApiResult<Department> {
    Ok(with_teachers(conn, vec![row])?.remove(0))
}

pub struct Departments;

impl SchoolResource for Departments {
    const PERMISSION: Resource = Resource::Department;
    const PATH: &'static str = "/api/v1/school/departments/";
    type Scope = ();
    type Record = Department;
    type Input = DepartmentInput;

    fn scope(_: &mut TenantConn, _: &[Uuid]) -> ApiResult<()> {
        Ok(())
    }

    fn parse(f: &mut Fields<'_>) -> DepartmentInput {
        let teachers =
            f.optional::<Vec<Uuid>>("teachers", Vec::new(), &DistinctIds { max: MAX_TEACHERS });
        DepartmentInput {
            name: f.required("name", &len(1, 255)),
            hod_id: f.required("hod", &any),
            subject_id: f.required("subject", &any),
            is_deleted: f.optional("is_deleted", false, &any),
            teachers,
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        input: &DepartmentInput,
        _: Option<&Department>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref(
            conn,
            errors,
            "hod",
            input.hod_id,
            "teacher profile",
            teachers::live_exists,
        )?;
        check_ref(
            conn,
            errors,
            "subject",
            input.subject_id,
            "subject",
            subjects::live_exists,
        )?;
        if let Some(listed) = input.teachers.as_deref().filter(|ids| !ids.is_empty()) {
            let live = teachers::live_ids(conn, listed)?;
            for teacher in listed.iter().filter(|id| !live.contains(id)) {
                errors.add(
                    "teachers",
                    format!("no live teacher profile has the id {teacher}"),
                );
            }
        }
        Ok(())
    }

    fn list(conn: &mut TenantConn, _: &(), query: &ListQuery) -> ApiResult<(i64, Vec<Department>)> {
        let (count, rows) = list_rows(conn, query, |q| q)?;
        Ok((count, with_teachers(conn, rows)?))
    }

    fn find(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<Department>> {
        find_row(conn, id, include_deleted)?
            .map(|row| one(conn, row))
            .transpose()
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: DepartmentInput,
        caller: &Caller,
    ) -> ApiResult<Department> {
        let row: DepartmentRow = diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::name.eq(input.name.unwrap_or_default()),
                t::hod_id.eq(input.hod_id.unwrap_or_default()),
                t::subject_id.eq(input.subject_id.unwrap_or_default()),
                t::is_deleted.eq(input.is_deleted.unwrap_or(false)),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(DepartmentRow::as_returning())
            .get_result(conn.pg())?;
        set_teachers(conn, row.id, &input.teachers.unwrap_or_default())?;
        one(conn, row)
    }

    fn update(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        input: DepartmentInput,
        caller: &Caller,
    ) -> ApiResult<Department> {
        let row: DepartmentRow = diesel::update(t::table.find(id))
            .set((
                &input,
                t::updated_by.eq(caller.user_id()),
                t::updated_at.eq(Utc::now()),
            ))
            .returning(DepartmentRow::as_returning())
            .get_result(conn.pg())?;
        if let Some(teachers) = &input.teachers {
            set_teachers(conn, id, teachers)?;
        }
        one(conn, row)
    }

    fn delete(conn: &mut TenantConn, _: &(), id: Uuid) -> ApiResult<()> {
        delete_row(conn, id)
    }
}
