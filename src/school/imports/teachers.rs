//! Teachers (key: the e-mail of their account or their staff number). A new teacher's
//! account is made as the school users API makes one with `teacher: true` (`SchoolUsers::create`): the `teacher`
//! role, a teacher profile, no password (they cannot sign in until one is set). An
//! account's own fields (names, phone, e-mail) change only where the caller may change
//! that user (API.md 12); otherwise the row is bad.

use std::collections::HashMap;

use chrono::Utc;
use diesel::prelude::*;
use uuid::Uuid;
use validator::ValidateEmail;

use super::{
    Cells, Importer,
    settle::{Counts, Effect, Keys, RowWrite, Rows, Write},
};
use crate::{
    db::{
        lower,
        models::{NewUser, User, UserChangeset, user::normalize_phone},
        schema_public::users,
    },
    error::ApiResult,
    school::{
        Actor, Store, Target,
        schema::teacher_profiles as tp,
        teachers::{NewTeacher, TeacherChanges, TeacherProfile, Teachers},
        users::{NamedRole, SchoolUserLinks, SchoolUsers},
    },
    tenancy::TenantConn,
};

/// A teacher row's write: a new account with its profile, or an existing account's.
pub enum TeacherWrite {
    New {
        user: NewUser,
        staff_number: Option<String>,
        role: Option<NamedRole>,
    },
    Existing {
        user: Uuid,
        account: Option<UserChangeset>,
        profile: Write<Teachers>,
    },
}

impl RowWrite for TeacherWrite {
    fn effect(&self) -> Effect {
        match self {
            Self::New { .. } => Effect::Created,
            Self::Existing {
                account, profile, ..
            } => match (profile.effect(), account) {
                (Effect::Created, _) => Effect::Created,
                (Effect::Unchanged, None) => Effect::Unchanged,
                _ => Effect::Updated,
            },
        }
    }

    fn write(self, conn: &mut TenantConn, actor: &Actor) -> ApiResult<()> {
        match self {
            Self::New {
                user,
                staff_number,
                role,
            } => {
                let links = SchoolUserLinks {
                    roles: role.into_iter().collect(),
                    teacher: true,
                    student: None,
                    guardian: None,
                };
                let made = SchoolUsers::create(conn, user, links, actor)?;
                if let (Some(profile), Some(number)) = (made.teacher, staff_number) {
                    let changes = TeacherChanges {
                        staff_number: Some(Some(number)),
                        ..Default::default()
                    };
                    Teachers::update(conn, Target::live((), profile), changes, actor)?;
                }
            }
            Self::Existing {
                user,
                account,
                profile,
            } => {
                if let Some(changes) = account {
                    SchoolUsers::update(conn, user, &changes)?;
                }
                profile.write(conn, actor)?;
            }
        }
        Ok(())
    }
}

/// The users (of any school, or none) holding the e-mails (lower-cased) and phones of the
/// file.
fn accounts(
    conn: &mut TenantConn,
    rows: &[Cells<'_>],
) -> ApiResult<(HashMap<String, User>, HashMap<String, User>)> {
    let emails: Vec<String> = rows
        .iter()
        .filter_map(|c| c.get("email").map(str::to_lowercase))
        .collect();
    let phones: Vec<String> = rows
        .iter()
        .filter_map(|c| c.get("phone").and_then(normalize_phone))
        .collect();
    let by_email: Vec<User> = users::table
        .filter(lower(users::email.assume_not_null()).eq_any(&emails))
        .select(User::as_select())
        .load(conn.pg())?;
    let by_phone: Vec<User> = users::table
        .filter(users::phone.eq_any(&phones))
        .select(User::as_select())
        .load(conn.pg())?;
    let email_of = |u: &User| u.email.clone().unwrap_or_default().to_lowercase();
    Ok((
        by_email.into_iter().map(|u| (email_of(&u), u)).collect(),
        by_phone
            .into_iter()
            .map(|u| (u.phone.clone().unwrap_or_default(), u))
            .collect(),
    ))
}

/// The live teacher profiles of the school.
pub fn profiles(conn: &mut TenantConn) -> ApiResult<Vec<TeacherProfile>> {
    Ok(tp::table
        .filter(tp::is_deleted.eq(false))
        .select(TeacherProfile::as_select())
        .load(conn.pg())?)
}

/// A row's e-mail (lower-cased) and phone (normalised), or bad cells.
fn contact(cells: &mut Cells<'_>) -> Option<(Option<String>, Option<String>)> {
    let email = match cells.get("email") {
        Some(e) if e.validate_email() && e.chars().count() <= 254 => Some(Some(e.to_lowercase())),
        Some(e) => {
            let message = format!("\"{e}\" is not a valid e-mail address");
            cells.error("email", "invalid", message);
            None
        }
        None => Some(None),
    };
    let phone = match cells.get("phone") {
        Some(p) => match normalize_phone(p) {
            Some(phone) => Some(Some(phone)),
            None => {
                let message = format!("\"{p}\" is not a phone number (+ and 6-15 digits)");
                cells.error("phone", "invalid", message);
                None
            }
        },
        None => Some(None),
    };
    Some((email?, phone?))
}

pub fn teachers(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    dry_run: bool,
    importer: &Importer<'_>,
) -> ApiResult<Counts> {
    let school = conn.tenant().id;
    let (by_email, by_phone) = accounts(conn, &rows)?;
    let profiles = profiles(conn)?;
    let of_user: HashMap<Uuid, &TeacherProfile> = profiles.iter().map(|p| (p.user_id, p)).collect();
    let mut of_staff: HashMap<&str, Vec<&TeacherProfile>> = HashMap::new();
    for p in &profiles {
        if let Some(number) = p.staff_number.as_deref() {
            of_staff.entry(number).or_default().push(p);
        }
    }
    let role = SchoolUsers::roles_named(conn, &["teacher".to_owned()])
        .ok()
        .and_then(|mut roles| roles.pop());
    let mut school_users: HashMap<Uuid, User> = HashMap::new();
    let (mut email_keys, mut staff_keys, mut phone_keys) = (Keys::new(), Keys::new(), Keys::new());
    let rows = Rows::read(rows, |cells| {
        let first = cells.text("first_name", 150);
        let last = cells.text("last_name", 150);
        let contact = contact(cells);
        let staff = match cells.get("staff_number") {
            Some(_) => cells.text("staff_number", 50).map(Some),
            None => Some(None),
        };
        let (Some(first), Some(last), Some((email, phone)), Some(staff)) =
            (first, last, contact, staff)
        else {
            return Ok(None);
        };
        if email.is_none() && staff.is_none() {
            cells.error(
                "email",
                "required",
                "give the teacher's e-mail or staff number",
            );
            return Ok(None);
        }
        if let Some(e) = &email {
            email_keys.first(cells, "email", e, e);
        }
        if let Some(s) = &staff {
            staff_keys.first(cells, "staff_number", s, s);
        }
        if let Some(p) = &phone {
            phone_keys.first(cells, "phone", p, p);
        }
        // The account the row names: by e-mail, else by staff number.
        let mut user: Option<User> = None;
        if let Some(e) = &email {
            match by_email.get(e) {
                Some(u) if u.client_id != Some(school) => {
                    let message = "this e-mail belongs to an account outside this school";
                    cells.error("email", "taken", message);
                }
                found => user = found.cloned(),
            }
        }
        if let Some(s) = &staff {
            match of_staff.get(s.as_str()).map(Vec::as_slice) {
                Some([_, _, ..]) => {
                    let message = format!("several teachers have the staff number \"{s}\"");
                    cells.error("staff_number", "ambiguous", message);
                }
                Some([p]) if user.as_ref().is_some_and(|u| u.id != p.user_id) => {
                    let message = format!("\"{s}\" is the staff number of another teacher");
                    cells.error("staff_number", "conflicting_keys", message);
                }
                Some([p]) if user.is_none() => {
                    user = match school_users.get(&p.user_id) {
                        Some(u) => Some(u.clone()),
                        None => SchoolUsers::row(conn, p.user_id, false)?,
                    };
                }
                _ => {}
            }
        }
        if let Some(p) = &phone {
            if by_phone
                .get(p)
                .is_some_and(|u| Some(u.id) != user.as_ref().map(|u| u.id))
            {
                cells.error("phone", "taken", "another account has this phone number");
            }
        }
        let Some(user) = user else {
            if email.is_none() && phone.is_none() {
                let message = "a new teacher's account needs an e-mail or a phone number";
                cells.error("email", "required", message);
            }
            return Ok(Some(TeacherWrite::New {
                user: NewUser {
                    id: Uuid::new_v4(),
                    email,
                    phone,
                    password_hash: importer.no_password.to_owned(),
                    first_name: first,
                    last_name: last,
                    is_superuser: false,
                    is_staff: false,
                    client_id: Some(school),
                },
                staff_number: staff,
                role: role.clone(),
            }));
        };
        school_users.insert(user.id, user.clone());
        let changed = |now: &str, given: &str| (now != given).then(|| given.to_owned());
        let mut account = UserChangeset {
            first_name: changed(&user.first_name, &first),
            last_name: changed(&user.last_name, &last),
            phone: phone.filter(|p| user.phone.as_ref() != Some(p)).map(Some),
            email: email
                .filter(|e| user.email.as_ref().map(|u| u.to_lowercase()) != Some(e.clone()))
                .map(Some),
            ..Default::default()
        };
        let touched = [
            ("first_name", account.first_name.is_some()),
            ("last_name", account.last_name.is_some()),
            ("phone", account.phone.is_some()),
            ("email", account.email.is_some()),
        ];
        let account = match touched.iter().find(|(_, changed)| *changed) {
            None => None,
            Some((column, _)) => {
                let roles = SchoolUsers::roles_of(conn, user.id)?;
                if let Err(why) = (importer.may_change_user)(&roles) {
                    cells.error(column, "permission_denied", why);
                }
                account.updated_at = Some(Utc::now());
                Some(account)
            }
        };
        let staff_given = cells.has("staff_number");
        let profile = match of_user.get(&user.id) {
            Some(p) => {
                let changes = TeacherChanges {
                    staff_number: (staff_given && p.staff_number != staff).then_some(staff),
                    ..Default::default()
                };
                let same = changes.staff_number.is_none();
                Write::<Teachers>::update((), p.id, changes, same)
            }
            None => Write::Create(
                (),
                NewTeacher {
                    user_id: user.id,
                    staff_number: staff,
                    is_deleted: false,
                },
            ),
        };
        Ok(Some(TeacherWrite::Existing {
            user: user.id,
            account,
            profile,
        }))
    })?;
    rows.settle(conn, dry_run, &importer.actor)
}
