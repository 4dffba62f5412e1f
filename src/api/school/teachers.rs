//! `/api/v1/school/teachers/`: teacher profiles, answered with the user's name.

use crate::{
    api::{
        fields::{Fields, any, len},
        routes::Mount,
        school::crud::{self, SchoolResource, check_school_user},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::teachers::{TeacherChanges, TeacherView, Teachers},
    tenancy::TenantConn,
};

impl SchoolResource for Teachers {
    const PERMISSION: Resource = Resource::TeacherProfile;
    const PATH: &'static str = "/api/v1/school/teachers/";

    fn parse(f: &mut Fields<'_>) -> TeacherChanges {
        TeacherChanges {
            user_id: f.required("user", &any),
            staff_number: f.nullable("staff_number", None, &len(1, 50)),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        changes: &TeacherChanges,
        _: Option<&TeacherView>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_school_user(conn, "user", changes.user_id, errors)
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Teachers>(m);
}
