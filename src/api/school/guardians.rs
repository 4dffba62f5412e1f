//! `/api/v1/school/guardians/`: parents and carers, each linked to their students and
//! optionally to a user of the school (who then signs in with the `guardian` role).

use crate::{
    api::{
        fields::{DistinctIds, Email, Fields, any, len},
        routes::Mount,
        school::crud::{self, SchoolResource, check_school_user},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::{
        Store,
        guardians::{Guardian, GuardianChanges, Guardians},
        students::Students,
    },
    tenancy::TenantConn,
};

/// The most students one guardian lists: bounds the work one request can ask for.
pub const MAX_STUDENTS: usize = 50;

impl SchoolResource for Guardians {
    const PERMISSION: Resource = Resource::Guardian;
    const PATH: &'static str = "/api/v1/school/guardians/";
    const CREATE_RULES: Option<&'static str> = Some(
        "A `user` holding the `guardian` role reads only the records of this guardian's \
         `students` (their marks, attendance, report cards and the sessions, exam sessions, \
         exams and subjects those belong to).",
    );

    fn parse(f: &mut Fields<'_>) -> GuardianChanges {
        GuardianChanges {
            first_name: f.required("first_name", &len(1, 150)),
            last_name: f.required("last_name", &len(1, 150)),
            email: f.nullable("email", None, &Email),
            phone: f.nullable("phone", None, &len(1, 32)),
            relationship: f.optional("relationship", String::new(), &len(0, 50)),
            user_id: f.nullable("user", None, &any),
            is_deleted: f.optional("is_deleted", false, &any),
            students: f.optional("students", Vec::new(), &DistinctIds { max: MAX_STUDENTS }),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        changes: &GuardianChanges,
        _: Option<&Guardian>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_school_user(conn, "user", changes.user_id.flatten(), errors)?;
        if let Some(listed) = changes.students.as_deref().filter(|ids| !ids.is_empty()) {
            let live = Students::live_ids(conn, listed)?;
            for student in listed.iter().filter(|id| !live.contains(id)) {
                errors.add("students", format!("no live student has the id {student}"));
            }
        }
        Ok(())
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Guardians>(m);
}
