//! Teacher profiles: a school user who teaches, with an optional staff number.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    db::{models::User, schema_public::users, schema_tenant::teacher_profiles},
    error::ApiResult,
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Debug, Clone)]
#[diesel(table_name = teacher_profiles, check_for_backend(diesel::pg::Pg))]
pub struct TeacherProfile {
    pub id: Uuid,
    pub user_id: Uuid,
    pub staff_number: Option<String>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The teacher profile as answered by the API; `name` is the user's display name.
#[derive(Serialize, Debug, Clone)]
pub struct TeacherView {
    pub id: Uuid,
    pub user: Uuid,
    pub name: String,
    pub staff_number: Option<String>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl TeacherProfile {
    pub fn view(self, name: String) -> TeacherView {
        TeacherView {
            id: self.id,
            user: self.user_id,
            name,
            staff_number: self.staff_number,
            is_deleted: self.is_deleted,
            created_by: self.created_by,
            updated_by: self.updated_by,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

/// The live teacher profile of a user in this school, if any.
pub fn find_live_by_user(
    conn: &mut TenantConn,
    user_id: Uuid,
) -> ApiResult<Option<TeacherProfile>> {
    Ok(teacher_profiles::table
        .filter(teacher_profiles::user_id.eq(user_id))
        .filter(teacher_profiles::is_deleted.eq(false))
        .select(TeacherProfile::as_select())
        .first(conn.pg())
        .optional()?)
}

/// The live teacher profile of `user`, as the API shows it.
pub fn view_for_user(conn: &mut TenantConn, user: &User) -> ApiResult<Option<TeacherView>> {
    Ok(find_live_by_user(conn, user.id)?.map(|profile| profile.view(user.display_name())))
}

/// Display names of users, by id (one query).
pub fn names_of(
    conn: &mut TenantConn,
    ids: &[Uuid],
) -> ApiResult<std::collections::HashMap<Uuid, String>> {
    let rows: Vec<User> = users::table
        .filter(users::id.eq_any(ids))
        .select(User::as_select())
        .load(conn.pg())?;
    Ok(rows.into_iter().map(|u| (u.id, u.display_name())).collect())
}

pub fn create_for_user(
    conn: &mut TenantConn,
    user_id: Uuid,
    created_by: Option<Uuid>,
) -> ApiResult<TeacherProfile> {
    Ok(diesel::insert_into(teacher_profiles::table)
        .values((
            teacher_profiles::id.eq(Uuid::new_v4()),
            teacher_profiles::user_id.eq(user_id),
            teacher_profiles::created_by.eq(created_by),
            teacher_profiles::updated_by.eq(created_by),
        ))
        .returning(TeacherProfile::as_returning())
        .get_result(conn.pg())?)
}

/// Whether a live teacher profile has this id.
pub fn live_exists(conn: &mut TenantConn, id: Uuid) -> ApiResult<bool> {
    Ok(diesel::select(diesel::dsl::exists(
        teacher_profiles::table
            .find(id)
            .filter(teacher_profiles::is_deleted.eq(false)),
    ))
    .get_result(conn.pg())?)
}
