//! `/api/v1/school/sessions/{session_pk}/exam-sessions/`: exam sessions of an academic
//! session.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, any, len},
        school::{
            crud::{SchoolResource, nested_methods, table_queries},
            sessions,
        },
    },
    auth::{Caller, permissions::Resource},
    db::schema_tenant::exam_sessions as t,
    error::{ApiError, ApiResult, FieldErrors},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct ExamSession {
    pub id: Uuid,
    #[serde(rename = "academic_session")]
    pub academic_session_id: Uuid,
    pub name: String,
    pub term: String,
    pub start_date: Option<DateTime<Utc>>,
    pub end_date: Option<DateTime<Utc>>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct ExamSessionInput {
    name: Option<String>,
    term: Option<String>,
    start_date: Option<Option<DateTime<Utc>>>,
    end_date: Option<Option<DateTime<Utc>>>,
    is_deleted: Option<bool>,
}

table_queries!(t, ExamSession, search: [name, term], soft_delete: is_deleted, changes: ExamSessionInput);

/// The live academic session of the path (404 otherwise).
pub fn academic_session(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Uuid> {
    let id = *parents.first().ok_or_else(ApiError::not_found)?;
    if sessions::live_exists(conn, id)? {
        Ok(id)
    } else {
        Err(ApiError::not_found())
    }
}

pub struct ExamSessions;

impl SchoolResource for ExamSessions {
    const PERMISSION: Resource = Resource::ExamSession;
    const PATH: &'static str = "/api/v1/school/sessions/{session_pk}/exam-sessions/";
    type Scope = Uuid;
    type Record = ExamSession;
    type Input = ExamSessionInput;

    nested_methods!(t, academic_session_id);

    fn scope(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Uuid> {
        academic_session(conn, parents)
    }

    fn parse(f: &mut Fields<'_>) -> ExamSessionInput {
        ExamSessionInput {
            name: f.required("name", &len(1, 255)),
            term: f.required("term", &len(1, 50)),
            start_date: f.nullable("start_date", None, &any),
            end_date: f.nullable("end_date", None, &any),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        _: &mut TenantConn,
        _: &Uuid,
        input: &ExamSessionInput,
        current: Option<&ExamSession>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let start = input
            .start_date
            .unwrap_or(current.and_then(|c| c.start_date));
        let end = input.end_date.unwrap_or(current.and_then(|c| c.end_date));
        if let (Some(start), Some(end)) = (start, end) {
            if end < start {
                errors.add("end_date", "must not be before start_date");
            }
        }
        Ok(())
    }

    fn create(
        conn: &mut TenantConn,
        session: &Uuid,
        input: ExamSessionInput,
        caller: &Caller,
    ) -> ApiResult<ExamSession> {
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::academic_session_id.eq(*session),
                t::name.eq(input.name.unwrap_or_default()),
                t::term.eq(input.term.unwrap_or_default()),
                t::start_date.eq(input.start_date.flatten()),
                t::end_date.eq(input.end_date.flatten()),
                t::is_deleted.eq(input.is_deleted.unwrap_or(false)),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(ExamSession::as_returning())
            .get_result(conn.pg())?)
    }
}
