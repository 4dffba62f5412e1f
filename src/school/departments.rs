//! Departments: a head (a teacher profile), a subject and their teachers, kept in order in
//! `department_teachers`. Answered as [`Department`], the row with its teachers.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, FromRows, Store,
    links::LinkTable,
    schema::{department_teachers as dt, departments as t},
    table::{school_forms, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

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

school_forms!(t: NewDepartment, DepartmentChanges {
    name: String,
    hod_id: Uuid,
    subject_id: Uuid,
    is_deleted: bool,
} linked {
    /// Teacher profile ids, in order (stored in `department_teachers`).
    teachers: Vec<Uuid>,
});

/// Departments, answered with their ordered teachers.
pub struct Departments;

school_table!(Departments: DepartmentRow in t, new: NewDepartment, changes: DepartmentChanges,
    search: [name], soft_delete: is_deleted);

impl FromRows<DepartmentRow> for Department {
    /// The departments of `rows` with their teachers (one query for all of them).
    fn from_rows(conn: &mut TenantConn, rows: Vec<DepartmentRow>) -> ApiResult<Vec<Self>> {
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
            .map(|r| Self {
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
}

/// A department's teachers, in their order.
const DEPARTMENT_TEACHERS: LinkTable = LinkTable {
    table: "department_teachers",
    owner: "department_id",
    member: "teacher_id",
};

/// Replaces the teachers of `department` with `teachers`, in this order.
fn set_teachers(conn: &mut TenantConn, department: Uuid, teachers: &[Uuid]) -> ApiResult<()> {
    DEPARTMENT_TEACHERS.replace(conn, department, teachers)
}

impl Store for Departments {
    type Record = Department;
    const NAME: &'static str = "department";

    fn after_create(
        conn: &mut TenantConn,
        rows: &[DepartmentRow],
        news: &[NewDepartment],
        _: &Actor,
    ) -> ApiResult<()> {
        for (row, new) in rows.iter().zip(news) {
            set_teachers(conn, row.id, &new.teachers)?;
        }
        Ok(())
    }

    fn after_replace(
        conn: &mut TenantConn,
        row: &DepartmentRow,
        new: &NewDepartment,
        _: &Actor,
    ) -> ApiResult<()> {
        set_teachers(conn, row.id, &new.teachers)
    }

    fn after_update(
        conn: &mut TenantConn,
        rows: &[DepartmentRow],
        changes: &DepartmentChanges,
        _: &Actor,
    ) -> ApiResult<()> {
        if let Some(teachers) = &changes.teachers {
            for row in rows {
                set_teachers(conn, row.id, teachers)?;
            }
        }
        Ok(())
    }
}
