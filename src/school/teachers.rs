//! Teacher profiles: a school user who teaches, with an optional staff number. Answered
//! with the user's display name (`TeacherView`).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, FromRows, ListQuery, Store,
    schema::teacher_profiles as t,
    store::Narrowing,
    table::{school_forms, school_table},
};
use crate::{
    db::{models::User, schema_public::users},
    error::ApiResult,
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Debug, Clone)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
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
#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
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

school_forms!(t: NewTeacher, TeacherChanges {
    user_id: Uuid,
    staff_number: Option<String>,
    is_deleted: bool,
});

/// Teacher profiles, answered with their users' names.
pub struct Teachers;

school_table!(Teachers: TeacherProfile in t, new: NewTeacher, changes: TeacherChanges, search: [],
    soft_delete: is_deleted);

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

    /// The live teacher profile of a user in this school, if any.
    pub fn live_of_user(conn: &mut TenantConn, user_id: Uuid) -> ApiResult<Option<Self>> {
        Ok(t::table
            .filter(t::user_id.eq(user_id))
            .filter(t::is_deleted.eq(false))
            .select(Self::as_select())
            .first(conn.pg())
            .optional()?)
    }
}

impl TeacherView {
    /// Makes `user_id` a teacher of this school (no staff number).
    pub fn create_for_user(conn: &mut TenantConn, user_id: Uuid, actor: &Actor) -> ApiResult<Self> {
        let new = NewTeacher {
            user_id,
            staff_number: None,
            is_deleted: false,
        };
        Teachers::create(conn, (), new, actor)
    }

    /// The live teacher profile of `user`, as the API shows it.
    pub fn of_user(conn: &mut TenantConn, user: &User) -> ApiResult<Option<Self>> {
        Ok(TeacherProfile::live_of_user(conn, user.id)?.map(|p| p.view(user.display_name())))
    }
}

impl FromRows<TeacherProfile> for TeacherView {
    /// The views of `rows`, with their users' names (one query).
    fn from_rows(conn: &mut TenantConn, rows: Vec<TeacherProfile>) -> ApiResult<Vec<Self>> {
        let ids: Vec<Uuid> = rows.iter().map(|r| r.user_id).collect();
        let names = User::display_names(conn.pg(), &ids)?;
        Ok(rows
            .into_iter()
            .map(|row| {
                let name = names.get(&row.user_id).cloned().unwrap_or_default();
                row.view(name)
            })
            .collect())
    }
}

/// `?search=` looks in the users' names and e-mail and in the staff number.
impl Store for Teachers {
    type Record = TeacherView;
    const NAME: &'static str = "teacher_profile";

    fn narrowing(conn: &mut TenantConn, query: &ListQuery) -> ApiResult<Option<Narrowing<Self>>> {
        let Some(pattern) = query.search.as_deref().map(crate::db::like_pattern) else {
            return Ok(None);
        };
        let matching_users: Vec<Uuid> = users::table
            .filter(users::client_id.eq(conn.tenant().id))
            .filter(
                users::first_name
                    .ilike(pattern.clone())
                    .or(users::last_name.ilike(pattern.clone()))
                    .or(users::email.ilike(pattern.clone())),
            )
            .select(users::id)
            .load(conn.pg())?;
        Ok(Some(Box::new(move |rows| {
            rows.filter(
                t::user_id
                    .eq_any(matching_users.clone())
                    .or(t::staff_number.ilike(pattern.clone()).assume_not_null()),
            )
        })))
    }
}
