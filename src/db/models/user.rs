//! Users of both populations: platform administrators (`client_id` null) and school users.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::db::{
    lower,
    page::{Span, page},
    schema_public::users,
};

#[derive(Queryable, Selectable, Identifiable, Debug, Clone)]
#[diesel(table_name = users, check_for_backend(diesel::pg::Pg))]
pub struct User {
    pub id: Uuid,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub password_hash: String,
    pub first_name: String,
    pub last_name: String,
    pub is_active: bool,
    pub is_superuser: bool,
    pub is_staff: bool,
    pub client_id: Option<Uuid>,
    pub token_version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub last_login: Option<DateTime<Utc>>,
}

#[derive(Insertable, Debug)]
#[diesel(table_name = users)]
pub struct NewUser {
    pub id: Uuid,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub password_hash: String,
    pub first_name: String,
    pub last_name: String,
    pub is_superuser: bool,
    pub is_staff: bool,
    pub client_id: Option<Uuid>,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = users)]
pub struct UserChangeset {
    /// `Some(None)` clears it (school users API); `None` leaves it.
    pub email: Option<Option<String>>,
    pub phone: Option<Option<String>>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub password_hash: Option<String>,
    pub is_active: Option<bool>,
    pub is_staff: Option<bool>,
    pub is_superuser: Option<bool>,
    pub token_version: Option<i32>,
    pub updated_at: Option<DateTime<Utc>>,
}

/// What a user logs in with: an e-mail address or a phone number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identifier {
    Email(String),
    Phone(String),
}

impl Identifier {
    /// Anything with an `@` is an e-mail; anything else must read as a phone number.
    pub fn parse(raw: &str) -> Option<Self> {
        let raw = raw.trim();
        if raw.contains('@') {
            Some(Self::Email(raw.to_owned()))
        } else {
            normalize_phone(raw).map(Self::Phone)
        }
    }

    /// The form every spelling of this identifier shares: e-mails lower-cased, phones as
    /// stored. Login throttling counts per key, so `+1 555 0100000` and `15550100000`
    /// share one count.
    pub fn throttle_key(raw: &str) -> String {
        match Self::parse(raw) {
            Some(Self::Email(email)) => email.to_lowercase(),
            Some(Self::Phone(phone)) => phone,
            None => raw.trim().to_lowercase(),
        }
    }
}

/// Phones are stored as `+` and 6-15 digits; spaces, dashes, dots and brackets are dropped.
/// Which users a list is about: all, platform users (no school), or one school's.
#[derive(Clone, Copy, Debug)]
pub enum UserClient {
    Any,
    Platform,
    School(Uuid),
}

pub fn normalize_phone(raw: &str) -> Option<String> {
    let trimmed = raw.trim();
    let digits_part = trimmed.strip_prefix('+').unwrap_or(trimmed);
    let mut digits = String::with_capacity(digits_part.len() + 1);
    digits.push('+');
    for c in digits_part.chars() {
        match c {
            '0'..='9' => digits.push(c),
            ' ' | '-' | '.' | '(' | ')' => {}
            _ => return None,
        }
    }
    (7..=16).contains(&digits.len()).then_some(digits)
}

/// The condition of a search over users (see [`User::search_matches`]).
pub type SearchMatches = Box<
    dyn BoxableExpression<
            users::table,
            diesel::pg::Pg,
            SqlType = diesel::sql_types::Nullable<diesel::sql_types::Bool>,
        >,
>;

impl User {
    /// One page of users (oldest first) whose school is `client`, matching `search` (a
    /// case-insensitive substring of e-mail, phone and names), and the count of all that
    /// match.
    pub fn page(
        conn: &mut PgConnection,
        client: UserClient,
        search: Option<&str>,
        span: Span,
    ) -> QueryResult<(i64, Vec<User>)> {
        let pattern = search.map(crate::db::like_pattern);
        let matching = || {
            let mut q = users::table.select(User::as_select()).into_boxed();
            match client {
                UserClient::Any => {}
                UserClient::Platform => q = q.filter(users::client_id.is_null()),
                UserClient::School(id) => q = q.filter(users::client_id.eq(id)),
            }
            match &pattern {
                Some(pattern) => q.filter(Self::search_matches(pattern)),
                None => q,
            }
        };
        page(conn, matching, (users::created_at, users::id), span)
    }

    /// Whether a user's e-mail, phone or names match `pattern` (an `ILIKE` pattern): the
    /// search of every list of users (the platform's, a school's).
    pub fn search_matches(pattern: &str) -> SearchMatches {
        Box::new(
            users::email
                .ilike(pattern.to_owned())
                .or(users::phone.ilike(pattern.to_owned()))
                .or(users::first_name.ilike(pattern.to_owned()))
                .or(users::last_name.ilike(pattern.to_owned())),
        )
    }

    pub fn find(conn: &mut PgConnection, id: Uuid) -> QueryResult<Option<User>> {
        users::table
            .find(id)
            .select(User::as_select())
            .first(conn)
            .optional()
    }

    /// The display names of the users `ids`, by id (one query, however many ids).
    pub fn display_names(
        conn: &mut PgConnection,
        ids: &[Uuid],
    ) -> QueryResult<std::collections::HashMap<Uuid, String>> {
        Ok(users::table
            .filter(users::id.eq_any(ids))
            .select(User::as_select())
            .load::<User>(conn)?
            .into_iter()
            .map(|user| (user.id, user.display_name()))
            .collect())
    }

    /// `find` that locks the row until the transaction ends (`SELECT ... FOR UPDATE`).
    pub fn find_for_update(conn: &mut PgConnection, id: Uuid) -> QueryResult<Option<User>> {
        users::table
            .find(id)
            .select(User::as_select())
            .for_update()
            .first(conn)
            .optional()
    }

    pub fn find_by_identifier(
        conn: &mut PgConnection,
        identifier: &Identifier,
    ) -> QueryResult<Option<User>> {
        let query = users::table.select(User::as_select()).into_boxed();
        let query = match identifier {
            Identifier::Email(email) => {
                query.filter(lower(users::email.assume_not_null()).eq(email.to_lowercase()))
            }
            Identifier::Phone(phone) => query.filter(users::phone.eq(phone)),
        };
        query.first(conn).optional()
    }

    pub fn insert(conn: &mut PgConnection, new: &NewUser) -> QueryResult<User> {
        diesel::insert_into(users::table)
            .values(new)
            .returning(User::as_returning())
            .get_result(conn)
    }

    pub fn update(conn: &mut PgConnection, id: Uuid, changes: &UserChangeset) -> QueryResult<User> {
        diesel::update(users::table.find(id))
            .set(changes)
            .returning(User::as_returning())
            .get_result(conn)
    }

    /// Notes a successful sign-in (the school users API answers it as `last_login`).
    pub fn record_login(conn: &mut PgConnection, id: Uuid) -> QueryResult<()> {
        diesel::update(users::table.find(id))
            .set(users::last_login.eq(diesel::dsl::now))
            .execute(conn)
            .map(drop)
    }

    pub fn is_platform_admin(&self) -> bool {
        self.client_id.is_none() && (self.is_staff || self.is_superuser)
    }

    /// "First Last", else the e-mail, else the phone.
    pub fn display_name(&self) -> String {
        let full = format!("{} {}", self.first_name, self.last_name)
            .trim()
            .to_owned();
        if !full.is_empty() {
            return full;
        }
        self.email
            .clone()
            .or_else(|| self.phone.clone())
            .unwrap_or_default()
    }

    pub fn view(&self) -> UserView {
        UserView {
            id: self.id,
            email: self.email.clone(),
            phone: self.phone.clone(),
            first_name: self.first_name.clone(),
            last_name: self.last_name.clone(),
            client: self.client_id,
            is_superuser: self.is_superuser,
            is_staff: self.is_staff,
        }
    }
}

/// The `user` object of login and `me` answers.
#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct UserView {
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
    pub client: Option<Uuid>,
    pub is_superuser: bool,
    pub is_staff: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phones_normalize_to_plus_and_digits() {
        assert_eq!(
            normalize_phone("+1 (555) 010-0000").as_deref(),
            Some("+15550100000")
        );
        assert_eq!(
            normalize_phone("254700000001").as_deref(),
            Some("+254700000001")
        );
        assert_eq!(normalize_phone("12345"), None);
        assert_eq!(normalize_phone("+1555abc0000"), None);
        assert_eq!(normalize_phone(&"9".repeat(16)), None);
    }

    #[test]
    fn identifiers_are_email_or_phone() {
        assert_eq!(
            Identifier::parse(" A@B.io "),
            Some(Identifier::Email("A@B.io".into()))
        );
        assert_eq!(
            Identifier::parse("+15550100000"),
            Some(Identifier::Phone("+15550100000".into()))
        );
        assert_eq!(Identifier::parse("nobody"), None);
    }
}
