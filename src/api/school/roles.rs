//! `/api/v1/school/roles/` and `/api/v1/school/role-assignments/`: each school's own roles
//! (named sets of permission codenames) and who has them.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, any, len},
        pagination::ListQuery,
        school::{crud::SchoolResource, students::check_school_user},
    },
    auth::{
        Caller,
        permissions::{Permission, PermissionSet, Resource},
    },
    db::schema_tenant::{school_roles, user_role_assignments},
    error::{ApiResult, FieldErrors},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Debug, Clone)]
#[diesel(table_name = school_roles, check_for_backend(diesel::pg::Pg))]
pub struct RoleRow {
    pub id: Uuid,
    pub name: String,
    pub permissions: Vec<Option<String>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct Role {
    pub id: Uuid,
    pub name: String,
    pub permissions: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<RoleRow> for Role {
    fn from(row: RoleRow) -> Self {
        Self {
            id: row.id,
            name: row.name,
            permissions: row.permissions.into_iter().flatten().collect(),
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = school_roles)]
pub struct RoleInput {
    name: Option<String>,
    permissions: Option<Vec<Option<String>>>,
}

mod role_queries {
    use super::{RoleRow, school_roles};
    crate::api::school::crud::table_queries!(school_roles, RoleRow, search: [name]);
}

/// Known codenames only; stored sorted and without repeats.
fn permission_list(codenames: &[String]) -> Result<(), String> {
    match codenames.iter().find(|c| Permission::parse(c).is_none()) {
        Some(unknown) => Err(format!("unknown permission '{unknown}'")),
        None => Ok(()),
    }
}

pub struct Roles;

impl SchoolResource for Roles {
    const PERMISSION: Resource = Resource::SchoolRole;
    const PATH: &'static str = "/api/v1/school/roles/";
    type Scope = ();
    type Record = Role;
    type Input = RoleInput;

    fn announce_write(conn: &mut TenantConn) -> ApiResult<()> {
        crate::auth::roles::announce_change(conn)
    }

    fn after_write(state: &crate::state::AppState, school: &crate::tenancy::Tenant) {
        state
            .role_cache
            .invalidate_school(school.schema_name.as_str());
    }

    fn scope(_: &mut TenantConn, _: &[Uuid]) -> ApiResult<()> {
        Ok(())
    }

    fn parse(f: &mut Fields<'_>) -> RoleInput {
        let permissions = f
            .optional::<Vec<String>>("permissions", Vec::new(), &|codes: &Vec<String>| {
                permission_list(codes)
            })
            .map(|codes| {
                PermissionSet::from_codenames(codes.iter().map(String::as_str))
                    .codenames()
                    .into_iter()
                    .map(Some)
                    .collect()
            });
        RoleInput {
            name: f
                .required("name", &len(1, 100))
                .map(|n| n.trim().to_owned()),
            permissions,
        }
    }

    fn list(conn: &mut TenantConn, _: &(), query: &ListQuery) -> ApiResult<(i64, Vec<Role>)> {
        let (count, rows) = role_queries::list_rows(conn, query, |q| q)?;
        Ok((count, rows.into_iter().map(Role::from).collect()))
    }

    fn find(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<Role>> {
        Ok(role_queries::find_row(conn, id, include_deleted)?.map(Role::from))
    }

    fn create(conn: &mut TenantConn, _: &(), input: RoleInput, caller: &Caller) -> ApiResult<Role> {
        use school_roles as t;
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::name.eq(input.name.unwrap_or_default()),
                t::permissions.eq(input.permissions.unwrap_or_default()),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(RoleRow::as_returning())
            .get_result(conn.pg())
            .map(Role::from)?)
    }

    fn update(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        input: RoleInput,
        caller: &Caller,
    ) -> ApiResult<Role> {
        use school_roles as t;
        Ok(diesel::update(t::table.find(id))
            .set((
                &input,
                t::updated_by.eq(caller.user_id()),
                t::updated_at.eq(Utc::now()),
            ))
            .returning(RoleRow::as_returning())
            .get_result(conn.pg())
            .map(Role::from)?)
    }

    fn delete(conn: &mut TenantConn, _: &(), id: Uuid) -> ApiResult<()> {
        role_queries::delete_row(conn, id)
    }
}

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = user_role_assignments, check_for_backend(diesel::pg::Pg))]
pub struct Assignment {
    pub id: Uuid,
    #[serde(rename = "user")]
    pub user_id: Uuid,
    #[serde(rename = "role")]
    pub role_id: Uuid,
    pub created_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = user_role_assignments)]
pub struct AssignmentInput {
    user_id: Option<Uuid>,
    role_id: Option<Uuid>,
}

mod assignment_queries {
    use super::{Assignment, user_role_assignments};
    crate::api::school::crud::table_queries!(user_role_assignments, Assignment, search: []);
}

pub struct RoleAssignments;

impl SchoolResource for RoleAssignments {
    const PERMISSION: Resource = Resource::UserRoleAssignment;
    const PATH: &'static str = "/api/v1/school/role-assignments/";
    type Scope = ();
    type Record = Assignment;
    type Input = AssignmentInput;

    fn announce_write(conn: &mut TenantConn) -> ApiResult<()> {
        crate::auth::roles::announce_change(conn)
    }

    fn after_write(state: &crate::state::AppState, school: &crate::tenancy::Tenant) {
        state
            .role_cache
            .invalidate_school(school.schema_name.as_str());
    }

    fn scope(_: &mut TenantConn, _: &[Uuid]) -> ApiResult<()> {
        Ok(())
    }

    fn parse(f: &mut Fields<'_>) -> AssignmentInput {
        AssignmentInput {
            user_id: f.required("user", &any),
            role_id: f.required("role", &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        input: &AssignmentInput,
        _: Option<&Assignment>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_school_user(conn, "user", input.user_id, errors)?;
        if let Some(role) = input.role_id {
            if role_queries::find_row(conn, role, false)?.is_none() {
                errors.add("role", "no role of this school has this id");
            }
        }
        Ok(())
    }

    fn list(conn: &mut TenantConn, _: &(), query: &ListQuery) -> ApiResult<(i64, Vec<Assignment>)> {
        assignment_queries::list_rows(conn, query, |q| q)
    }

    fn find(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<Assignment>> {
        assignment_queries::find_row(conn, id, include_deleted)
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: AssignmentInput,
        caller: &Caller,
    ) -> ApiResult<Assignment> {
        use user_role_assignments as t;
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::user_id.eq(input.user_id.unwrap_or_default()),
                t::role_id.eq(input.role_id.unwrap_or_default()),
                t::created_by.eq(caller.user_id()),
            ))
            .returning(Assignment::as_returning())
            .get_result(conn.pg())?)
    }

    fn update(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        input: AssignmentInput,
        _: &Caller,
    ) -> ApiResult<Assignment> {
        if input.user_id.is_none() && input.role_id.is_none() {
            // Nothing to change (an empty PATCH): answer the record as it is.
            return assignment_queries::find_row(conn, id, false)?
                .ok_or_else(crate::error::ApiError::not_found);
        }
        Ok(diesel::update(user_role_assignments::table.find(id))
            .set(&input)
            .returning(Assignment::as_returning())
            .get_result(conn.pg())?)
    }

    fn delete(conn: &mut TenantConn, _: &(), id: Uuid) -> ApiResult<()> {
        assignment_queries::delete_row(conn, id)
    }
}
