//! `/api/v1/school/students/`: students.

use crate::{
    api::{
        fields::{Fields, any, len},
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref, check_school_user},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::{
        classes::Classes,
        students::{Student, StudentChanges, Students},
    },
    tenancy::TenantConn,
};

impl SchoolResource for Students {
    const PERMISSION: Resource = Resource::Student;
    const PATH: &'static str = "/api/v1/school/students/";
    const LIST_FILTERS: &'static [(&'static str, &'static str)] = Students::FILTERS;
    const CREATE_RULES: Option<&'static str> =
        Some("`admission_number` is unique among live students (409 `conflict`).");

    fn parse(f: &mut Fields<'_>) -> StudentChanges {
        StudentChanges {
            admission_number: f.required("admission_number", &len(1, 50)),
            first_name: f.required("first_name", &len(1, 150)),
            last_name: f.required("last_name", &len(1, 150)),
            academic_class_id: f.nullable("academic_class", None, &any),
            user_id: f.nullable("user", None, &any),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        changes: &StudentChanges,
        _: Option<&Student>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let class = changes.academic_class_id.flatten();
        check_ref::<Classes>(conn, errors, "academic_class", class, "class")?;
        check_school_user(conn, "user", changes.user_id.flatten(), errors)
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Students>(m);
}
