//! Attendance records: one live record per (student, date), with the student's class that
//! day. The plain CRUD shape lives here; taking a whole class at once and the per-student
//! summary are in `attendance_ops`.

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    ListQuery, Store,
    schema::attendance as t,
    store::{LiveCount, Narrowing},
    table::{school_forms, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

/// The statuses a record may have.
pub const STATUSES: &[&str] = &["present", "absent", "late", "excused"];
/// The longest note, in characters.
pub const MAX_NOTE_CHARS: usize = 500;

#[derive(Queryable, QueryableByName, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Attendance {
    pub id: Uuid,
    #[serde(rename = "student")]
    pub student_id: Uuid,
    /// The student's class that day.
    #[serde(rename = "academic_class")]
    pub academic_class_id: Option<Uuid>,
    pub date: NaiveDate,
    /// `present`, `absent`, `late` or `excused`.
    pub status: String,
    #[schema(max_length = 500)]
    pub note: Option<String>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewAttendance, AttendanceChanges {
    student_id: Uuid,
    academic_class_id: Option<Uuid>,
    date: NaiveDate,
    status: String,
    note: Option<String>,
    is_deleted: bool,
});

/// Attendance records.
pub struct Attendances;

school_table!(Attendances: Attendance in t, new: NewAttendance, changes: AttendanceChanges,
    search: [], soft_delete: is_deleted);

/// Lists narrowed by the filters of `/attendance/` (`academic_class`, `student`, `date`,
/// `date_from`, `date_to`; dates inclusive).
impl Store for Attendances {
    type Record = Attendance;
    const NAME: &'static str = "attendance";
    const KEEPS_HISTORY: bool = true;

    fn students_of(_: &mut TenantConn, records: &[&Attendance]) -> ApiResult<Vec<Option<Uuid>>> {
        Ok(records.iter().map(|r| Some(r.student_id)).collect())
    }

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::attendance(children)
    }

    const LIVE_COUNT: Option<LiveCount<()>> = Some(LiveCount::kept_as("attendance"));

    const STUDENT_RECORD: Option<&'static str> = Some("attendance");

    fn students_in(_: &mut TenantConn, records: &[Attendance]) -> ApiResult<Vec<Uuid>> {
        Ok(records.iter().map(|a| a.student_id).collect())
    }

    fn narrowing(_: &mut TenantConn, query: &ListQuery) -> ApiResult<Option<Narrowing<Self>>> {
        let filter = query.filter.clone();
        if filter.is_empty() {
            return Ok(None);
        }
        Ok(Some(Box::new(move |mut rows| {
            if let Some(class) = filter.academic_class {
                rows = rows.filter(t::academic_class_id.eq(class));
            }
            if let Some(student) = filter.student {
                rows = rows.filter(t::student_id.eq(student));
            }
            if let Some(date) = filter.date {
                rows = rows.filter(t::date.eq(date));
            }
            if let Some(from) = filter.date_from {
                rows = rows.filter(t::date.ge(from));
            }
            if let Some(to) = filter.date_to {
                rows = rows.filter(t::date.le(to));
            }
            rows
        })))
    }
}
