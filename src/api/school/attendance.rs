//! `/api/v1/school/attendance/`: attendance records (CRUD, with list filters). Taking a
//! class's attendance and a student's summary are in `attendance_ops`.

use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, OneOf, any, len},
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::{
        attendance::{
            Attendance, AttendanceChanges, AttendanceFilter, Attendances, MAX_NOTE_CHARS, STATUSES,
        },
        classes::Classes,
        students::Students,
    },
    tenancy::TenantConn,
};

impl SchoolResource for Attendances {
    const PERMISSION: Resource = Resource::Attendance;
    const PATH: &'static str = "/api/v1/school/attendance/";
    const CREATE_RULES: Option<&'static str> = Some(
        "One live record per (student, date) (409 `conflict`); \
         `POST /api/v1/school/classes/{class_pk}/attendance/` creates or updates a whole class's.",
    );
    const LIST_FILTERS: &'static [(&'static str, &'static str)] = AttendanceFilter::PARAMS;

    fn parse(f: &mut Fields<'_>) -> AttendanceChanges {
        AttendanceChanges {
            student_id: f.required("student", &any),
            academic_class_id: f.nullable("academic_class", None, &any),
            date: f.required("date", &any),
            status: f.required("status", &OneOf(STATUSES)),
            note: f.nullable("note", None, &len(0, MAX_NOTE_CHARS)),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        changes: &AttendanceChanges,
        _: Option<&Attendance>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref::<Students>(conn, errors, "student", changes.student_id, "student")?;
        let class: Option<Uuid> = changes.academic_class_id.flatten();
        check_ref::<Classes>(conn, errors, "academic_class", class, "class")
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Attendances>(m);
}
