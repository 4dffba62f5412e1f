//! `/api/v1/school/session-setup/`: the progress of setting up an academic or exam session.

use crate::{
    api::{
        fields::{Fields, OneOf, any},
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::{
        exam_sessions::ExamSessions,
        session_setup::{SessionSetup, SessionSetupChanges, SessionSetups},
        sessions::Sessions,
    },
    tenancy::TenantConn,
};

impl SchoolResource for SessionSetups {
    const PERMISSION: Resource = Resource::SessionSetup;
    const PATH: &'static str = "/api/v1/school/session-setup/";

    fn parse(f: &mut Fields<'_>) -> SessionSetupChanges {
        SessionSetupChanges {
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
        changes: &SessionSetupChanges,
        _: Option<&SessionSetup>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let academic = changes.academic_session_id.flatten();
        check_ref::<Sessions>(
            conn,
            errors,
            "academic_session",
            academic,
            "academic session",
        )?;
        let exam = changes.exam_session_id.flatten();
        check_ref::<ExamSessions>(conn, errors, "exam_session", exam, "exam session")
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<SessionSetups>(m);
}
