//! The gradebook as OneRoster 1.2 reads it: a line item is an exam, a result is a mark
//! (one gradebook, not two). Reads join what OneRoster adds (`line_items`, `result_ids`,
//! `gradebook_categories`) to the school's exams and marks; the writes are in
//! `gradebook_writes.rs`.

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
use crate::{
    error::ApiResult,
    school::{Store, academic_settings::Academic},
    tenancy::TenantConn,
};

fn gradebook_ref(p: &Provider, collection: &str, id: &str, kind: &str) -> Value {
    p.reference("gradebook", collection, id, kind)
}

fn roster_ref(p: &Provider, collection: &str, id: &str, kind: &str) -> Value {
    p.reference("rostering", collection, id, kind)
}

/// The columns the query below selects, in order.
type CategoryRow = (String, String, Option<String>, bool, DateTime<Utc>);

/// Categories (school-wide).
pub fn categories(_: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let rows: Vec<CategoryRow> = categories::table
        .order((categories::created_at, categories::id))
        .select((
            categories::sourced_id,
            categories::title,
            categories::weight,
            categories::is_deleted,
            categories::updated_at,
        ))
        .load(conn.pg())?;
    Ok(rows
        .into_iter()
        .map(|(sid, title, weight, deleted, at)| {
            let mut e = head(&sid, deleted, at);
            e.insert("title".into(), json!(title));
            e.insert("weight".into(), number(weight.as_deref()));
            e
        })
        .collect())
}

/// A decimal kept as text, as a JSON number (`null` when absent).
fn number(text: Option<&str>) -> Value {
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

/// Line items: the school's exams.
pub fn line_items(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let rows: Vec<LineItemRow> = exams::table
        .inner_join(exam_sessions::table)
        .left_join(line_items::table)
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
    let rows: Vec<ResultRow> = marks::table
        .inner_join(exams::table)
        .left_join(result_ids::table)
        .left_join(line_items::table.on(line_items::exam_id.eq(marks::exam_id)))
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
    for (id, number, deleted) in students::table
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

/// Score scales: one per class, from the school's grading scale (academic settings).
pub fn score_scales(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let oldest = crate::school::ListQuery {
        page: 1,
        page_size: 1,
        include_deleted: false,
        search: None,
        params: HashMap::new(),
    };
    let settings = Academic::list(conn, (), &oldest)?.1;
    let Some(settings) = settings.into_iter().next() else {
        return Ok(Vec::new());
    };
    let values: Vec<Value> = settings
        .grading_scale
        .0
        .iter()
        .map(|band| json!({"itemValueLHS": band.symbol, "itemValueRHS": format!("{}-{}", band.min, band.max)}))
        .collect();
    Ok(super::roster::sections(conn)?
        .into_iter()
        .map(|s| {
            let class = class_sourced_id(s.class, s.subject);
            let mut e = head(
                &format!("{class}.scale"),
                !s.live,
                s.modified.max(settings.updated_at),
            );
            e.insert("title".into(), json!("Grading scale"));
            e.insert("type".into(), json!("grading scale"));
            e.insert("class".into(), roster_ref(p, "classes", &class, "class"));
            e.insert(
                "course".into(),
                roster_ref(p, "courses", &s.subject.to_string(), "course"),
            );
            e.insert("scoreScaleValue".into(), json!(values));
            e
        })
        .collect())
}
