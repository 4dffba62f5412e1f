//! The bodies of `/api/v1/school/users/` (field by field, also their documentation) and
//! who may give which roles: nobody grants what they do not hold.

use uuid::Uuid;

use crate::{
    api::{
        body::JsonObject,
        fields::{Email, Fields, Mode, any, len},
    },
    auth::{
        password,
        permissions::{Action, Permission, PermissionSet, Resource},
    },
    db::models::user::normalize_phone,
    error::{ApiError, ApiResult},
    request::Caller,
    school::users::NamedRole,
};

/// The default roles the office may give when it adds a user (API.md 12) although it does
/// not hold their permissions: a school's office enrols its teachers, students and
/// guardians.
pub const ADDABLE_BY_ANY_ADDER: &[&str] = &["teacher", "student", "guardian"];

/// A create's body, checked.
pub struct NewSchoolUser {
    pub email: Option<String>,
    pub phone: Option<String>,
    pub password: Option<String>,
    pub first_name: String,
    pub last_name: String,
    pub roles: Vec<String>,
    pub teacher: bool,
    pub student: Option<Uuid>,
    pub guardian: Option<Uuid>,
}

/// A create's body as read, field by field (`None`: not given, or reported).
pub struct NewSchoolUserFields {
    email: Option<Option<String>>,
    phone: Option<Option<String>>,
    password: Option<Option<String>>,
    first_name: Option<String>,
    last_name: Option<String>,
    roles: Option<Vec<String>>,
    teacher: Option<bool>,
    student: Option<Option<Uuid>>,
    guardian: Option<Option<Uuid>>,
}

// A field rule takes the field's own type (`Check<'_, T>` is `Fn(&T)`).
#[allow(clippy::ptr_arg)]
fn phone_rule(p: &String) -> Result<(), String> {
    normalize_phone(p)
        .map(|_| ())
        .ok_or_else(|| "enter a valid phone number: + and 6-15 digits".into())
}

// A field rule takes the field's own type (`Check<'_, T>` is `Fn(&T)`).
#[allow(clippy::ptr_arg)]
fn password_rule(p: &String) -> Result<(), String> {
    password::check_policy(p)
}

/// Role names: each given once.
// A field rule takes the field's own type (`Check<'_, T>` is `Fn(&T)`).
#[allow(clippy::ptr_arg)]
fn role_names(names: &Vec<String>) -> Result<(), String> {
    match names
        .iter()
        .enumerate()
        .find(|(i, n)| names[..*i].contains(n))
    {
        Some((_, repeated)) => Err(format!("role '{repeated}' is listed twice")),
        None => Ok(()),
    }
}

/// The rules of each field of a create's body.
pub fn read_new(f: &mut Fields<'_>) -> NewSchoolUserFields {
    NewSchoolUserFields {
        email: f.nullable("email", None, &Email),
        phone: f.nullable::<String>("phone", None, &phone_rule),
        password: f.nullable::<String>("password", None, &password_rule),
        first_name: f.optional("first_name", String::new(), &len(0, 150)),
        last_name: f.optional("last_name", String::new(), &len(0, 150)),
        roles: f.optional::<Vec<String>>("roles", Vec::new(), &role_names),
        teacher: f.optional("teacher", false, &any),
        student: f.nullable::<Uuid>("student", None, &any),
        guardian: f.nullable::<Uuid>("guardian", None, &any),
    }
}

impl NewSchoolUser {
    pub fn parse(body: &JsonObject) -> ApiResult<Self> {
        let mut f = Fields::new(body, Mode::Create);
        let read = read_new(&mut f);
        let email = read.email.flatten();
        let phone = read.phone.flatten().and_then(|p| normalize_phone(&p));
        if email.is_none() && phone.is_none() && !f.has_error("email") && !f.has_error("phone") {
            f.error("non_field", "give an email or a phone number");
        }
        f.finish(())?;
        Ok(Self {
            email,
            phone,
            password: read.password.flatten(),
            first_name: read.first_name.unwrap_or_default().trim().to_owned(),
            last_name: read.last_name.unwrap_or_default().trim().to_owned(),
            roles: read.roles.unwrap_or_default(),
            teacher: read.teacher.unwrap_or(false),
            student: read.student.flatten(),
            guardian: read.guardian.flatten(),
        })
    }
}

/// A change's body (only the given fields change).
#[derive(Default)]
pub struct SchoolUserChanges {
    pub email: Option<Option<String>>,
    pub phone: Option<Option<String>>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub password: Option<String>,
    pub is_active: Option<bool>,
    pub roles: Option<Vec<String>>,
}

/// The rules of each field of a change's body.
pub fn read_changes(f: &mut Fields<'_>) -> SchoolUserChanges {
    SchoolUserChanges {
        email: f.nullable("email", None, &Email),
        phone: f
            .nullable::<String>("phone", None, &phone_rule)
            .map(|p| p.and_then(|p| normalize_phone(&p))),
        first_name: f
            .required("first_name", &len(0, 150))
            .map(|n: String| n.trim().to_owned()),
        last_name: f
            .required("last_name", &len(0, 150))
            .map(|n: String| n.trim().to_owned()),
        password: f.required::<String>("password", &password_rule),
        is_active: f.required("is_active", &any),
        roles: f.required::<Vec<String>>("roles", &role_names),
    }
}

impl SchoolUserChanges {
    /// Parses a PATCH body; `current` (e-mail, phone) says whether the user keeps one of
    /// the two.
    pub fn parse(
        body: &JsonObject,
        current_email: Option<&str>,
        current_phone: Option<&str>,
    ) -> ApiResult<Self> {
        let mut f = Fields::new(body, Mode::Patch);
        let changes = read_changes(&mut f);
        let email = changes
            .email
            .clone()
            .unwrap_or(current_email.map(str::to_owned));
        let phone = changes
            .phone
            .clone()
            .unwrap_or(current_phone.map(str::to_owned));
        if email.is_none() && phone.is_none() && !f.has_error("email") && !f.has_error("phone") {
            f.error("non_field", "a user keeps an email or a phone number");
        }
        f.finish(changes)
    }
}

fn set_of(codenames: &[String]) -> PermissionSet {
    PermissionSet::from_codenames(codenames.iter().map(String::as_str))
}

/// 403 naming what the caller lacks, unless they hold every permission of `needed`.
fn require_all(caller: &Caller, needed: PermissionSet, what: &str) -> ApiResult<()> {
    let lacking = caller.permissions.lacking(needed);
    if lacking.is_empty() {
        return Ok(());
    }
    Err(ApiError::PermissionDenied(format!(
        "you can only {what} with permissions you hold yourself (you lack {})",
        lacking.codenames().join(", ")
    )))
}

/// The permission `codename`, as a set (empty when the catalogue has no such codename).
fn codename(codename: &str) -> PermissionSet {
    PermissionSet::from_codenames([codename])
}

/// Who may create this user: each role held in full by the caller, or one of
/// `ADDABLE_BY_ANY_ADDER`; a teacher profile needs `add_teacherprofile`, a student link
/// `change_student`, a guardian link `change_guardian`.
pub fn may_create(caller: &Caller, input: &NewSchoolUser, roles: &[NamedRole]) -> ApiResult<()> {
    for role in roles {
        if !ADDABLE_BY_ANY_ADDER.contains(&role.name.as_str()) {
            require_all(
                caller,
                set_of(&role.permissions),
                &format!("give the role '{}'", role.name),
            )?;
        }
    }
    if input.teacher {
        let add_teacher = Permission::new(Action::Add, Resource::TeacherProfile);
        require_all(
            caller,
            [add_teacher].into_iter().collect(),
            "make a teacher profile",
        )?;
    }
    if input.student.is_some() {
        let change_student = Permission::new(Action::Change, Resource::Student);
        require_all(
            caller,
            [change_student].into_iter().collect(),
            "link a student",
        )?;
    }
    if input.guardian.is_some() {
        require_all(caller, codename("change_guardian"), "link a guardian")?;
    }
    Ok(())
}

/// Who may change this user: the caller holds every permission of the user's roles now
/// (otherwise a password reset would take over an account more powerful than theirs) and,
/// when `roles` changes, of every role given.
pub fn may_change(
    caller: &Caller,
    current: &[NamedRole],
    given: Option<&[NamedRole]>,
) -> ApiResult<()> {
    let held_now = current.iter().fold(PermissionSet::default(), |set, role| {
        set.union(set_of(&role.permissions))
    });
    require_all(caller, held_now, "change a user of these roles")?;
    for role in given.unwrap_or_default() {
        require_all(
            caller,
            set_of(&role.permissions),
            &format!("give the role '{}'", role.name),
        )?;
    }
    Ok(())
}
