//! Marks of an exam: one live mark per admission number.

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, Store, Target, Targets,
    exams::Exams,
    schema::marks as t,
    table::{school_forms, school_table},
};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Mark {
    pub id: Uuid,
    #[serde(rename = "exam")]
    pub exam_id: Uuid,
    pub studentadmissionnumber: String,
    pub mark: Option<i32>,
    pub symbol: Option<String>,
    pub comment: Option<String>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The exact decimal score (OneRoster's `score`), which may exceed the exam's
    /// `max_mark` (extra credit); `mark` holds it rounded to a whole number.
    #[serde(serialize_with = "decimal_number")]
    #[schema(value_type = Option<f64>)]
    pub score: Option<String>,
    /// OneRoster's `scoreStatus`: exempt, fully graded, not submitted, partially graded,
    /// submitted.
    #[schema(max_length = 16)]
    pub score_status: Option<String>,
    pub score_date: Option<NaiveDate>,
    #[schema(max_length = 255)]
    pub text_score: Option<String>,
}

/// The `text_score` of a mark recorded as "absent" (without a value): the marks sheet writes
/// it with `score_status` "not submitted", and a report card prints "absent".
pub const ABSENT: &str = "absent";

/// The values of `score_status` (OneRoster 1.2's ScoreStatusEnum).
pub const SCORE_STATUSES: &[&str] = &[
    "exempt",
    "fully graded",
    "not submitted",
    "partially graded",
    "submitted",
];

/// A decimal kept as its canonical text, answered as a JSON number.
fn decimal_number<S: serde::Serializer>(value: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match value.as_deref().map(str::parse::<serde_json::Number>) {
        Some(Ok(number)) => number.serialize(s),
        _ => s.serialize_none(),
    }
}

/// The canonical text of a decimal score (no exponent, no trailing zeros), or `None` for
/// a value that is not a finite number.
pub fn canonical_decimal(value: f64) -> Option<String> {
    value.is_finite().then(|| format!("{value}"))
}

/// The whole mark of a decimal score, half away from zero, within the mark column's range.
pub fn whole_mark(score: &str) -> Option<i32> {
    let value: f64 = score.parse().ok()?;
    Some(
        value
            .round()
            .clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32,
    )
}

school_forms!(t: NewMark, MarkChanges {
    studentadmissionnumber: String,
    mark: Option<i32>,
    symbol: Option<String>,
    comment: Option<String>,
    is_deleted: bool,
    score: Option<String>,
    score_status: Option<String>,
    score_date: Option<NaiveDate>,
    text_score: Option<String>,
});

/// Marks, under an exam.
pub struct Marks;

school_table!(Marks: Mark in t, new: NewMark, changes: MarkChanges, search: [studentadmissionnumber],
    soft_delete: is_deleted, parent: exam_id in Exams);

impl Store for Marks {
    type Record = Mark;

    const STUDENT_RECORD: Option<&'static str> = Some("mark");

    /// Marks name their student by admission number: the students (live or not) that
    /// hold those numbers.
    fn students_in(conn: &mut TenantConn, records: &[Mark]) -> ApiResult<Vec<Uuid>> {
        use super::schema::students;
        let numbers: Vec<&str> = records
            .iter()
            .map(|m| m.studentadmissionnumber.as_str())
            .collect();
        Ok(students::table
            .filter(students::admission_number.eq_any(numbers))
            .select(students::id)
            .load(conn.pg())?)
    }

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::marks(children)
    }

    const NAME: &'static str = "mark";
    const KEEPS_HISTORY: bool = true;

    /// The student each mark names by admission number: the live one, else the newest
    /// (one query).
    fn students_of(conn: &mut TenantConn, records: &[&Mark]) -> ApiResult<Vec<Option<Uuid>>> {
        use super::schema::students as s;
        let numbers: Vec<String> = (records.iter())
            .map(|r| r.studentadmissionnumber.clone())
            .collect();
        // Newest-preferred last, so the map keeps it.
        let rows: Vec<(String, Uuid)> = s::table
            .filter(s::admission_number.eq_any(numbers))
            .order((s::is_deleted.desc(), s::created_at))
            .select((s::admission_number, s::id))
            .load(conn.pg())?;
        let by_number: std::collections::HashMap<String, Uuid> = rows.into_iter().collect();
        Ok((records.iter())
            .map(|r| by_number.get(&r.studentadmissionnumber).copied())
            .collect())
    }

    fn before_create(_: &mut TenantConn, _: Uuid, news: &mut [NewMark]) -> ApiResult<()> {
        news.iter_mut().for_each(agree);
        Ok(())
    }

    fn before_replace(_: &mut TenantConn, _: Target<Uuid>, new: &mut NewMark) -> ApiResult<()> {
        agree(new);
        Ok(())
    }

    fn before_update(
        _: &mut TenantConn,
        _: &Targets<Uuid>,
        changes: &mut MarkChanges,
    ) -> ApiResult<()> {
        if let Some((mark, score)) = agreed(changes.mark, changes.score.take()) {
            (changes.mark, changes.score) = (mark, score);
        }
        Ok(())
    }
}

/// A created or replaced mark's whole `mark` and decimal `score`, kept saying the same
/// (see [`agreed`]).
fn agree(new: &mut NewMark) {
    match &new.score {
        Some(score) => new.mark = whole_mark(score),
        None => new.score = new.mark.map(|mark| mark.to_string()),
    }
}

/// The whole `mark` and the decimal `score` of one write, kept saying the same: a given
/// score sets the mark (rounded), a mark given alone sets the score, a score cleared
/// clears the mark. `None` when neither is given (a patch of other fields).
#[allow(clippy::type_complexity)]
fn agreed(
    mark: Option<Option<i32>>,
    score: Option<Option<String>>,
) -> Option<(Option<Option<i32>>, Option<Option<String>>)> {
    match (mark, score) {
        (_, Some(Some(score))) => Some((Some(whole_mark(&score)), Some(Some(score)))),
        (Some(mark), Some(None) | None) => Some((Some(mark), Some(mark.map(|m| m.to_string())))),
        (None, Some(None)) => Some((Some(None), Some(None))),
        (None, None) => None,
    }
}

impl Marks {
    /// Creates or updates the live mark of `number` for `exam` (confirm-students): only
    /// the given fields change on an update, fields not given are created empty.
    /// Concurrent calls for one student meet at the live unique index: the loser of the
    /// insert updates the winner's mark.
    pub fn upsert(
        conn: &mut TenantConn,
        exam: Uuid,
        number: &str,
        mut changes: MarkChanges,
        actor: &Actor,
    ) -> ApiResult<Mark> {
        changes.studentadmissionnumber = None;
        for _ in 0..3 {
            let live: Option<Uuid> = t::table
                .filter(t::exam_id.eq(exam))
                .filter(t::studentadmissionnumber.eq(number))
                .filter(t::is_deleted.eq(false))
                .select(t::id)
                .for_update()
                .first(conn.pg())
                .optional()?;
            if let Some(id) = live {
                return Self::update(conn, Target::live(exam, id), changes, actor);
            }
            let new = NewMark {
                studentadmissionnumber: number.to_owned(),
                mark: changes.mark.flatten(),
                symbol: changes.symbol.clone().flatten(),
                comment: changes.comment.clone().flatten(),
                is_deleted: changes.is_deleted.unwrap_or(false),
                score: changes.score.clone().flatten(),
                score_status: changes.score_status.clone().flatten(),
                score_date: changes.score_date.flatten(),
                text_score: changes.text_score.clone().flatten(),
            };
            if let Some(mark) = Self::create_unless_present(conn, exam, new, actor)? {
                return Ok(mark);
            }
        }
        Err(ApiError::Conflict(
            "the mark is being changed concurrently; retry".into(),
        ))
    }
}
