//! The gradebook as OneRoster 1.2 reads it: a line item is an exam, a result is a mark
//! (one gradebook, not two). Reads join what OneRoster adds (`line_items`, `result_ids`,
//! `gradebook_categories`) to the school's exams and marks; categories and score scales
//! are in `categories.rs`, the writes in `gradebook_writes.rs`.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{
    super::schema::{
        exam_sessions, exams, gradebook_categories as categories, line_items, marks, result_ids,
        students,
    },
    roster::{Entity, GRADING_PERIOD_SUFFIX, Provider, class_sourced_id, head, timestamp},
};
use crate::{error::ApiResult, tenancy::TenantConn};

fn gradebook_ref(p: &Provider, collection: &str, id: &str, kind: &str) -> Value {
    p.reference("gradebook", collection, id, kind)
}

pub(super) fn roster_ref(p: &Provider, collection: &str, id: &str, kind: &str) -> Value {
    p.reference("rostering", collection, id, kind)
}

/// A decimal kept as text, as a JSON number (`null` when absent).
pub(super) fn number(text: Option<&str>) -> Value {
    text.and_then(|t| t.parse::<serde_json::Number>().ok())
        .map_or(Value::Null, Value::Number)
}

type LineItemRow = (
    (
        Uuid,
        Uuid,
        String,
        Uuid,
        Uuid,
        i32,
        bool,
        DateTime<Utc>,
        DateTime<Utc>,
    ),
    Option<(
        String,
        Option<Uuid>,
        Option<String>,
        Option<DateTime<Utc>>,
        Option<DateTime<Utc>>,
        Option<String>,
        Option<String>,
    )>,
    (bool, Option<DateTime<Utc>>),
);

/// Which records a read needs: all of them, or those of one exam (its line item, its
/// results) or of one mark (its result). A single read or a class's results for one line
/// item then reads a few rows, not the school's gradebook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Only {
    All,
    Exam(Uuid),
    Mark(Uuid),
}

/// The exam a line item sourcedId names (the client's sourcedId, else the exam id),
/// live or not; the record read must still carry that sourcedId.
pub fn exam_named(conn: &mut TenantConn, sid: &str) -> ApiResult<Option<Uuid>> {
    let by_sid: Option<Uuid> = line_items::table
        .filter(line_items::sourced_id.eq(sid))
        .select(line_items::exam_id)
        .first(conn.pg())
        .optional()?;
    Ok(by_sid.or_else(|| Uuid::parse_str(sid).ok()))
}

/// The mark a result sourcedId names (the client's sourcedId, else the mark id).
pub fn mark_named(conn: &mut TenantConn, sid: &str) -> ApiResult<Option<Uuid>> {
    let by_sid: Option<Uuid> = result_ids::table
        .filter(result_ids::sourced_id.eq(sid))
        .select(result_ids::mark_id)
        .first(conn.pg())
        .optional()?;
    Ok(by_sid.or_else(|| Uuid::parse_str(sid).ok()))
}

/// Line items: the school's exams.
pub fn line_items(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    line_items_of(p, conn, Only::All)
}

/// The line items `only` names (an exam's; a mark names none).
pub fn line_items_of(p: &Provider, conn: &mut TenantConn, only: Only) -> ApiResult<Vec<Entity>> {
    let mut query = exams::table
        .inner_join(exam_sessions::table)
        .left_join(line_items::table)
        .into_boxed();
    match only {
        Only::All => {}
        Only::Exam(id) => query = query.filter(exams::id.eq(id)),
        Only::Mark(_) => return Ok(Vec::new()),
    }
    let rows: Vec<LineItemRow> = query
        .order((exams::created_at, exams::id))
        .select((
            (
                exams::id,
                exams::exam_session_id,
                exams::name,
                exams::subject_id,
                exams::academic_class_id,
                exams::max_mark,
                exams::is_deleted,
                exams::created_at,
                exams::updated_at,
            ),
            (
                line_items::sourced_id,
                line_items::category_id,
                line_items::description,
                line_items::assign_date,
                line_items::due_date,
                line_items::result_value_min,
                line_items::result_value_max,
            )
                .nullable(),
            (exam_sessions::is_deleted, exam_sessions::end_date),
        ))
        .load(conn.pg())?;
    let category_sids: HashMap<Uuid, String> = categories::table
        .select((categories::id, categories::sourced_id))
        .load::<(Uuid, String)>(conn.pg())?
        .into_iter()
        .collect();
    let default_category = "exam".to_owned();
    Ok(rows
        .into_iter()
        .map(
            |(
                (id, term, name, subject, class, max_mark, deleted, created, modified),
                extra,
                (term_deleted, term_end),
            )| {
                let sid = extra
                    .as_ref()
                    .map_or_else(|| id.to_string(), |e| e.0.clone());
                let mut e = head(&sid, deleted || term_deleted, modified);
                let extra = extra.map(|e| (e.1, e.2, e.3, e.4, e.5, e.6));
                let (category, description, assign, due, min, max) = extra.unwrap_or_default();
                let category = category
                    .and_then(|c| category_sids.get(&c))
                    .unwrap_or(&default_category);
                let term = term.to_string();
                e.insert("title".into(), json!(name));
                e.insert("description".into(), json!(description.unwrap_or_default()));
                e.insert(
                    "assignDate".into(),
                    json!(timestamp(assign.unwrap_or(created))),
                );
                e.insert(
                    "dueDate".into(),
                    json!(timestamp(due.or(term_end).unwrap_or(created))),
                );
                e.insert(
                    "class".into(),
                    roster_ref(p, "classes", &class_sourced_id(class, subject), "class"),
                );
                e.insert("school".into(), p.org_ref());
                e.insert(
                    "category".into(),
                    gradebook_ref(p, "categories", category, "category"),
                );
                e.insert(
                    "gradingPeriod".into(),
                    roster_ref(
                        p,
                        "academicSessions",
                        &format!("{term}{GRADING_PERIOD_SUFFIX}"),
                        "academicSession",
                    ),
                );
                e.insert(
                    "academicSession".into(),
                    roster_ref(p, "academicSessions", &term, "academicSession"),
                );
                e.insert("scoreScale".into(), Value::Null);
                e.insert(
                    "resultValueMin".into(),
                    number(Some(min.as_deref().unwrap_or("0"))),
                );
                e.insert(
                    "resultValueMax".into(),
                    number(Some(&max.unwrap_or_else(|| max_mark.to_string()))),
                );
                e
            },
        )
        .collect())
}

type ResultRow = (
    (
        Uuid,
        Uuid,
        String,
        Option<i32>,
        Option<String>,
        Option<String>,
        bool,
        DateTime<Utc>,
    ),
    (
        Option<String>,
        Option<String>,
        Option<NaiveDate>,
        Option<String>,
    ),
    (Uuid, Uuid, bool),
    Option<String>,
    Option<String>,
);

/// Results: the marks of the school's exams.
pub fn results(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    results_of(p, conn, Only::All)
}

/// The results `only` names: every mark, an exam's marks, or one mark.
pub fn results_of(p: &Provider, conn: &mut TenantConn, only: Only) -> ApiResult<Vec<Entity>> {
    let mut query = marks::table
        .inner_join(exams::table)
        .left_join(result_ids::table)
        .left_join(line_items::table.on(line_items::exam_id.eq(marks::exam_id)))
        .into_boxed();
    match only {
        Only::All => {}
        Only::Exam(id) => query = query.filter(marks::exam_id.eq(id)),
        Only::Mark(id) => query = query.filter(marks::id.eq(id)),
    }
    let rows: Vec<ResultRow> = query
        .order((marks::created_at, marks::id))
        .select((
            (
                marks::id,
                marks::exam_id,
                marks::studentadmissionnumber,
                marks::mark,
                marks::symbol,
                marks::comment,
                marks::is_deleted,
                marks::updated_at,
            ),
            (
                marks::score,
                marks::score_status,
                marks::score_date,
                marks::text_score,
            ),
            (
                exams::academic_class_id,
                exams::subject_id,
                exams::is_deleted,
            ),
            result_ids::sourced_id.nullable(),
            line_items::sourced_id.nullable(),
        ))
        .load(conn.pg())?;
    // A mark names its student by admission number: the live student's, else the latest.
    let mut student_of: HashMap<String, (Uuid, bool)> = HashMap::new();
    let mut students = students::table.into_boxed();
    if only != Only::All {
        // The marks' students only; compared as plain text, since `=`/`IN` on the column
        // lets the planner pick its trigram index (`students_search`), costly here.
        let numbers: Vec<&String> = rows.iter().map(|row| &row.0.2).collect();
        students = students.filter(
            diesel::dsl::sql::<diesel::sql_types::Text>("admission_number || ''").eq_any(numbers),
        );
    }
    for (id, number, deleted) in students
        .order(students::created_at)
        .select((
            students::id,
            students::admission_number,
            students::is_deleted,
        ))
        .load::<(Uuid, String, bool)>(conn.pg())?
    {
        if student_of.get(&number).is_none_or(|(_, d)| *d) {
            student_of.insert(number, (id, deleted));
        }
    }
    Ok(rows
        .into_iter()
        .filter_map(
            |(
                (id, exam, admission, mark, symbol, comment, deleted, at),
                (score, status, date, text),
                (class, subject, exam_deleted),
                sid,
                item_sid,
            )| {
                let student = student_of.get(&admission)?.0;
                let sid = sid.unwrap_or_else(|| id.to_string());
                let mut e = head(&sid, deleted || exam_deleted, at);
                let score = score.or_else(|| mark.map(|m| m.to_string()));
                let status = status.unwrap_or_else(|| match score {
                    Some(_) => "fully graded".into(),
                    None => "not submitted".into(),
                });
                let item = item_sid.unwrap_or_else(|| exam.to_string());
                e.insert(
                    "lineItem".into(),
                    gradebook_ref(p, "lineItems", &item, "lineItem"),
                );
                e.insert(
                    "student".into(),
                    roster_ref(p, "users", &student.to_string(), "user"),
                );
                e.insert(
                    "class".into(),
                    roster_ref(p, "classes", &class_sourced_id(class, subject), "class"),
                );
                e.insert("scoreScale".into(), Value::Null);
                e.insert("scoreStatus".into(), json!(status));
                e.insert("score".into(), number(score.as_deref()));
                e.insert(
                    "textScore".into(),
                    json!(text.or(symbol).unwrap_or_default()),
                );
                e.insert(
                    "scoreDate".into(),
                    json!(
                        date.map_or_else(|| at.format("%Y-%m-%d").to_string(), |d| d.to_string())
                    ),
                );
                e.insert("comment".into(), json!(comment.unwrap_or_default()));
                Some(e)
            },
        )
        .collect())
}
