//! `/api/v1/school/teacher-assignments/`: which teacher teaches which subject to which class.

use crate::{
    api::{
        fields::{Fields, any},
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::{
        assignments::{AssignmentChanges, Assignments, TeacherAssignment},
        classes::Classes,
        subjects::Subjects,
        teachers::Teachers,
    },
    tenancy::TenantConn,
};

impl SchoolResource for Assignments {
    const PERMISSION: Resource = Resource::TeacherAssignment;
    const PATH: &'static str = "/api/v1/school/teacher-assignments/";
    const CREATE_RULES: Option<&'static str> = Some(
        "The (teacher, academic class, subject) triple is unique among live assignments (409 `conflict`).",
    );

    fn parse(f: &mut Fields<'_>) -> AssignmentChanges {
        AssignmentChanges {
            teacher_id: f.required("teacher", &any),
            academic_class_id: f.required("academic_class", &any),
            subject_id: f.required("subject", &any),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        changes: &AssignmentChanges,
        _: Option<&TeacherAssignment>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let teacher = changes.teacher_id;
        check_ref::<Teachers>(conn, errors, "teacher", teacher, "teacher profile")?;
        let class = changes.academic_class_id;
        check_ref::<Classes>(conn, errors, "academic_class", class, "class")?;
        check_ref::<Subjects>(conn, errors, "subject", changes.subject_id, "subject")
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Assignments>(m);
}
