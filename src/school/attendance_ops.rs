//! Attendance beyond CRUD: a class's attendance taken in one request (validated record by
//! record, upserted in one statement) and a student's summary over a date range.

use std::collections::HashMap;

use chrono::NaiveDate;
use diesel::{prelude::*, sql_types};
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor,
    attendance::{Attendance, Attendances, STATUSES},
    change_log::{self, Change},
    schema::{attendance as t, students},
    sessions::Sessions,
};
use crate::{
    error::{ApiResult, FieldErrors},
    tenancy::TenantConn,
};

/// One student's line of a class take, as parsed from the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakeLine {
    pub student: Uuid,
    pub status: String,
    pub note: Option<String>,
}

/// The rules of a take that need the database, every problem at once under the field it
/// concerns (`date`, `records[i].student`): the date lies in the active academic session,
/// each student is a live student of the class, and none is listed twice.
pub fn check_take(
    conn: &mut TenantConn,
    class_id: Uuid,
    date: Option<NaiveDate>,
    lines: &[TakeLine],
    errors: &mut FieldErrors,
) -> ApiResult<()> {
    if let Some(date) = date {
        match Sessions::active_dates(conn)? {
            None => errors.add("date", "no academic session is active"),
            Some((start, end)) if date < start || date > end => errors.add(
                "date",
                format!("{date} is outside the active academic session ({start} to {end})"),
            ),
            Some(_) => {}
        }
    }
    let ids: Vec<Uuid> = lines.iter().map(|line| line.student).collect();
    let in_class: std::collections::HashSet<Uuid> = students::table
        .filter(students::id.eq_any(&ids))
        .filter(students::is_deleted.eq(false))
        .filter(students::academic_class_id.eq(class_id))
        .select(students::id)
        .load::<Uuid>(conn.pg())?
        .into_iter()
        .collect();
    let mut first_at: HashMap<Uuid, usize> = HashMap::new();
    for (index, line) in lines.iter().enumerate() {
        let field = format!("records[{index}].student");
        if let Some(first) = first_at.insert(line.student, index) {
            first_at.insert(line.student, first);
            errors.add(
                &field,
                format!(
                    "student {} is listed twice (also records[{first}])",
                    line.student
                ),
            );
        } else if !in_class.contains(&line.student) {
            errors.add(
                &field,
                format!("no live student of this class has the id {}", line.student),
            );
        }
    }
    Ok(())
}

/// Writes the take: each line's live record for `date` is created or updated (status,
/// note, class), all in one statement. Two takes of one class and date at the same time
/// meet at the live (student, date) unique index, so neither creates a second record; the
/// later one's values win. Answers the records in the order of `lines`. `updated_at` is
/// the new row's default (`excluded`), not `now()`: Citus refuses a function that is not
/// immutable in `DO UPDATE SET` on a distributed table. Each record's change is recorded
/// (`attendance.created` or `.updated`, and its history): the records the take replaces
/// are read and locked first, so their old values are the ones overwritten.
pub fn upsert_take(
    conn: &mut TenantConn,
    class_id: Uuid,
    date: NaiveDate,
    lines: &[TakeLine],
    actor: &Actor,
) -> ApiResult<Vec<Attendance>> {
    conn.writing(|conn| {
        debug_assert!(lines.iter().all(|l| STATUSES.contains(&l.status.as_str())));
        let students: Vec<Uuid> = lines.iter().map(|l| l.student).collect();
        let replaced: HashMap<Uuid, Attendance> = t::table
            .filter(t::student_id.eq_any(&students))
            .filter(t::date.eq(date))
            .filter(t::is_deleted.eq(false))
            .select(Attendance::as_select())
            .for_update()
            .load(conn.pg())?
            .into_iter()
            .map(|record: Attendance| (record.id, record))
            .collect();
        let statuses: Vec<&str> = lines.iter().map(|l| l.status.as_str()).collect();
        let notes: Vec<Option<&str>> = lines.iter().map(|l| l.note.as_deref()).collect();
        let written: Vec<Attendance> = diesel::sql_query(
            "INSERT INTO attendance (student_id, academic_class_id, date, status, note, \
                                     created_by, updated_by) \
             SELECT line.student, $1, $2, line.status, line.note, $3, $3 \
               FROM unnest($4::uuid[], $5::text[], $6::text[]) AS line (student, status, note) \
             ON CONFLICT (student_id, date) WHERE NOT is_deleted DO UPDATE \
                SET status = excluded.status, note = excluded.note, \
                    academic_class_id = excluded.academic_class_id, \
                    updated_by = excluded.updated_by, updated_at = excluded.updated_at \
             RETURNING *",
        )
        .bind::<sql_types::Uuid, _>(class_id)
        .bind::<sql_types::Date, _>(date)
        .bind::<sql_types::Nullable<sql_types::Uuid>, _>(actor.user_id())
        .bind::<sql_types::Array<sql_types::Uuid>, _>(&students)
        .bind::<sql_types::Array<sql_types::Text>, _>(&statuses)
        .bind::<sql_types::Array<sql_types::Nullable<sql_types::Text>>, _>(&notes)
        .load(conn.pg())?;
        let mut by_student: HashMap<Uuid, Attendance> =
            written.into_iter().map(|r| (r.student_id, r)).collect();
        let records: Vec<Attendance> = students
            .iter()
            .filter_map(|id| by_student.remove(id))
            .collect();
        for after in &records {
            let change = match replaced.get(&after.id) {
                Some(before) => Change::Updated { before, after },
                None => Change::Created(after),
            };
            change_log::record::<Attendances>(conn, actor, change)?;
        }
        Ok(records)
    })
}

/// A student's attendance over a range of dates: days recorded per status, and the
/// attendance rate.
#[derive(Serialize, Debug, Clone, PartialEq, utoipa::ToSchema)]
pub struct AttendanceSummary {
    pub student: Uuid,
    /// The range counted (inclusive); `null`: unbounded on that side.
    pub date_from: Option<NaiveDate>,
    pub date_to: Option<NaiveDate>,
    /// Days with a live record in the range.
    pub days: i64,
    pub present: i64,
    pub absent: i64,
    pub late: i64,
    pub excused: i64,
    /// (present + late) / days, rounded to 4 decimals; `null` when no day is recorded.
    pub attendance_rate: Option<f64>,
}

impl AttendanceSummary {
    /// The summary of `counts` (status → days).
    pub fn of_counts(
        student: Uuid,
        date_from: Option<NaiveDate>,
        date_to: Option<NaiveDate>,
        counts: &HashMap<String, i64>,
    ) -> Self {
        let count = |status: &str| counts.get(status).copied().unwrap_or(0);
        let days: i64 = counts.values().sum();
        let attended = count("present") + count("late");
        Self {
            student,
            date_from,
            date_to,
            days,
            present: count("present"),
            absent: count("absent"),
            late: count("late"),
            excused: count("excused"),
            attendance_rate: (days > 0)
                .then(|| (attended as f64 / days as f64 * 10_000.0).round() / 10_000.0),
        }
    }
}

/// A range's bounds, an open side replaced by a date before or after any record.
fn bounds(from: Option<NaiveDate>, to: Option<NaiveDate>) -> (NaiveDate, NaiveDate) {
    let first = NaiveDate::from_ymd_opt(1, 1, 1).unwrap_or_default();
    let last = NaiveDate::from_ymd_opt(9999, 12, 31).unwrap_or_default();
    (from.unwrap_or(first), to.unwrap_or(last))
}

/// The attendance summary of `student` between the dates (inclusive); 404 when the
/// connection's reader may not read the student's records (a guardian of others).
pub fn summary_of(
    conn: &mut TenantConn,
    student: Uuid,
    date_from: Option<NaiveDate>,
    date_to: Option<NaiveDate>,
) -> ApiResult<AttendanceSummary> {
    if !conn.read_scope().shows_student(student) {
        return Err(crate::error::ApiError::not_found());
    }
    conn.reader().disclosed([student], "attendance_summary");
    let mut one = summaries(conn, &[student], date_from, date_to)?;
    Ok(one.remove(&student).unwrap_or_else(|| {
        AttendanceSummary::of_counts(student, date_from, date_to, &HashMap::new())
    }))
}

/// The attendance summaries of each of `students` between the dates (inclusive), from
/// one query; a student without a recorded day has one of zeros.
pub fn summaries(
    conn: &mut TenantConn,
    student_ids: &[Uuid],
    date_from: Option<NaiveDate>,
    date_to: Option<NaiveDate>,
) -> ApiResult<HashMap<Uuid, AttendanceSummary>> {
    let (from, to) = bounds(date_from, date_to);
    let rows: Vec<(Uuid, String, i64)> = t::table
        .filter(t::student_id.eq_any(student_ids))
        .filter(t::is_deleted.eq(false))
        .filter(t::date.between(from, to))
        .group_by((t::student_id, t::status))
        .select((t::student_id, t::status, diesel::dsl::count_star()))
        .load(conn.pg())?;
    let mut counts: HashMap<Uuid, HashMap<String, i64>> = HashMap::new();
    for (student, status, days) in rows {
        counts.entry(student).or_default().insert(status, days);
    }
    Ok(student_ids
        .iter()
        .map(|id| {
            let days = counts.remove(id).unwrap_or_default();
            (
                *id,
                AttendanceSummary::of_counts(*id, date_from, date_to, &days),
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_counts_late_as_attended_and_is_null_without_days() {
        let id = Uuid::new_v4();
        let counts: HashMap<String, i64> =
            [("present", 5), ("late", 1), ("absent", 1), ("excused", 1)]
                .into_iter()
                .map(|(s, n)| (s.to_owned(), n))
                .collect();
        let summary = AttendanceSummary::of_counts(id, None, None, &counts);
        assert_eq!(summary.days, 8);
        assert_eq!(summary.attendance_rate, Some(0.75));
        let empty = AttendanceSummary::of_counts(id, None, None, &HashMap::new());
        assert_eq!((empty.days, empty.attendance_rate), (0, None));
    }
}
