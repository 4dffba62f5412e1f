//! `/api/v1/school/enrollments/`: a student's class in one academic session.

use crate::{
    api::{
        fields::{Fields, OneOf, any},
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::{
        classes::Classes,
        enrollments::{ACTIVE, Enrollment, EnrollmentChanges, Enrollments, STATUSES},
        sessions::Sessions,
        students::Students,
    },
    tenancy::TenantConn,
};

impl SchoolResource for Enrollments {
    const PERMISSION: Resource = Resource::Enrollment;
    const PATH: &'static str = "/api/v1/school/enrollments/";
    const LIST_FILTERS: &'static [(&'static str, &'static str)] = Enrollments::FILTERS;
    const CREATE_RULES: Option<&'static str> = Some(
        "One live enrollment per (student, academic session) (409 `conflict`). An enrollment written for the active session sets the student's `academic_class`.",
    );

    fn parse(f: &mut Fields<'_>) -> EnrollmentChanges {
        EnrollmentChanges {
            student_id: f.required("student", &any),
            academic_class_id: f.required("academic_class", &any),
            academic_session_id: f.required("academic_session", &any),
            status: f.optional("status", ACTIVE.to_owned(), &OneOf(STATUSES)),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        changes: &EnrollmentChanges,
        _: Option<&Enrollment>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref::<Students>(conn, errors, "student", changes.student_id, "student")?;
        let class = changes.academic_class_id;
        check_ref::<Classes>(conn, errors, "academic_class", class, "class")?;
        let session = changes.academic_session_id;
        check_ref::<Sessions>(
            conn,
            errors,
            "academic_session",
            session,
            "academic session",
        )
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Enrollments>(m);
}
