//! A school's own users (API.md 12): the platform's user rows whose `client` is this
//! school, answered with what the school knows of them (roles, teacher profile, student
//! record, guardian record). The user row lives in `public.users`; everything else in the
//! school's schema, so one connection bound to the school reads and writes both.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, ListQuery, Store, Target,
    guardians::Guardians,
    roles::{NewRoleAssignment, RoleAssignments},
    schema::{
        school_roles as r, students as s, teacher_profiles as tp, user_role_assignments as a,
    },
    students::{StudentChanges, Students},
    teachers::TeacherView,
};
use crate::{
    db::{
        models::{NewUser, User, UserChangeset},
        page::page,
        schema_public::users,
    },
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

/// A user of this school as `/api/v1/school/users/` answers it.
#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct SchoolUser {
    pub id: Uuid,
    #[schema(max_length = 254, format = Email)]
    pub email: Option<String>,
    /// `+` and 6-15 digits.
    #[schema(max_length = 16, pattern = r"^\+[0-9]{6,15}$")]
    pub phone: Option<String>,
    #[schema(max_length = 150)]
    pub first_name: String,
    #[schema(max_length = 150)]
    pub last_name: String,
    pub is_active: bool,
    /// The names of the user's roles, sorted.
    pub roles: Vec<String>,
    /// The user's live teacher profile.
    pub teacher: Option<Uuid>,
    /// The live student record linked to the user.
    pub student: Option<Uuid>,
    /// The live guardian record linked to the user.
    pub guardian: Option<Uuid>,
    pub last_login: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// A role of this school, by name, with its codenames.
#[derive(Debug, Clone)]
pub struct NamedRole {
    pub id: Uuid,
    pub name: String,
    pub permissions: Vec<String>,
}

/// What creating a school user writes besides the user row.
pub struct SchoolUserLinks {
    pub roles: Vec<NamedRole>,
    pub teacher: bool,
    pub student: Option<Uuid>,
    pub guardian: Option<Uuid>,
}

/// The school's users: queries over `public.users` narrowed to this school.
pub struct SchoolUsers;

impl SchoolUsers {
    /// One page of the school's users (oldest first) matching `?search=` (names, e-mail,
    /// phone) and, when given, holding the role called `role`; and how many match.
    pub fn page(conn: &mut TenantConn, query: &ListQuery) -> ApiResult<(i64, Vec<SchoolUser>)> {
        let holders: Option<Vec<Uuid>> = match query.filter.role.as_deref() {
            Some(name) => Some(
                a::table
                    .inner_join(r::table)
                    .filter(r::name.eq(name))
                    .select(a::user_id)
                    .load(conn.pg())?,
            ),
            None => None,
        };
        let school = conn.tenant().id;
        let pattern = query.search.as_deref().map(crate::db::like_pattern);
        let matching = || {
            let mut q = users::table
                .filter(users::client_id.eq(school))
                .select(User::as_select())
                .into_boxed();
            if let Some(pattern) = &pattern {
                q = q.filter(User::search_matches(pattern));
            }
            if let Some(holders) = &holders {
                q = q.filter(users::id.eq_any(holders.clone()));
            }
            q
        };
        let (count, rows) = page(
            conn.pg(),
            matching,
            (users::created_at, users::id),
            query.span(),
        )?;
        Ok((count, Self::answer(conn, rows)?))
    }

    /// The user row of `id` when it is a user of this school (locked until the transaction
    /// ends when `for_update`).
    pub fn row(conn: &mut TenantConn, id: Uuid, for_update: bool) -> ApiResult<Option<User>> {
        let school = conn.tenant().id;
        let found = if for_update {
            User::find_for_update(conn.pg(), id)?
        } else {
            User::find(conn.pg(), id)?
        };
        Ok(found.filter(|user| user.client_id == Some(school)))
    }

    /// The school user `id`, as answered; `None` for a platform user or another school's.
    pub fn find(conn: &mut TenantConn, id: Uuid) -> ApiResult<Option<SchoolUser>> {
        match Self::row(conn, id, false)? {
            Some(user) => Ok(Self::answer(conn, vec![user])?.pop()),
            None => Ok(None),
        }
    }

    /// The names of the roles `user_id` holds.
    pub fn role_ids(conn: &mut TenantConn, user_id: Uuid) -> ApiResult<Vec<(Uuid, Uuid)>> {
        Ok(a::table
            .filter(a::user_id.eq(user_id))
            .select((a::id, a::role_id))
            .load(conn.pg())?)
    }

    /// The roles called `names`; an unknown name is a validation error on `roles`.
    pub fn roles_named(conn: &mut TenantConn, names: &[String]) -> ApiResult<Vec<NamedRole>> {
        let rows: Vec<(Uuid, String, Vec<Option<String>>)> = r::table
            .filter(r::name.eq_any(names))
            .select((r::id, r::name, r::permissions))
            .load(conn.pg())?;
        if let Some(unknown) = names.iter().find(|n| !rows.iter().any(|row| &row.1 == *n)) {
            return Err(ApiError::validation(
                "roles",
                format!("this school has no role called '{unknown}'"),
            ));
        }
        Ok(rows
            .into_iter()
            .map(|(id, name, permissions)| NamedRole {
                id,
                name,
                permissions: permissions.into_iter().flatten().collect(),
            })
            .collect())
    }

    /// The roles `user_id` holds.
    pub fn roles_of(conn: &mut TenantConn, user_id: Uuid) -> ApiResult<Vec<NamedRole>> {
        let rows: Vec<(Uuid, String, Vec<Option<String>>)> = a::table
            .inner_join(r::table)
            .filter(a::user_id.eq(user_id))
            .select((r::id, r::name, r::permissions))
            .load(conn.pg())?;
        Ok(rows
            .into_iter()
            .map(|(id, name, permissions)| NamedRole {
                id,
                name,
                permissions: permissions.into_iter().flatten().collect(),
            })
            .collect())
    }

    /// Inserts the user and writes its links: roles, teacher profile, student and guardian
    /// record. Call inside a transaction; a taken e-mail or phone is a 409.
    pub fn create(
        conn: &mut TenantConn,
        new: NewUser,
        links: SchoolUserLinks,
        actor: &Actor,
    ) -> ApiResult<SchoolUser> {
        let user = User::insert(conn.pg(), &new).map_err(taken)?;
        for role in &links.roles {
            let assignment = NewRoleAssignment {
                user_id: user.id,
                role_id: role.id,
            };
            RoleAssignments::create(conn, (), assignment, actor)?;
        }
        if links.teacher {
            TeacherView::create_for_user(conn, user.id, actor)?;
        }
        if let Some(student) = links.student {
            link_student(conn, student, user.id, actor)?;
        }
        if let Some(guardian) = links.guardian {
            Guardians::link_user(conn, guardian, user.id, actor)?;
        }
        Self::find(conn, user.id)?.ok_or_else(ApiError::not_found)
    }

    /// Changes the user row (a taken e-mail or phone is a 409).
    pub fn update(conn: &mut TenantConn, id: Uuid, changes: &UserChangeset) -> ApiResult<User> {
        User::update(conn.pg(), id, changes).map_err(taken)
    }

    /// Gives `user_id` exactly the roles `roles`: assignments of other roles are removed,
    /// missing ones added.
    pub fn set_roles(
        conn: &mut TenantConn,
        user_id: Uuid,
        roles: &[NamedRole],
        actor: &Actor,
    ) -> ApiResult<()> {
        let held = Self::role_ids(conn, user_id)?;
        for (assignment, role) in &held {
            if !roles.iter().any(|r| r.id == *role) {
                RoleAssignments::delete(conn, Target::live((), *assignment), actor)?;
            }
        }
        for role in roles {
            if !held.iter().any(|(_, held_role)| *held_role == role.id) {
                let assignment = NewRoleAssignment {
                    user_id,
                    role_id: role.id,
                };
                RoleAssignments::create(conn, (), assignment, actor)?;
            }
        }
        Ok(())
    }

    /// The answers for `rows`: their roles, teacher profiles, students and guardians in
    /// one query each.
    fn answer(conn: &mut TenantConn, rows: Vec<User>) -> ApiResult<Vec<SchoolUser>> {
        let ids: Vec<Uuid> = rows.iter().map(|u| u.id).collect();
        let role_rows: Vec<(Uuid, String)> = a::table
            .inner_join(r::table)
            .filter(a::user_id.eq_any(&ids))
            .select((a::user_id, r::name))
            .order(r::name)
            .load(conn.pg())?;
        let mut roles: HashMap<Uuid, Vec<String>> = HashMap::new();
        for (user, name) in role_rows {
            roles.entry(user).or_default().push(name);
        }
        let teachers: HashMap<Uuid, Uuid> = tp::table
            .filter(tp::user_id.eq_any(&ids))
            .filter(tp::is_deleted.eq(false))
            .select((tp::user_id, tp::id))
            .load::<(Uuid, Uuid)>(conn.pg())?
            .into_iter()
            .collect();
        let students: HashMap<Uuid, Uuid> = s::table
            .filter(s::user_id.eq_any(&ids))
            .filter(s::is_deleted.eq(false))
            .select((s::user_id.assume_not_null(), s::id))
            .load::<(Uuid, Uuid)>(conn.pg())?
            .into_iter()
            .collect();
        let guardians = Guardians::of_users(conn, &ids)?;
        Ok(rows
            .into_iter()
            .map(|user| SchoolUser {
                roles: roles.remove(&user.id).unwrap_or_default(),
                teacher: teachers.get(&user.id).copied(),
                student: students.get(&user.id).copied(),
                guardian: guardians.get(&user.id).copied(),
                id: user.id,
                email: user.email,
                phone: user.phone,
                first_name: user.first_name,
                last_name: user.last_name,
                is_active: user.is_active,
                last_login: user.last_login,
                created_at: user.created_at,
            })
            .collect())
    }
}

fn taken(err: diesel::result::Error) -> ApiError {
    match ApiError::from(err) {
        ApiError::Conflict(_) => {
            ApiError::Conflict("a user with this email or phone already exists".into())
        }
        other => other,
    }
}

/// Links the live student `student` to `user_id`; 400 on `student` when there is no such
/// student or one already has an account.
fn link_student(
    conn: &mut TenantConn,
    student: Uuid,
    user_id: Uuid,
    actor: &Actor,
) -> ApiResult<()> {
    let current = Students::find(conn, Target::live((), student))?
        .ok_or_else(|| ApiError::validation("student", "no live student has this id"))?;
    if current.user_id.is_some() {
        return Err(ApiError::validation(
            "student",
            "this student already has an account",
        ));
    }
    let changes = StudentChanges {
        user_id: Some(Some(user_id)),
        ..StudentChanges::default()
    };
    Students::update(conn, Target::live((), student), changes, actor)?;
    Ok(())
}
