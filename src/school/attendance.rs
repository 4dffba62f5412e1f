//! Attendance records: one live record per (student, date), with the student's class that
//! day. The plain CRUD shape lives here; taking a whole class at once and the per-student
//! summary are in `attendance_ops`.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    ListQuery, Store, id_param,
    schema::attendance as t,
    store::{LiveCount, Narrowing},
    table::{school_forms, school_table},
};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

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

/// Lists narrowed by the filters of `/attendance/` (see [`AttendanceFilter`]).
impl Store for Attendances {
    type Record = Attendance;
    const NAME: &'static str = "attendance";
    const KEEPS_HISTORY: bool = true;

    fn student_of(_: &mut TenantConn, record: &Attendance) -> ApiResult<Option<Uuid>> {
        Ok(Some(record.student_id))
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
        let filter = AttendanceFilter::parse(&query.params)?;
        if filter == AttendanceFilter::default() {
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

/// The list filters of `/attendance/`: `academic_class`, `student`, `date`, `date_from`,
/// `date_to` (dates inclusive).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AttendanceFilter {
    pub academic_class: Option<Uuid>,
    pub student: Option<Uuid>,
    pub date: Option<NaiveDate>,
    pub date_from: Option<NaiveDate>,
    pub date_to: Option<NaiveDate>,
}

impl AttendanceFilter {
    /// The query parameters this filter reads, with what they do (for the API document).
    pub const PARAMS: &'static [(&'static str, &'static str)] = &[
        ("academic_class", "records of this class (id)"),
        ("student", "records of this student (id)"),
        ("date", "records of this date (YYYY-MM-DD)"),
        ("date_from", "records on or after this date (YYYY-MM-DD)"),
        ("date_to", "records on or before this date (YYYY-MM-DD)"),
    ];

    /// Reads the filter from query parameters; a malformed value is a 400 `invalid_query`.
    pub fn parse(params: &HashMap<String, String>) -> ApiResult<Self> {
        let id = |key: &str| id_param(params, key);
        let date = |key: &str| -> ApiResult<Option<NaiveDate>> {
            params
                .get(key)
                .map(|raw| {
                    parse_date(raw)
                        .ok_or_else(|| ApiError::InvalidQuery(format!("{key} must be YYYY-MM-DD")))
                })
                .transpose()
        };
        Ok(Self {
            academic_class: id("academic_class")?,
            student: id("student")?,
            date: date("date")?,
            date_from: date("date_from")?,
            date_to: date("date_to")?,
        })
    }
}

/// `YYYY-MM-DD` exactly.
pub fn parse_date(raw: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .ok()
        .filter(|_| raw.len() == 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_read_ids_and_dates_and_refuse_the_malformed() {
        let params = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let id = Uuid::new_v4();
        let filter = AttendanceFilter::parse(&params(&[
            ("student", &id.to_string()),
            ("date_from", "2026-09-01"),
        ]))
        .expect("valid");
        assert_eq!(filter.student, Some(id));
        assert_eq!(filter.date_from, NaiveDate::from_ymd_opt(2026, 9, 1));
        assert!(AttendanceFilter::parse(&params(&[("date", "2026-9-1")])).is_err());
        assert!(AttendanceFilter::parse(&params(&[("academic_class", "x")])).is_err());
    }
}
