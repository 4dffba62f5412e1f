//! Roles inside one school: what a user's roles grant, and the default roles. The rows are
//! read and written by `school::roles`.

use crate::{
    auth::permissions::{PermissionSet, default_roles},
    error::ApiResult,
    school::roles::{self as rows, NewRole},
    tenancy::TenantConn,
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

/// Creates the default roles that are missing (by name); existing roles are left alone.
pub fn seed_defaults(conn: &mut TenantConn) -> ApiResult<()> {
    let roles = default_roles()
        .into_iter()
        .map(|(name, permissions)| NewRole {
            name: name.to_owned(),
            permissions: permissions.codenames().into_iter().map(Some).collect(),
        })
        .collect();
    rows::create_missing(conn, roles)?;
    announce_change(conn)
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

/// Tells every server process that this school's roles or assignments changed, so their
/// role caches drop the school (`NOTIFY school_roles`, delivered when the unit of work
/// commits). Sent by the application rather than a trigger: on Citus a school's tables live
/// on a worker, where a trigger's notification would reach no listener.
pub fn announce_change(conn: &mut TenantConn) -> ApiResult<()> {
    use diesel::prelude::*;
    let schema = conn.tenant().schema_name.as_str().to_owned();
    diesel::select(pg_notify("school_roles", schema)).execute(conn.pg())?;
    Ok(())
}

diesel::define_sql_function! {
    /// PostgreSQL `pg_notify(channel, payload)`.
    fn pg_notify(channel: diesel::sql_types::Text, payload: diesel::sql_types::Text);
}
