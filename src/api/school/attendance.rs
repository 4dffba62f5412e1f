//! `/api/v1/school/attendance/`: attendance records (CRUD, with list filters). Taking a
//! class's attendance and a student's summary are in `attendance_ops`.

use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, OneOf, any, len},
        list_filter::Filters,
        routes::Mount,
        school::{
            class_access::require_class_access,
            crud::{self, Proposed, SchoolResource, check_ref},
        },
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiResult, FieldErrors},
    request::Caller,
    school::{
        Store, Target,
        attendance::{Attendance, AttendanceChanges, Attendances, MAX_NOTE_CHARS, STATUSES},
        classes::Classes,
        students::Students,
        teachers::TeacherProfile,
    },
    tenancy::TenantConn,
};

/// The filters of `/attendance/` (dates inclusive), also read by a student's summary.
pub(crate) const ATTENDANCE_FILTERS: Filters = &[
    ("academic_class", "records of this class (id)"),
    ("student", "records of this student (id)"),
    ("date", "records of this date (YYYY-MM-DD)"),
    ("date_from", "records on or after this date (YYYY-MM-DD)"),
    ("date_to", "records on or before this date (YYYY-MM-DD)"),
];

impl SchoolResource for Attendances {
    const PERMISSION: Resource = Resource::Attendance;
    const PATH: &'static str = "/api/v1/school/attendance/";
    const CREATE_RULES: Option<&'static str> = Some(
        "One live record per (student, date) (409 `conflict`); \
         `POST /api/v1/school/classes/{class_pk}/attendance/` creates or updates a whole class's.",
    );
    const WRITE_RULES: Option<&'static str> = Some(
        "Holders of `add_attendance`/`change_attendance` write any record. A teacher without \
         them creates and corrects (POST, PUT, PATCH) the records of their own classes: the \
         student's class, and `academic_class` when given, must be classes the teacher has a \
         live assignment to (403 `permission_denied` otherwise); deleting stays with \
         `delete_attendance`.",
    );
    const LIST_FILTERS: &'static [(&'static str, &'static str)] = ATTENDANCE_FILTERS;

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

    fn may_write_without_permission(
        conn: &mut TenantConn,
        caller: &Caller,
        action: Action,
    ) -> ApiResult<bool> {
        let Some(user) = caller.user_id() else {
            return Ok(false);
        };
        Ok(matches!(action, Action::Add | Action::Change)
            && TeacherProfile::live_of_user(conn, user)?.is_some())
    }

    /// A caller who writes by teaching (see `may_write_without_permission`) teaches every
    /// class the record is about, before and after the write.
    fn authorize(
        conn: &mut TenantConn,
        caller: &Caller,
        write: Proposed<'_, Self>,
    ) -> ApiResult<()> {
        let (action, before, after) = match write {
            Proposed::Create(new) => (
                Action::Add,
                None,
                Some((new.student_id, new.academic_class_id)),
            ),
            Proposed::Replace(current, new) => (
                Action::Change,
                Some(current),
                Some((new.student_id, new.academic_class_id)),
            ),
            Proposed::Patch(current, changes) => (
                Action::Change,
                Some(current),
                Some((
                    changes.student_id.unwrap_or(current.student_id),
                    changes
                        .academic_class_id
                        .unwrap_or(current.academic_class_id),
                )),
            ),
            Proposed::Delete(current) => (Action::Delete, Some(current), None),
        };
        let permission = Permission::new(action, Resource::Attendance);
        if caller.permissions.contains(permission) {
            return Ok(());
        }
        let mut classes = Vec::new();
        if let Some(current) = before {
            classes.extend(classes_of(
                conn,
                current.student_id,
                current.academic_class_id,
            )?);
        }
        if let Some((student, class)) = after {
            classes.extend(classes_of(conn, student, class)?);
        }
        if classes.is_empty() {
            classes.push(None);
        }
        for class in classes {
            require_class_access(conn, caller, &[permission], class)?;
        }
        Ok(())
    }
}

/// The classes a record of `student` is about: the student's class and `given`.
fn classes_of(
    conn: &mut TenantConn,
    student: Uuid,
    given: Option<Uuid>,
) -> ApiResult<Vec<Option<Uuid>>> {
    let current =
        Students::find(conn, Target::live((), student))?.and_then(|s| s.academic_class_id);
    let mut classes = vec![current];
    if given.is_some() && given != current {
        classes.push(given);
    }
    Ok(classes)
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Attendances>(m);
}
