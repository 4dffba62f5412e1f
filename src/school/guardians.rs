//! Guardians: parents and carers, each optionally a user of the school, linked to the
//! students they answer for (in order, in `guardian_students`). Answered as [`Guardian`],
//! the row with its students.
//!
//! A user holding the `guardian` role reads only their children's records: `children_of`
//! is what the request's `ReadScope` is made of (see `family` for what it opens).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, FromRows, Store, Target,
    links::LinkTable,
    schema::{guardian_students as gs, guardians as t},
    table::{Incomplete, given, school_table},
};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Debug, Clone)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct GuardianRow {
    pub id: Uuid,
    pub first_name: String,
    pub last_name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub relationship: String,
    pub user_id: Option<Uuid>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct Guardian {
    pub id: Uuid,
    pub first_name: String,
    pub last_name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub relationship: String,
    pub user: Option<Uuid>,
    /// The students this guardian answers for, in the order given.
    pub students: Vec<Uuid>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Insertable, AsChangeset, Debug)]
#[diesel(table_name = t, treat_none_as_null = true)]
pub struct NewGuardian {
    pub first_name: String,
    pub last_name: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub relationship: String,
    pub user_id: Option<Uuid>,
    pub is_deleted: bool,
    /// Student ids, in order (stored in `guardian_students`).
    #[diesel(skip_insertion, skip_update)]
    pub students: Vec<Uuid>,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct GuardianChanges {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<Option<String>>,
    pub phone: Option<Option<String>>,
    pub relationship: Option<String>,
    pub user_id: Option<Option<Uuid>>,
    pub is_deleted: Option<bool>,
    #[diesel(skip_update)]
    pub students: Option<Vec<Uuid>>,
}

impl TryFrom<GuardianChanges> for NewGuardian {
    type Error = Incomplete;

    fn try_from(c: GuardianChanges) -> Result<Self, Incomplete> {
        Ok(Self {
            first_name: given(c.first_name, "first_name")?,
            last_name: given(c.last_name, "last_name")?,
            email: given(c.email, "email")?,
            phone: given(c.phone, "phone")?,
            relationship: given(c.relationship, "relationship")?,
            user_id: given(c.user_id, "user")?,
            is_deleted: given(c.is_deleted, "is_deleted")?,
            students: given(c.students, "students")?,
        })
    }
}

/// Guardians, answered with their students.
pub struct Guardians;

school_table!(Guardians: GuardianRow in t, new: NewGuardian, changes: GuardianChanges,
    search: [first_name, last_name], soft_delete: is_deleted);

impl FromRows<GuardianRow> for Guardian {
    /// The guardians of `rows` with their students (one query for all of them).
    fn from_rows(conn: &mut TenantConn, rows: Vec<GuardianRow>) -> ApiResult<Vec<Self>> {
        let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
        let mut by_guardian: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
        let links: Vec<(Uuid, Uuid)> = gs::table
            .filter(gs::guardian_id.eq_any(&ids))
            .order((gs::guardian_id, gs::position))
            .select((gs::guardian_id, gs::student_id))
            .load(conn.pg())?;
        for (guardian, student) in links {
            by_guardian.entry(guardian).or_default().push(student);
        }
        Ok(rows
            .into_iter()
            .map(|r| Self {
                students: by_guardian.remove(&r.id).unwrap_or_default(),
                id: r.id,
                first_name: r.first_name,
                last_name: r.last_name,
                email: r.email,
                phone: r.phone,
                relationship: r.relationship,
                user: r.user_id,
                is_deleted: r.is_deleted,
                created_by: r.created_by,
                updated_by: r.updated_by,
                created_at: r.created_at,
                updated_at: r.updated_at,
            })
            .collect())
    }
}

/// A guardian's students, in their order.
const GUARDIAN_STUDENTS: LinkTable = LinkTable {
    table: "guardian_students",
    owner: "guardian_id",
    member: "student_id",
};

/// Replaces the students of `guardian` with `students`, in this order.
fn set_students(conn: &mut TenantConn, guardian: Uuid, students: &[Uuid]) -> ApiResult<()> {
    GUARDIAN_STUDENTS.replace(conn, guardian, students)
}

impl Store for Guardians {
    type Record = Guardian;

    const NAME: &'static str = "guardian";

    /// Who a guardian user's children are is read from here, and cached with their roles.
    const CHANGES_READ_SCOPES: bool = true;

    /// Who a student's guardians are is the student's record too.
    const STUDENT_RECORD: Option<&'static str> = Some("guardian");

    fn students_in(_: &mut TenantConn, records: &[Guardian]) -> ApiResult<Vec<Uuid>> {
        Ok(records
            .iter()
            .flat_map(|g| g.students.iter().copied())
            .collect())
    }

    fn after_create(
        conn: &mut TenantConn,
        rows: &[GuardianRow],
        news: &[NewGuardian],
        _: &Actor,
    ) -> ApiResult<()> {
        for (row, new) in rows.iter().zip(news) {
            set_students(conn, row.id, &new.students)?;
        }
        Ok(())
    }

    fn after_replace(
        conn: &mut TenantConn,
        row: &GuardianRow,
        new: &NewGuardian,
        _: &Actor,
    ) -> ApiResult<()> {
        set_students(conn, row.id, &new.students)
    }

    fn after_update(
        conn: &mut TenantConn,
        rows: &[GuardianRow],
        changes: &GuardianChanges,
        _: &Actor,
    ) -> ApiResult<()> {
        if let Some(students) = &changes.students {
            for row in rows {
                set_students(conn, row.id, students)?;
            }
        }
        Ok(())
    }
}

impl Guardians {
    /// The live guardian records linked to `users`, by user (one query).
    pub fn of_users(conn: &mut TenantConn, users: &[Uuid]) -> ApiResult<HashMap<Uuid, Uuid>> {
        if users.is_empty() {
            return Ok(HashMap::new());
        }
        let rows: Vec<(Option<Uuid>, Uuid)> = t::table
            .filter(t::user_id.eq_any(users))
            .filter(t::is_deleted.eq(false))
            .select((t::user_id, t::id))
            .load(conn.pg())?;
        Ok(rows
            .into_iter()
            .filter_map(|(user, id)| user.map(|user| (user, id)))
            .collect())
    }

    /// Links the live guardian record `guardian`, which has no account yet, to `user`: a
    /// write through the store (its event names `actor`). The record is locked first, so
    /// two accounts cannot both take it. 400 on `guardian` when there is no such record or
    /// it already has an account.
    pub fn link_user(
        conn: &mut TenantConn,
        guardian: Uuid,
        user: Uuid,
        actor: &Actor,
    ) -> ApiResult<Guardian> {
        let current: Option<Option<Uuid>> = t::table
            .filter(t::id.eq(guardian))
            .filter(t::is_deleted.eq(false))
            .select(t::user_id)
            .for_update()
            .first(conn.pg())
            .optional()?;
        if !matches!(current, Some(None)) {
            return Err(ApiError::validation(
                "guardian",
                "no live guardian without an account has this id",
            ));
        }
        let changes = GuardianChanges {
            user_id: Some(Some(user)),
            ..GuardianChanges::default()
        };
        Self::update(conn, Target::live((), guardian), changes, actor)
    }

    /// The students linked to `user`'s live guardian records (none when the user is no
    /// guardian): one query, made when a guardian user's grants are loaded (`cache::roles`
    /// keeps them until a write of a guardian or a role in the school).
    pub fn children_of(conn: &mut TenantConn, user: Uuid) -> ApiResult<Vec<Uuid>> {
        Ok(gs::table
            .inner_join(t::table)
            .filter(t::user_id.eq(user))
            .filter(t::is_deleted.eq(false))
            .select(gs::student_id)
            .distinct()
            .load(conn.pg())?)
    }
}
