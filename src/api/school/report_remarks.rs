//! `.../exam-sessions/{exam_session_pk}/report-remarks/`: the class teacher's remark on a
//! student's report card for the exam session (one live remark per student). Written by
//! those who write marks; read with the marks' permission; printed on the card.

use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, any, len},
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::{
        report_remarks::{MAX_REMARK_CHARS, ReportRemark, ReportRemarkChanges, ReportRemarks},
        students::Students,
    },
    tenancy::TenantConn,
};

impl SchoolResource for ReportRemarks {
    const PERMISSION: Resource = Resource::Mark;
    const PATH: &'static str =
        "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/report-remarks/";
    const CREATE_RULES: Option<&'static str> = Some(
        "One live remark per (exam session, student) (409 `conflict`); change it with PUT or \
         PATCH. Needs the marks' permissions (`add_mark`, `change_mark`; `view_mark` to read).",
    );

    fn parse(f: &mut Fields<'_>) -> ReportRemarkChanges {
        ReportRemarkChanges {
            student_id: f.required("student", &any),
            remark: f.required("remark", &len(1, MAX_REMARK_CHARS)),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &Uuid,
        changes: &ReportRemarkChanges,
        _: Option<&ReportRemark>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref::<Students>(conn, errors, "student", changes.student_id, "student")
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<ReportRemarks>(m);
}
