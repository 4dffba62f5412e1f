//! `/api/v1/school/roles/` and `/api/v1/school/role-assignments/`: each school's own roles
//! (named sets of permission codenames) and who has them. A write to either drops the
//! school from every process's role cache.

use crate::{
    api::{
        fields::{Fields, any, len},
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref, check_school_user},
    },
    auth::AppState,
    auth::{
        permissions::{Permission, PermissionSet, Resource},
        roles::announce_change,
    },
    error::{ApiResult, FieldErrors},
    school::roles::{RoleAssignment, RoleAssignmentChanges, RoleChanges, RoleRow, Roles as Store},
    tenancy::{Tenant, TenantConn},
};

/// Known codenames only.
fn permission_list(codenames: &[String]) -> Result<(), String> {
    match codenames.iter().find(|c| Permission::parse(c).is_none()) {
        Some(unknown) => Err(format!("unknown permission '{unknown}'")),
        None => Ok(()),
    }
}

/// Drops the school from this process's role cache (other processes hear the `NOTIFY` of
/// `announce_change`).
fn forget_roles(state: &AppState, school: &Tenant) {
    state
        .role_cache
        .invalidate_school(school.schema_name.as_str());
}

pub struct Roles;

impl SchoolResource for Roles {
    const PERMISSION: Resource = Resource::SchoolRole;
    const PATH: &'static str = "/api/v1/school/roles/";
    type Store = Store;

    /// Codenames are stored sorted and without repeats.
    fn parse(f: &mut Fields<'_>) -> RoleChanges {
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
        RoleChanges {
            name: f
                .required("name", &len(1, 100))
                .map(|n| n.trim().to_owned()),
            permissions,
        }
    }

    fn announce_write(conn: &mut TenantConn) -> ApiResult<()> {
        announce_change(conn)
    }

    fn after_write(state: &AppState, school: &Tenant) {
        forget_roles(state, school);
    }
}

pub struct RoleAssignments;

impl SchoolResource for RoleAssignments {
    const PERMISSION: Resource = Resource::UserRoleAssignment;
    const PATH: &'static str = "/api/v1/school/role-assignments/";
    type Store = RoleAssignment;

    fn parse(f: &mut Fields<'_>) -> RoleAssignmentChanges {
        RoleAssignmentChanges {
            user_id: f.required("user", &any),
            role_id: f.required("role", &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        changes: &RoleAssignmentChanges,
        _: Option<&RoleAssignment>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_school_user(conn, "user", changes.user_id, errors)?;
        check_ref::<RoleRow>(conn, errors, "role", changes.role_id, "role")
    }

    fn announce_write(conn: &mut TenantConn) -> ApiResult<()> {
        announce_change(conn)
    }

    fn after_write(state: &AppState, school: &Tenant) {
        forget_roles(state, school);
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Roles>(m);
    crud::mount::<RoleAssignments>(m);
}
