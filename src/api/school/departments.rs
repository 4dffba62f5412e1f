//! `/api/v1/school/departments/`: departments with a head, a subject and their teachers.

use crate::{
    api::{
        fields::{DistinctIds, Fields, any, len},
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::{
        Store,
        departments::{Department, DepartmentChanges, Departments},
        subjects::Subjects,
        teachers::Teachers,
    },
    tenancy::TenantConn,
};

/// The most teachers one department lists: bounds the work one request can ask for.
pub const MAX_TEACHERS: usize = 200;

impl SchoolResource for Departments {
    const PERMISSION: Resource = Resource::Department;
    const PATH: &'static str = "/api/v1/school/departments/";

    fn parse(f: &mut Fields<'_>) -> DepartmentChanges {
        DepartmentChanges {
            name: f.required("name", &len(1, 255)),
            hod_id: f.required("hod", &any),
            subject_id: f.required("subject", &any),
            is_deleted: f.optional("is_deleted", false, &any),
            teachers: f.optional("teachers", Vec::new(), &DistinctIds { max: MAX_TEACHERS }),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        changes: &DepartmentChanges,
        _: Option<&Department>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref::<Teachers>(conn, errors, "hod", changes.hod_id, "teacher profile")?;
        check_ref::<Subjects>(conn, errors, "subject", changes.subject_id, "subject")?;
        if let Some(listed) = changes.teachers.as_deref().filter(|ids| !ids.is_empty()) {
            let live = Teachers::live_ids(conn, listed)?;
            for teacher in listed.iter().filter(|id| !live.contains(id)) {
                errors.add(
                    "teachers",
                    format!("no live teacher profile has the id {teacher}"),
                );
            }
        }
        Ok(())
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Departments>(m);
}
