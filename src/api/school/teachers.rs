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

pub use queries::{live_exists, live_ids};

#[derive(AsChangeset, Default)]
#[diesel(table_name = teacher_profiles)]
pub struct TeacherInput {
    user_id: Option<Uuid>,
    staff_number: Option<Option<String>>,
    is_deleted: Option<bool>,
}

mod queries {
    use super::{TeacherProfile, teacher_profiles};
    crate::api::school::crud::table_queries!(teacher_profiles, TeacherProfile, search: [], soft_delete: is_deleted);
}

fn views(conn: &mut TenantConn, rows: Vec<TeacherProfile>) -> ApiResult<Vec<TeacherView>> {
    let ids: Vec<Uuid> = rows.iter().map(|r| r.user_id).collect();
    let names = names_of(conn, &ids)?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let name = names.get(&row.user_id).cloned().unwrap_or_default();
            row.view(name)
        })
        .collect())
}

pub struct Teachers;

impl crate::api::school::crud::SchoolResource for Teachers {
    const PERMISSION: crate::auth::permissions::Resource =
        crate::auth::permissions::Resource::TeacherProfile;
    const PATH: &'static str = "/api/v1/school/teachers/";
    type Scope = ();
    type Record = TeacherView;
    type Input = TeacherInput;

    fn scope(_: &mut TenantConn, _: &[Uuid]) -> ApiResult<()> {
        Ok(())
    }

    fn parse(f: &mut crate::api::fields::Fields<'_>) -> TeacherInput {
        use crate::api::fields::{any, len};
        TeacherInput {
            user_id: f.required("user", &any),
            staff_number: f.nullable("staff_number", None, &len(1, 50)),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        input: &TeacherInput,
        _: Option<&TeacherView>,
        errors: &mut crate::error::FieldErrors,
    ) -> ApiResult<()> {
        crate::api::school::students::check_school_user(conn, "user", input.user_id, errors)
    }

    fn list(
        conn: &mut TenantConn,
        _: &(),
        query: &crate::api::pagination::ListQuery,
    ) -> ApiResult<(i64, Vec<TeacherView>)> {
        let search = query.search.as_deref().map(crate::db::like_pattern);
        let matching_users: Vec<Uuid> = match &search {
            Some(pattern) => users::table
                .filter(users::client_id.eq(conn.tenant().id))
                .filter(
                    users::first_name
                        .ilike(pattern.clone())
                        .or(users::last_name.ilike(pattern.clone()))
                        .or(users::email.ilike(pattern.clone())),
                )
                .select(users::id)
                .load(conn.pg())?,
            None => Vec::new(),
        };
        let (count, rows) = queries::list_rows(conn, query, move |q| match &search {
            Some(pattern) => q.filter(
                teacher_profiles::user_id.eq_any(matching_users.clone()).or(
                    teacher_profiles::staff_number
                        .ilike(pattern.clone())
                        .assume_not_null(),
                ),
            ),
            None => q,
        })?;
        Ok((count, views(conn, rows)?))
    }

    fn find(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<TeacherView>> {
        match queries::find_row(conn, id, include_deleted)? {
            Some(row) => Ok(views(conn, vec![row])?.pop()),
            None => Ok(None),
        }
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: TeacherInput,
        caller: &crate::auth::Caller,
    ) -> ApiResult<TeacherView> {
        let row = diesel::insert_into(teacher_profiles::table)
            .values((
                teacher_profiles::id.eq(Uuid::new_v4()),
                teacher_profiles::user_id.eq(input.user_id.unwrap_or_default()),
                teacher_profiles::staff_number.eq(input.staff_number.flatten()),
                teacher_profiles::is_deleted.eq(input.is_deleted.unwrap_or(false)),
                teacher_profiles::created_by.eq(caller.user_id()),
                teacher_profiles::updated_by.eq(caller.user_id()),
            ))
            .returning(TeacherProfile::as_returning())
            .get_result(conn.pg())?;
        Ok(views(conn, vec![row])?.remove(0))
    }

    fn update(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        input: TeacherInput,
        caller: &crate::auth::Caller,
    ) -> ApiResult<TeacherView> {
        let row = diesel::update(teacher_profiles::table.find(id))
            .set((
                &input,
                teacher_profiles::updated_by.eq(caller.user_id()),
                teacher_profiles::updated_at.eq(Utc::now()),
            ))
            .returning(TeacherProfile::as_returning())
            .get_result(conn.pg())?;
        Ok(views(conn, vec![row])?.remove(0))
    }

    fn delete(conn: &mut TenantConn, _: &(), id: Uuid) -> ApiResult<()> {
        queries::delete_row(conn, id)
    }
}
