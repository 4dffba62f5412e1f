//! Roles inside one school: what a user's roles grant, and the default roles.

use chrono::Utc;
use diesel::prelude::*;
use uuid::Uuid;

use crate::{
    auth::permissions::{PermissionSet, default_roles},
    db::schema_tenant::{school_roles, user_role_assignments},
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

/// The user's role names (sorted) and the union of their permissions, in one query.
pub fn for_user(conn: &mut TenantConn, user_id: Uuid) -> ApiResult<(Vec<String>, PermissionSet)> {
    let rows: Vec<(String, Vec<Option<String>>)> = user_role_assignments::table
        .inner_join(school_roles::table)
        .filter(user_role_assignments::user_id.eq(user_id))
        .select((school_roles::name, school_roles::permissions))
        .order(school_roles::name)
        .load(conn.pg())?;
    let mut permissions = PermissionSet::default();
    let mut names = Vec::with_capacity(rows.len());
    for (name, codenames) in rows {
        permissions = permissions.union(PermissionSet::from_codenames(
            codenames.iter().flatten().map(String::as_str),
        ));
        names.push(name);
    }
    Ok((names, permissions))
}

/// Creates the default roles that are missing (by name); existing roles are left alone.
pub fn seed_defaults(conn: &mut TenantConn) -> ApiResult<()> {
    let now = Utc::now();
    let rows: Vec<_> = default_roles()
        .into_iter()
        .map(|(name, permissions)| {
            (
                school_roles::id.eq(Uuid::new_v4()),
                school_roles::name.eq(name),
                school_roles::permissions.eq(permissions
                    .codenames()
                    .into_iter()
                    .map(Some)
                    .collect::<Vec<_>>()),
                school_roles::created_at.eq(now),
                school_roles::updated_at.eq(now),
            )
        })
        .collect();
    diesel::insert_into(school_roles::table)
        .values(rows)
        .on_conflict(school_roles::name)
        .do_nothing()
        .execute(conn.pg())?;
    announce_change(conn)
}

/// Tells every server process that this school's roles or assignments changed, so their
/// role caches drop the school (`NOTIFY school_roles`, delivered when the unit of work
/// commits). Sent by the application rather than a trigger: on Citus a school's tables live
/// on a worker, where a trigger's notification would reach no listener.
pub fn announce_change(conn: &mut TenantConn) -> ApiResult<()> {
    let schema = conn.tenant().schema_name.as_str().to_owned();
    diesel::select(pg_notify("school_roles", schema)).execute(conn.pg())?;
    Ok(())
}

diesel::define_sql_function! {
    /// PostgreSQL `pg_notify(channel, payload)`.
    fn pg_notify(channel: diesel::sql_types::Text, payload: diesel::sql_types::Text);
}

/// Gives `user_id` the role called `role_name` (idempotent).
pub fn assign_by_name(conn: &mut TenantConn, user_id: Uuid, role_name: &str) -> ApiResult<()> {
    let role_id: Uuid = school_roles::table
        .filter(school_roles::name.eq(role_name))
        .select(school_roles::id)
        .first(conn.pg())
        .optional()?
        .ok_or_else(|| ApiError::validation("roles", format!("unknown role '{role_name}'")))?;
    diesel::insert_into(user_role_assignments::table)
        .values((
            user_role_assignments::id.eq(Uuid::new_v4()),
            user_role_assignments::user_id.eq(user_id),
            user_role_assignments::role_id.eq(role_id),
        ))
        .on_conflict((
            user_role_assignments::user_id,
            user_role_assignments::role_id,
        ))
        .do_nothing()
        .execute(conn.pg())?;
    announce_change(conn)
}
