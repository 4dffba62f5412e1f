//! Disclosures (API.md 11; FERPA 34 CFR 99.32): each read of a student's records by a party
//! outside the school, one row per student answered. The rows are written in batches by
//! `disclosure_log` after the read; here are the rows, the parties and the queries.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::schema::{disclosures as t, students};
use crate::{error::ApiResult, tenancy::TenantConn};

/// The kinds of outside party whose reads are disclosures. Stored as text (`as_str`), so a
/// kind added later (OneRoster's integration clients) needs no migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartyKind {
    /// A platform API key (`X-API-KEY`).
    ApiKey,
    /// A OneRoster integration client (API.md 8), by its bearer token.
    OauthClient,
}

impl PartyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApiKey => "api_key",
            Self::OauthClient => "oauth_client",
        }
    }
}

/// Who read: an outside party, as the disclosure shows it.
#[derive(Serialize, Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
pub struct Party {
    /// `api_key` or `oauth_client`.
    #[serde(rename = "type")]
    pub kind: String,
    pub id: Uuid,
    pub name: String,
}

impl Party {
    pub fn new(kind: PartyKind, id: Uuid, name: &str) -> Self {
        Self {
            kind: kind.as_str().to_owned(),
            id,
            name: name.to_owned(),
        }
    }
}

/// One disclosure as answered.
#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct Disclosure {
    /// When the read was answered.
    pub at: DateTime<Utc>,
    pub party: Party,
    /// The kinds of record read (`mark, student`) and the request that read them.
    pub what: String,
}

/// A disclosure to write.
#[derive(Insertable, Debug, Clone)]
#[diesel(table_name = t)]
pub struct NewDisclosure {
    pub student_id: Uuid,
    pub at: DateTime<Utc>,
    pub party_type: String,
    pub party_id: Uuid,
    pub party_name: String,
    pub what: String,
}

/// Rows per insert statement: 6 parameters a row stay well under PostgreSQL's 65,535.
const ROWS_PER_STATEMENT: usize = 2_000;

pub struct Disclosures;

impl Disclosures {
    /// Writes `rows` (a batch of the log), a few statements however many.
    pub fn insert_many(conn: &mut TenantConn, rows: &[NewDisclosure]) -> ApiResult<()> {
        conn.transaction(|conn| {
            for chunk in rows.chunks(ROWS_PER_STATEMENT) {
                diesel::insert_into(t::table)
                    .values(chunk)
                    .execute(conn.pg())?;
            }
            Ok(())
        })
    }

    /// One page of `student`'s disclosures, newest first, and how many there are.
    pub fn page(
        conn: &mut TenantConn,
        student: Uuid,
        offset: i64,
        limit: i64,
    ) -> ApiResult<(i64, Vec<Disclosure>)> {
        let count = t::table
            .filter(t::student_id.eq(student))
            .count()
            .get_result(conn.pg())?;
        type Row = (DateTime<Utc>, String, Uuid, String, String);
        let rows: Vec<Row> = t::table
            .filter(t::student_id.eq(student))
            .order((t::at.desc(), t::id.desc()))
            .offset(offset)
            .limit(limit)
            .select((t::at, t::party_type, t::party_id, t::party_name, t::what))
            .load(conn.pg())?;
        let page = rows
            .into_iter()
            .map(|(at, kind, id, name, what)| Disclosure {
                at,
                party: Party { kind, id, name },
                what,
            })
            .collect();
        Ok((count, page))
    }

    /// Which of `ids` name students of the school, soft-deleted or not (a read that answers
    /// ids of many kinds, OneRoster's, finds its students so). One query.
    pub fn students_among(conn: &mut TenantConn, ids: &[Uuid]) -> ApiResult<Vec<Uuid>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        Ok(students::table
            .filter(students::id.eq_any(ids))
            .select(students::id)
            .load(conn.pg())?)
    }

    /// Every live student of the school (a whole-school export discloses them all).
    pub fn live_students(conn: &mut TenantConn) -> ApiResult<Vec<Uuid>> {
        Ok(students::table
            .filter(students::is_deleted.eq(false))
            .select(students::id)
            .load(conn.pg())?)
    }

    /// Whether `student` names a student of the school, soft-deleted or not (their
    /// disclosures are kept with them). Not a read of the student's records.
    pub fn student_exists(conn: &mut TenantConn, student: Uuid) -> ApiResult<bool> {
        Ok(
            diesel::select(diesel::dsl::exists(students::table.find(student)))
                .get_result(conn.pg())?,
        )
    }
}
