//! `/api/v1/school/roles/` and `/api/v1/school/role-assignments/`: each school's own roles
//! (named sets of permission codenames) and who has them. A write to either drops the
//! school from every process's role cache.

use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, any, len},
        routes::Mount,
        school::crud::{self, Proposed, SchoolResource, check_ref, check_school_user},
    },
    auth::{
        permissions::{Permission, PermissionSet, Resource},
        roles::announce_change,
    },
    error::{ApiError, ApiResult, FieldErrors},
    request::Caller,
    school::roles::{
        self as role_rows, RoleAssignment, RoleAssignmentChanges, RoleAssignments, RoleChanges,
        Roles,
    },
    state::AppState,
    tenancy::{Tenant, TenantConn},
};

/// The rule both resources follow, for the OpenAPI document and the README.
const ROLE_RULES: &str = "Nobody grants what they do not hold: a role may be created or \
    changed only with permissions the caller holds (its permissions before and after the \
    change), and a role may be assigned, reassigned or unassigned only by a caller who \
    holds every permission of that role; otherwise 403 `permission_denied` and nothing is \
    written. A school keeps an administrator: a write that would leave no assignment of a \
    role holding every permission (when there was one) answers 409 `conflict`. API keys \
    that are not read-only hold every permission.";

/// 403 unless `caller` holds every permission of `needed`.
fn require_all(caller: &Caller, needed: PermissionSet, what: &str) -> ApiResult<()> {
    let lacking = caller.permissions.lacking(needed);
    if lacking.is_empty() {
        return Ok(());
    }
    Err(ApiError::PermissionDenied(format!(
        "you can only {what} with permissions you hold yourself (you lack {})",
        lacking.codenames().join(", ")
    )))
}

fn set_of(codenames: &[String]) -> PermissionSet {
    PermissionSet::from_codenames(codenames.iter().map(String::as_str))
}

fn set_of_stored(codenames: &[Option<String>]) -> PermissionSet {
    PermissionSet::from_codenames(codenames.iter().flatten().map(String::as_str))
}

/// What the school loses when a write takes away either the assignment `assignment` or
/// every full-permission grant of role `role`.
enum Losing {
    Assignment(Uuid),
    Role(Uuid),
}

/// 409 when, without what `losing` names, no assignment of a role holding every
/// permission would remain (while one does now): no school locks itself out.
fn keep_an_administrator(conn: &mut TenantConn, losing: Losing) -> ApiResult<()> {
    let held = role_rows::held_roles(conn)?;
    let full = held.iter().filter(|h| set_of(&h.permissions).is_complete());
    let remaining = full
        .flat_map(|h| h.assignments.iter().map(move |a| (h.role_id, *a)))
        .filter(|(role, assignment)| match losing {
            Losing::Assignment(id) => *assignment != id,
            Losing::Role(id) => *role != id,
        })
        .count();
    if remaining == 0 {
        return Err(ApiError::Conflict(
            "this would remove the school's last assignment of a role that holds every \
             permission, and nobody could manage the school any more; give such a role to \
             another user first"
                .into(),
        ));
    }
    Ok(())
}

/// The permissions of role `role_id` (empty when there is none: validation reported it).
fn role_permissions(conn: &mut TenantConn, role_id: Uuid) -> ApiResult<PermissionSet> {
    Ok(role_rows::permissions_of(conn, role_id)?
        .map(|codenames| set_of(&codenames))
        .unwrap_or_default())
}

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

impl SchoolResource for Roles {
    const PERMISSION: Resource = Resource::SchoolRole;
    const PATH: &'static str = "/api/v1/school/roles/";
    const WRITE_RULES: Option<&'static str> = Some(ROLE_RULES);

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

    fn authorize(
        conn: &mut TenantConn,
        caller: &Caller,
        write: Proposed<'_, Self>,
    ) -> ApiResult<()> {
        role_rows::lock_for_role_write(conn)?;
        let (before, after) = match write {
            Proposed::Create(new) => (None, Some(set_of_stored(&new.permissions))),
            Proposed::Replace(current, new) => (
                Some((current, set_of(&current.permissions))),
                Some(set_of_stored(&new.permissions)),
            ),
            Proposed::Patch(current, changes) => {
                let now = set_of(&current.permissions);
                let after = changes.permissions.as_deref().map_or(now, set_of_stored);
                (Some((current, now)), Some(after))
            }
            Proposed::Delete(current) => (Some((current, set_of(&current.permissions))), None),
        };
        if let Some((_, now)) = before {
            require_all(caller, now, "change or delete a role")?;
        }
        if let Some(after) = after {
            require_all(caller, after, "give a role permissions")?;
        }
        match (before, after) {
            (Some((current, now)), after)
                if now.is_complete() && !after.is_some_and(PermissionSet::is_complete) =>
            {
                keep_an_administrator(conn, Losing::Role(current.id))
            }
            _ => Ok(()),
        }
    }

    fn announce_write(conn: &mut TenantConn) -> ApiResult<()> {
        announce_change(conn)
    }

    fn after_write(state: &AppState, school: &Tenant) {
        forget_roles(state, school);
    }
}

impl SchoolResource for RoleAssignments {
    const PERMISSION: Resource = Resource::UserRoleAssignment;
    const PATH: &'static str = "/api/v1/school/role-assignments/";
    const WRITE_RULES: Option<&'static str> = Some(ROLE_RULES);

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
        check_ref::<Roles>(conn, errors, "role", changes.role_id, "role")
    }

    fn authorize(
        conn: &mut TenantConn,
        caller: &Caller,
        write: Proposed<'_, Self>,
    ) -> ApiResult<()> {
        role_rows::lock_for_role_write(conn)?;
        let (current, new_role) = match write {
            Proposed::Create(new) => (None, Some(new.role_id)),
            Proposed::Replace(current, new) => (Some(current), Some(new.role_id)),
            Proposed::Patch(current, changes) => (
                Some(current),
                Some(changes.role_id.unwrap_or(current.role_id)),
            ),
            Proposed::Delete(current) => (Some(current), None),
        };
        let new_permissions = match new_role {
            Some(role) => {
                let permissions = role_permissions(conn, role)?;
                require_all(caller, permissions, "assign a role")?;
                Some(permissions)
            }
            None => None,
        };
        let Some(current) = current else {
            return Ok(());
        };
        let current_permissions = role_permissions(conn, current.role_id)?;
        require_all(caller, current_permissions, "reassign or remove a role")?;
        if current_permissions.is_complete()
            && !new_permissions.is_some_and(PermissionSet::is_complete)
        {
            keep_an_administrator(conn, Losing::Assignment(current.id))?;
        }
        Ok(())
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
