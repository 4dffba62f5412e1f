//! Roles inside one school: what a user's roles grant, and the default roles. The rows are
//! read and written by `school::roles`.

use std::collections::BTreeSet;

use crate::{
    auth::permissions::{PermissionSet, ROLES_ARRIVING_WITH, all_codenames, default_roles},
    error::ApiResult,
    school::roles::{self as rows, NewRole},
    tenancy::{TenantConn, school_migrations::SchoolSeed},
};

/// What provisioning and `migrate` run on a school (see `seed_defaults`).
pub const SEED: SchoolSeed = SchoolSeed {
    apply: seed_defaults,
    codenames: all_codenames,
};

/// The user's role names (sorted) and the union of their permissions, in one query.
pub fn for_user(
    conn: &mut TenantConn,
    user_id: uuid::Uuid,
) -> ApiResult<(Vec<String>, PermissionSet)> {
    let mut permissions = PermissionSet::default();
    let mut names = Vec::new();
    for (name, codenames) in rows::roles_of_user(conn, user_id)? {
        permissions = permissions.union(PermissionSet::from_codenames(
            codenames.iter().map(String::as_str),
        ));
        names.push(name);
    }
    Ok((names, permissions))
}

/// Creates the default roles when the school has none (a new school, or one whose roles
/// table just came with a migration). Then the permissions that grow: every catalogue
/// codename the school has not recorded in `known_permissions` is granted to the default
/// roles (by name) that have it by default, and recorded. A codename is granted once: one
/// an administrator removes later stays removed, and renamed or deleted default roles get
/// nothing.
pub fn seed_defaults(conn: &mut TenantConn) -> ApiResult<()> {
    let defaults = default_roles();
    let mut changed = false;
    if !rows::any_role(conn)? {
        let roles = defaults
            .iter()
            .map(|(name, permissions)| NewRole {
                name: (*name).to_owned(),
                permissions: permissions.codenames().into_iter().map(Some).collect(),
            })
            .collect();
        rows::create_missing(conn, roles)?;
        changed = true;
    }
    let known: BTreeSet<String> = rows::known_permissions(conn)?.into_iter().collect();
    let new: Vec<String> = all_codenames()
        .into_iter()
        .filter(|code| !known.contains(code))
        .collect();
    if !new.is_empty() {
        changed |= create_arriving_roles(conn, &defaults, &new)?;
        for (name, permissions) in &defaults {
            let grant: Vec<String> = permissions
                .codenames()
                .into_iter()
                .filter(|code| new.contains(code))
                .collect();
            changed |= grant_to_role(conn, name, &grant)?;
        }
        rows::record_known_permissions(conn, &new)?;
    }
    if changed {
        announce_change(conn)?;
    }
    Ok(())
}

/// Creates the default roles that came with one of the `new` codenames (a school older
/// than the role: `ROLES_ARRIVING_WITH`), with every permission they hold by default; a
/// school that already has a role of that name keeps its own. Answers whether a role was
/// made.
fn create_arriving_roles(
    conn: &mut TenantConn,
    defaults: &[(&'static str, PermissionSet)],
    new: &[String],
) -> ApiResult<bool> {
    let mut created = false;
    for (role, codename) in ROLES_ARRIVING_WITH {
        let default = defaults.iter().find(|(name, _)| name == role);
        let Some((name, permissions)) = default.filter(|_| new.iter().any(|c| c == codename))
        else {
            continue;
        };
        if rows::permissions_by_name(conn, name)?.is_none() {
            let role = NewRole {
                name: (*name).to_owned(),
                permissions: permissions.codenames().into_iter().map(Some).collect(),
            };
            rows::create_missing(conn, vec![role])?;
            created = true;
        }
    }
    Ok(created)
}

/// Adds `codenames` to the role called `name` (kept sorted, without repeats); answers
/// whether the role changed.
fn grant_to_role(conn: &mut TenantConn, name: &str, codenames: &[String]) -> ApiResult<bool> {
    if codenames.is_empty() {
        return Ok(false);
    }
    let Some((id, current)) = rows::permissions_by_name(conn, name)? else {
        return Ok(false);
    };
    let mut merged: BTreeSet<String> = current.iter().cloned().collect();
    merged.extend(codenames.iter().cloned());
    if merged.len() == current.len() {
        return Ok(false);
    }
    rows::set_permissions(conn, id, merged.into_iter().collect())?;
    Ok(true)
}

/// Gives `user_id` the role called `role_name` (idempotent).
pub fn assign_by_name(
    conn: &mut TenantConn,
    user_id: uuid::Uuid,
    role_name: &str,
) -> ApiResult<()> {
    rows::assign_by_name(conn, user_id, role_name)?;
    announce_change(conn)
}

/// Tells every server process that this school's roles or assignments changed
/// (`school::roles::announce_change`).
pub use crate::school::roles::announce_change;
