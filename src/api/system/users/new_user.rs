//! Creating a user through the system API: the body's rules, the password hash off the
//! executor, then `auth::accounts` (for a school user, its roles and teacher profile in
//! the school's schema, in one transaction).

use uuid::Uuid;

use crate::{
    api::{
        body::JsonObject,
        fields::{Email, Fields, Mode, any, len},
    },
    auth::{
        accounts::{self, NewAccount},
        password,
    },
    db::{
        self,
        models::{TenantRow, User, user::normalize_phone},
    },
    error::{ApiError, ApiResult},
    state::AppState,
};

pub(super) struct NewUserInput {
    email: Option<String>,
    phone: Option<String>,
    password: String,
    first_name: String,
    last_name: String,
    client: Option<Uuid>,
    roles: Vec<String>,
    is_staff: bool,
    pub(super) is_superuser: bool,
    teacher: bool,
}

/// A create's body as read, field by field (`None`: not given, or reported).
pub(super) struct NewUserFields {
    email: Option<Option<String>>,
    phone: Option<Option<String>>,
    password: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    client: Option<Option<Uuid>>,
    roles: Option<Vec<String>>,
    is_staff: Option<bool>,
    is_superuser: Option<bool>,
    teacher: Option<bool>,
}

/// The rules of each field of a create's body (also its documentation); the rules across
/// fields are `NewUserInput::parse`'s.
pub(super) fn read_new_user(f: &mut Fields<'_>) -> NewUserFields {
    NewUserFields {
        email: f.nullable("email", None, &Email),
        phone: f.nullable::<String>("phone", None, &|p: &String| {
            normalize_phone(p)
                .map(|_| ())
                .ok_or_else(|| "enter a valid phone number: + and 6-15 digits".into())
        }),
        password: f.required::<String>("password", &|p: &String| password::check_policy(p)),
        first_name: f.optional("first_name", String::new(), &len(0, 150)),
        last_name: f.optional("last_name", String::new(), &len(0, 150)),
        client: f.nullable::<Uuid>("client", None, &any),
        roles: f.optional::<Vec<String>>("roles", Vec::new(), &any),
        is_staff: f.optional("is_staff", false, &any),
        is_superuser: f.optional("is_superuser", false, &any),
        teacher: f.optional("teacher", false, &any),
    }
}

impl NewUserInput {
    pub(super) fn parse(body: &JsonObject) -> ApiResult<Self> {
        let mut f = Fields::new(body, Mode::Create);
        let NewUserFields {
            email,
            phone,
            password,
            first_name,
            last_name,
            client,
            roles,
            is_staff,
            is_superuser,
            teacher,
        } = read_new_user(&mut f);
        let email = email.flatten();
        let phone = phone.flatten().and_then(|p| normalize_phone(&p));
        if email.is_none() && phone.is_none() && !f.has_error("email") && !f.has_error("phone") {
            f.error("non_field", "give an email or a phone number");
        }
        let client = client.flatten();
        let roles = roles.unwrap_or_default();
        if client.is_none() && !roles.is_empty() {
            f.error(
                "roles",
                "roles can only be given to users of a school (client)",
            );
        }
        if client.is_some() && is_superuser == Some(true) {
            f.error("is_superuser", "school users cannot be superusers");
        }
        f.finish(())?;
        Ok(Self {
            email,
            phone,
            password: password.unwrap_or_default(),
            first_name: first_name.unwrap_or_default().trim().to_owned(),
            last_name: last_name.unwrap_or_default().trim().to_owned(),
            client,
            roles,
            is_staff: is_staff.unwrap_or(false),
            is_superuser: is_superuser.unwrap_or(false),
            teacher: teacher.unwrap_or(false),
        })
    }
}

/// Hashes the password off the executor, then creates the account (`auth::accounts`): for
/// school users with their roles (and teacher profile) in the school's schema.
pub(super) async fn create_user(state: &AppState, input: NewUserInput) -> ApiResult<User> {
    let password_hash = state.hash_password(input.password.clone()).await?;
    let db = state.db.clone();
    let directory = state.directory.clone();
    db::blocking(move || {
        let school = match input.client {
            Some(id) => {
                let row = db
                    .with_conn(|conn| Ok(TenantRow::find(conn, id)?))?
                    .ok_or_else(|| ApiError::validation("client", "no school has this id"))?;
                Some(directory.find_schema(&row.schema_name)?)
            }
            None => None,
        };
        accounts::create(
            &db,
            NewAccount {
                email: input.email,
                phone: input.phone,
                password_hash,
                first_name: input.first_name,
                last_name: input.last_name,
                school,
                roles: input.roles,
                is_staff: input.is_staff,
                is_superuser: input.is_superuser,
                teacher: input.teacher,
            },
        )
    })
    .await?
}
