//! `/api/v1/school/sessions/{session_pk}/exam-sessions/`: exam sessions of an academic
//! session.

use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, any, len},
        routes::Mount,
        school::crud::{self, SchoolResource},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::exam_sessions::{ExamSession, ExamSessionChanges, ExamSessions},
    tenancy::TenantConn,
};

impl SchoolResource for ExamSessions {
    const PERMISSION: Resource = Resource::ExamSession;
    const PATH: &'static str = "/api/v1/school/sessions/{session_pk}/exam-sessions/";

    fn parse(f: &mut Fields<'_>) -> ExamSessionChanges {
        ExamSessionChanges {
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
        changes: &ExamSessionChanges,
        current: Option<&ExamSession>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let start = changes
            .start_date
            .unwrap_or(current.and_then(|c| c.start_date));
        let end = changes.end_date.unwrap_or(current.and_then(|c| c.end_date));
        if let (Some(start), Some(end)) = (start, end) {
            if end < start {
                errors.add("end_date", "must not be before start_date");
            }
        }
        Ok(())
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<ExamSessions>(m);
}
