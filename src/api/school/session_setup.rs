//! `/api/v1/school/session-setup/`: the progress of setting up an academic or exam session.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, OneOf, any},
        school::{
            crud::{SchoolResource, check_ref, table_queries, top_level_methods},
            exam_sessions, sessions,
        },
    },
    auth::{Caller, permissions::Resource},
    db::schema_tenant::session_setups as t,
    error::{ApiResult, FieldErrors},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct SessionSetup {
    pub id: Uuid,
    pub session_type: String,
    #[serde(rename = "academic_session")]
    pub academic_session_id: Option<Uuid>,
    #[serde(rename = "exam_session")]
    pub exam_session_id: Option<Uuid>,
    pub status: String,
    pub current_step: i32,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct SessionSetupInput {
    session_type: Option<String>,
    academic_session_id: Option<Option<Uuid>>,
    exam_session_id: Option<Option<Uuid>>,
    status: Option<String>,
    current_step: Option<i32>,
}

table_queries!(t, SessionSetup, search: [], changes: SessionSetupInput);

pub struct SessionSetups;

impl SchoolResource for SessionSetups {
    const PERMISSION: Resource = Resource::SessionSetup;
    const PATH: &'static str = "/api/v1/school/session-setup/";
    type Scope = ();
    type Record = SessionSetup;
    type Input = SessionSetupInput;

    top_level_methods!();

    fn parse(f: &mut Fields<'_>) -> SessionSetupInput {
        SessionSetupInput {
            session_type: f.required(
                "session_type",
                &OneOf(&["exam_session", "academic_session"]),
            ),
            academic_session_id: f.nullable("academic_session", None, &any),
            exam_session_id: f.nullable("exam_session", None, &any),
            status: f.optional(
                "status",
                "not_started".to_owned(),
                &OneOf(&["not_started", "pending", "completed"]),
            ),
            current_step: f.optional("current_step", 0, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        input: &SessionSetupInput,
        _: Option<&SessionSetup>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref(
            conn,
            errors,
            "academic_session",
            input.academic_session_id.flatten(),
            "academic session",
            sessions::live_exists,
        )?;
        check_ref(
            conn,
            errors,
            "exam_session",
            input.exam_session_id.flatten(),
            "exam session",
            exam_sessions::live_exists,
        )?;
        Ok(())
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: SessionSetupInput,
        caller: &Caller,
    ) -> ApiResult<SessionSetup> {
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::session_type.eq(input.session_type.unwrap_or_default()),
                t::academic_session_id.eq(input.academic_session_id.flatten()),
                t::exam_session_id.eq(input.exam_session_id.flatten()),
                t::status.eq(input.status.unwrap_or_else(|| "not_started".into())),
                t::current_step.eq(input.current_step.unwrap_or(0)),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(SessionSetup::as_returning())
            .get_result(conn.pg())?)
    }
}
