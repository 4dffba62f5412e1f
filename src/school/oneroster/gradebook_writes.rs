//! The gradebook's writes (OneRoster 1.2 PUT and DELETE): a line item PUT creates or
//! updates an exam, a result PUT the student's mark. Every write of an exam or a mark goes
//! through the exams' and marks' stores (`Exams::create`/`update`, `Marks::upsert`/
//! `update`), so whatever their write path does (history, events) covers the LMS's writes
//! too. Categories are OneRoster's own rows (`gradebook_categories`).

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use uuid::Uuid;

use super::{
    super::schema::{
        exam_sessions, exams, gradebook_categories as categories, line_items, marks, result_ids,
        students,
    },
    gradebook::{exam_named, mark_named},
    roster::{GRADING_PERIOD_SUFFIX, parse_class_sourced_id},
};
use crate::{
    error::{ApiError, ApiResult},
    school::{
        Actor, Store, Target,
        exams::{ExamChanges, Exams, NewExam},
        marks::{MarkChanges, Marks, whole_mark},
    },
    tenancy::TenantConn,
};

/// Creates or replaces category `sid`; answers whether it was created.
pub fn put_category(
    conn: &mut TenantConn,
    sid: &str,
    title: &str,
    weight: Option<String>,
) -> ApiResult<bool> {
    let updated = diesel::update(categories::table.filter(categories::sourced_id.eq(sid)))
        .set((
            categories::title.eq(title),
            categories::weight.eq(&weight),
            categories::is_deleted.eq(false),
            categories::updated_at.eq(diesel::dsl::now),
        ))
        .returning(categories::id)
        .get_results::<Uuid>(conn.pg())?;
    if !updated.is_empty() {
        return Ok(false);
    }
    diesel::insert_into(categories::table)
        .values((
            categories::sourced_id.eq(sid),
            categories::title.eq(title),
            categories::weight.eq(&weight),
        ))
        .execute(conn.pg())?;
    Ok(true)
}

/// Marks category `sid` deleted; `false` when there is no live one.
pub fn delete_category(conn: &mut TenantConn, sid: &str) -> ApiResult<bool> {
    let n = diesel::update(
        categories::table
            .filter(categories::sourced_id.eq(sid))
            .filter(categories::is_deleted.eq(false)),
    )
    .set((
        categories::is_deleted.eq(true),
        categories::updated_at.eq(diesel::dsl::now),
    ))
    .execute(conn.pg())?;
    Ok(n > 0)
}

/// A line item as a client PUTs it (the API layer has checked the shapes).
#[derive(Debug, Clone)]
pub struct LineItemInput {
    pub title: String,
    pub description: Option<String>,
    pub assign_date: Option<DateTime<Utc>>,
    pub due_date: Option<DateTime<Utc>>,
    pub class: String,
    pub category: Option<String>,
    /// A grading period's or a term's sourcedId.
    pub term: Option<String>,
    pub result_value_min: Option<String>,
    pub result_value_max: Option<String>,
}

/// The live exam line item `sid` names: its id and exam session.
fn exam_of(conn: &mut TenantConn, sid: &str) -> ApiResult<Option<(Uuid, Uuid)>> {
    let Some(id) = exam_named(conn, sid)? else {
        return Ok(None);
    };
    Ok(exams::table
        .filter(exams::id.eq(id))
        .filter(exams::is_deleted.eq(false))
        .select((exams::id, exams::exam_session_id))
        .first(conn.pg())
        .optional()?)
}

fn invalid(field: &str, message: &str) -> ApiError {
    ApiError::validation(field, message)
}

/// Creates or updates line item `sid` as an exam; answers whether it was created.
pub fn put_line_item(
    conn: &mut TenantConn,
    sid: &str,
    input: LineItemInput,
    actor: &Actor,
) -> ApiResult<bool> {
    let (class, subject) = parse_class_sourced_id(&input.class)
        .ok_or_else(|| invalid("class", "not a class sourcedId of this school"))?;
    let category = match &input.category {
        Some(c) => categories::table
            .filter(categories::sourced_id.eq(c))
            .filter(categories::is_deleted.eq(false))
            .select(categories::id)
            .first::<Uuid>(conn.pg())
            .optional()?
            .ok_or_else(|| invalid("category", "no such category"))?,
        None => categories::table
            .filter(categories::is_deleted.eq(false))
            .order(categories::created_at)
            .select(categories::id)
            .first::<Uuid>(conn.pg())?,
    };
    let max_mark = match &input.result_value_max {
        Some(max) => whole_mark(max).unwrap_or(100).clamp(1, 1000),
        None => 100,
    };
    let existing = exam_of(conn, sid)?;
    let created = existing.is_none();
    let exam = match existing {
        Some((id, term)) => {
            let changes = ExamChanges {
                name: Some(input.title.clone()),
                subject_id: Some(subject),
                academic_class_id: Some(class),
                max_mark: Some(max_mark),
                ..ExamChanges::default()
            };
            Exams::update(conn, Target::live(term, id), changes, actor)?.id
        }
        None => {
            let term = term_of(conn, input.term.as_deref())?;
            let new = NewExam {
                name: input.title.clone(),
                subject_id: subject,
                academic_class_id: class,
                teacher_id: None,
                max_mark,
                is_deleted: false,
            };
            Exams::create(conn, term, new, actor)?.id
        }
    };
    diesel::delete(
        line_items::table.filter(
            line_items::sourced_id
                .eq(sid)
                .or(line_items::exam_id.eq(exam)),
        ),
    )
    .execute(conn.pg())?;
    diesel::insert_into(line_items::table)
        .values((
            line_items::exam_id.eq(exam),
            line_items::sourced_id.eq(sid),
            line_items::category_id.eq(category),
            line_items::description.eq(&input.description),
            line_items::assign_date.eq(input.assign_date),
            line_items::due_date.eq(input.due_date),
            line_items::result_value_min.eq(&input.result_value_min),
            line_items::result_value_max.eq(&input.result_value_max),
        ))
        .execute(conn.pg())?;
    Ok(created)
}

/// The exam session a new line item goes in: the term (or grading period) named, else the
/// latest term of the active school year.
fn term_of(conn: &mut TenantConn, named: Option<&str>) -> ApiResult<Uuid> {
    let live = exam_sessions::table.filter(exam_sessions::is_deleted.eq(false));
    match named {
        Some(sid) => {
            let id = Uuid::parse_str(sid.strip_suffix(GRADING_PERIOD_SUFFIX).unwrap_or(sid))
                .map_err(|_| invalid("gradingPeriod", "not a grading period of this school"))?;
            live.filter(exam_sessions::id.eq(id))
                .select(exam_sessions::id)
                .first(conn.pg())
                .optional()?
                .ok_or_else(|| invalid("gradingPeriod", "not a grading period of this school"))
        }
        None => live
            .inner_join(super::super::schema::academic_sessions::table)
            .filter(super::super::schema::academic_sessions::is_active.eq(true))
            .order(exam_sessions::created_at.desc())
            .select(exam_sessions::id)
            .first(conn.pg())
            .optional()?
            .ok_or_else(|| invalid("gradingPeriod", "required: the school has no current term")),
    }
}

/// Deletes line item `sid` (soft-deletes the exam); `false` when there is no live one.
pub fn delete_line_item(conn: &mut TenantConn, sid: &str, actor: &Actor) -> ApiResult<bool> {
    let Some((id, term)) = exam_of(conn, sid)? else {
        return Ok(false);
    };
    let changes = ExamChanges {
        is_deleted: Some(true),
        ..ExamChanges::default()
    };
    Exams::update(conn, Target::live(term, id), changes, actor)?;
    Ok(true)
}

/// A result as a client PUTs it.
#[derive(Debug, Clone)]
pub struct ResultInput {
    pub line_item: String,
    pub student: Uuid,
    pub score_status: String,
    /// Canonical decimal text.
    pub score: Option<String>,
    pub text_score: Option<String>,
    pub score_date: Option<NaiveDate>,
    pub comment: Option<String>,
}

/// The live mark result `sid` names: (mark, exam).
fn mark_of(conn: &mut TenantConn, sid: &str) -> ApiResult<Option<(Uuid, Uuid)>> {
    let Some(id) = mark_named(conn, sid)? else {
        return Ok(None);
    };
    Ok(marks::table
        .filter(marks::id.eq(id))
        .filter(marks::is_deleted.eq(false))
        .select((marks::id, marks::exam_id))
        .first(conn.pg())
        .optional()?)
}

/// Creates or updates result `sid` as the mark of its student for its line item's exam;
/// answers whether the result was created.
pub fn put_result(
    conn: &mut TenantConn,
    sid: &str,
    input: ResultInput,
    actor: &Actor,
) -> ApiResult<bool> {
    let (exam, _) =
        exam_of(conn, &input.line_item)?.ok_or_else(|| invalid("lineItem", "no such line item"))?;
    let number: String = students::table
        .filter(students::id.eq(input.student))
        .filter(students::is_deleted.eq(false))
        .select(students::admission_number)
        .first(conn.pg())
        .optional()?
        .ok_or_else(|| invalid("student", "no such student"))?;
    let existing = mark_of(conn, sid)?;
    let changes = MarkChanges {
        comment: Some(input.comment),
        score: Some(input.score),
        score_status: Some(Some(input.score_status)),
        score_date: Some(input.score_date),
        text_score: Some(input.text_score),
        is_deleted: Some(false),
        ..MarkChanges::default()
    };
    // The result moved to another line item or student: the old mark goes.
    if let Some((mark, old_exam)) = existing {
        let same: bool = marks::table
            .filter(marks::id.eq(mark))
            .filter(marks::exam_id.eq(exam))
            .filter(marks::studentadmissionnumber.eq(&number))
            .count()
            .get_result::<i64>(conn.pg())?
            > 0;
        if !same {
            let gone = MarkChanges {
                is_deleted: Some(true),
                ..MarkChanges::default()
            };
            Marks::update(conn, Target::live(old_exam, mark), gone, actor)?;
        }
    }
    let mark = Marks::upsert(conn, exam, &number, changes, actor)?;
    diesel::delete(
        result_ids::table.filter(
            result_ids::sourced_id
                .eq(sid)
                .or(result_ids::mark_id.eq(mark.id)),
        ),
    )
    .execute(conn.pg())?;
    diesel::insert_into(result_ids::table)
        .values((
            result_ids::mark_id.eq(mark.id),
            result_ids::sourced_id.eq(sid),
        ))
        .execute(conn.pg())?;
    Ok(existing.is_none())
}

/// Deletes result `sid` (soft-deletes the mark); `false` when there is no live one.
pub fn delete_result(conn: &mut TenantConn, sid: &str, actor: &Actor) -> ApiResult<bool> {
    let Some((mark, exam)) = mark_of(conn, sid)? else {
        return Ok(false);
    };
    let changes = MarkChanges {
        is_deleted: Some(true),
        ..MarkChanges::default()
    };
    Marks::update(conn, Target::live(exam, mark), changes, actor)?;
    Ok(true)
}
