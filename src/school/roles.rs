//! Each school's own roles (named sets of permission codenames) and who has them. What a
//! role grants is decided in `auth`; here are the rows and their queries.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    FromRows, Store,
    schema::{known_permissions as k, school_roles as t, user_role_assignments as a},
    table::{school_forms, school_table},
};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Debug, Clone)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
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

// `permissions`: known codenames, sorted, without repeats (the API parser sees to it).
school_forms!(t: NewRole, RoleChanges {
    name: String,
    permissions: Vec<Option<String>>,
});

/// Roles, answered with their codenames as plain strings.
pub struct Roles;

school_table!(Roles: RoleRow in t, new: NewRole, changes: RoleChanges, search: [name]);

impl Store for Roles {
    type Record = Role;
    const NAME: &'static str = "school_role";
}

impl FromRows<RoleRow> for Role {
    fn from_rows(_: &mut TenantConn, rows: Vec<RoleRow>) -> ApiResult<Vec<Role>> {
        Ok(rows.into_iter().map(Role::from).collect())
    }
}

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = a, check_for_backend(diesel::pg::Pg))]
pub struct RoleAssignment {
    pub id: Uuid,
    #[serde(rename = "user")]
    pub user_id: Uuid,
    #[serde(rename = "role")]
    pub role_id: Uuid,
    pub created_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

school_forms!(a: NewRoleAssignment, RoleAssignmentChanges {
    user_id: Uuid,
    role_id: Uuid,
});

/// Who has which role.
pub struct RoleAssignments;

school_table!(RoleAssignments: RoleAssignment in a, new: NewRoleAssignment,
    changes: RoleAssignmentChanges, search: []);

impl Store for RoleAssignments {
    type Record = RoleAssignment;
    const NAME: &'static str = "user_role_assignment";
}

/// The names and codenames of `user_id`'s roles, by name, in one query.
pub fn roles_of_user(
    conn: &mut TenantConn,
    user_id: Uuid,
) -> ApiResult<Vec<(String, Vec<String>)>> {
    let rows: Vec<(String, Vec<Option<String>>)> = a::table
        .inner_join(t::table)
        .filter(a::user_id.eq(user_id))
        .select((t::name, t::permissions))
        .order(t::name)
        .load(conn.pg())?;
    Ok(rows
        .into_iter()
        .map(|(name, codenames)| (name, codenames.into_iter().flatten().collect()))
        .collect())
}

/// Creates the roles of `roles` (name, codenames) that are missing by name; existing roles
/// are left alone.
pub fn create_missing(conn: &mut TenantConn, roles: Vec<NewRole>) -> ApiResult<()> {
    diesel::insert_into(t::table)
        .values(
            roles
                .iter()
                .map(|role| (role, t::id.eq(Uuid::new_v4())))
                .collect::<Vec<_>>(),
        )
        .on_conflict(t::name)
        .do_nothing()
        .execute(conn.pg())?;
    Ok(())
}

/// Gives `user_id` the role called `role_name` (idempotent).
pub fn assign_by_name(conn: &mut TenantConn, user_id: Uuid, role_name: &str) -> ApiResult<()> {
    let role_id: Uuid = t::table
        .filter(t::name.eq(role_name))
        .select(t::id)
        .first(conn.pg())
        .optional()?
        .ok_or_else(|| ApiError::validation("roles", format!("unknown role '{role_name}'")))?;
    diesel::insert_into(a::table)
        .values((
            a::id.eq(Uuid::new_v4()),
            a::user_id.eq(user_id),
            a::role_id.eq(role_id),
        ))
        .on_conflict((a::user_id, a::role_id))
        .do_nothing()
        .execute(conn.pg())?;
    Ok(())
}

/// Serialises writes to roles and role assignments in this school for the rest of the
/// transaction, so a rule read across them (the school keeps an administrator) still holds
/// when the write commits. Reads are not blocked.
pub fn lock_for_role_write(conn: &mut TenantConn) -> ApiResult<()> {
    diesel::sql_query("LOCK TABLE user_role_assignments IN SHARE ROW EXCLUSIVE MODE")
        .execute(conn.pg())?;
    Ok(())
}

/// A role's codenames and the ids of its assignments.
pub struct RoleHolding {
    pub role_id: Uuid,
    pub permissions: Vec<String>,
    pub assignments: Vec<Uuid>,
}

/// Every role that has assignments, with its codenames and assignment ids (one query).
pub fn held_roles(conn: &mut TenantConn) -> ApiResult<Vec<RoleHolding>> {
    let rows: Vec<(Uuid, Vec<Option<String>>, Uuid)> = a::table
        .inner_join(t::table)
        .select((t::id, t::permissions, a::id))
        .order((t::id, a::id))
        .load(conn.pg())?;
    let mut held: Vec<RoleHolding> = Vec::new();
    for (role_id, permissions, assignment) in rows {
        match held.last_mut() {
            Some(last) if last.role_id == role_id => last.assignments.push(assignment),
            _ => held.push(RoleHolding {
                role_id,
                permissions: permissions.into_iter().flatten().collect(),
                assignments: vec![assignment],
            }),
        }
    }
    Ok(held)
}

/// The codenames of role `role_id`, when it exists.
pub fn permissions_of(conn: &mut TenantConn, role_id: Uuid) -> ApiResult<Option<Vec<String>>> {
    let row: Option<Vec<Option<String>>> = t::table
        .find(role_id)
        .select(t::permissions)
        .first(conn.pg())
        .optional()?;
    Ok(row.map(|codenames| codenames.into_iter().flatten().collect()))
}

/// Whether the school has any role.
pub fn any_role(conn: &mut TenantConn) -> ApiResult<bool> {
    Ok(diesel::select(diesel::dsl::exists(t::table.select(t::id))).get_result(conn.pg())?)
}

/// The id and codenames of the role called `name`, when it exists.
pub fn permissions_by_name(
    conn: &mut TenantConn,
    name: &str,
) -> ApiResult<Option<(Uuid, Vec<String>)>> {
    let row: Option<(Uuid, Vec<Option<String>>)> = t::table
        .filter(t::name.eq(name))
        .select((t::id, t::permissions))
        .first(conn.pg())
        .optional()?;
    Ok(row.map(|(id, codenames)| (id, codenames.into_iter().flatten().collect())))
}

/// Replaces the codenames of role `id` (sorted, without repeats: the caller's care).
pub fn set_permissions(conn: &mut TenantConn, id: Uuid, codenames: Vec<String>) -> ApiResult<()> {
    let codenames: Vec<Option<String>> = codenames.into_iter().map(Some).collect();
    diesel::update(t::table.find(id))
        .set((
            t::permissions.eq(codenames),
            t::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn.pg())?;
    Ok(())
}

/// The codenames this school has already been given (see `auth::roles::seed_defaults`).
pub fn known_permissions(conn: &mut TenantConn) -> ApiResult<Vec<String>> {
    Ok(k::table.select(k::codename).load(conn.pg())?)
}

/// Records `codenames` as given to this school (idempotent).
pub fn record_known_permissions(conn: &mut TenantConn, codenames: &[String]) -> ApiResult<()> {
    let rows: Vec<_> = codenames.iter().map(|code| k::codename.eq(code)).collect();
    diesel::insert_into(k::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn.pg())?;
    Ok(())
}

/// Tells every server process that who may do or read what in this school changed (its
/// roles or assignments, a guardian's children: `change_log` for `Store::CHANGES_READ_SCOPES`),
/// so their role caches drop the school (`NOTIFY school_roles`, delivered when the unit of work
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
