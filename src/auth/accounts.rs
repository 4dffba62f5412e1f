//! Creating an account: a platform user, or a school's user with their roles (and teacher
//! profile) in the school's schema, in one transaction. The system API
//! (`POST /api/v1/system/users/`) and the command line (`user create`, `demo`) both create
//! accounts here; each reads and checks its own input first, with the rules below.

use diesel::prelude::*;
use uuid::Uuid;

use crate::{
    auth::{password, roles},
    db::{
        Db,
        models::{NewUser, User, user::normalize_phone},
    },
    error::{ApiError, ApiResult},
    school::{Actor, teachers::TeacherView},
    tenancy::TenantRef,
};

/// An account to create; the password is already hashed.
pub struct NewAccount {
    pub email: Option<String>,
    pub phone: Option<String>,
    pub password_hash: String,
    pub first_name: String,
    pub last_name: String,
    /// The school the user belongs to; `None` for a platform user.
    pub school: Option<TenantRef>,
    pub roles: Vec<String>,
    pub is_staff: bool,
    pub is_superuser: bool,
    /// Also create the user's teacher profile (school users only).
    pub teacher: bool,
}

/// Inserts the account (blocking: call it off the executor). A school user's roles and
/// teacher profile are written in the same transaction as the user row.
pub fn create(db: &Db, account: NewAccount) -> ApiResult<User> {
    let new = NewUser {
        id: Uuid::new_v4(),
        email: account.email,
        phone: account.phone,
        password_hash: account.password_hash,
        first_name: account.first_name,
        last_name: account.last_name,
        is_superuser: account.is_superuser,
        is_staff: account.is_staff,
        client_id: account.school.as_ref().map(|school| school.id),
    };
    let Some(school) = account.school else {
        return db.with_conn(|conn| insert_unique(conn, &new));
    };
    db.with_tenant(&school, |conn| {
        conn.transaction(|conn| {
            let user = insert_unique(conn.pg(), &new)?;
            for role in &account.roles {
                roles::assign_by_name(conn, user.id, role)?;
            }
            if account.teacher {
                TeacherView::create_for_user(conn, user.id, &Actor::system())?;
            }
            Ok(user)
        })
    })
}

fn insert_unique(conn: &mut PgConnection, new: &NewUser) -> ApiResult<User> {
    User::insert(conn, new).map_err(|err| match ApiError::from(err) {
        ApiError::Conflict(_) => {
            ApiError::Conflict("a user with this email or phone already exists".into())
        }
        other => other,
    })
}

/// An e-mail address as accounts take it: 1-254 characters, valid.
pub fn check_email(email: &str) -> Result<(), String> {
    use validator::ValidateEmail;
    match email.chars().count() {
        0 => return Err("this field may not be blank".into()),
        255.. => return Err("ensure this field has at most 254 characters".into()),
        _ => {}
    }
    if email.validate_email() {
        Ok(())
    } else {
        Err("enter a valid email address".into())
    }
}

/// A phone number as accounts keep it (`+` and 6-15 digits), or why it is not one.
pub fn phone_number(raw: &str) -> Result<String, String> {
    normalize_phone(raw).ok_or_else(|| "enter a valid phone number: + and 6-15 digits".into())
}

/// The password rules accounts are held to.
pub fn check_password(password: &str) -> Result<(), String> {
    password::check_policy(password)
}
