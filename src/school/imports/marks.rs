//! One exam's marks (key: the student's admission number; one live mark per student of
//! the exam), checked as the marks API checks them: the admission number a live
//! student's, `mark` a whole number, `symbol` up to 255 characters, `comment` up to 10,000.
//! A `subject` column, when the file has one, must name the exam's subject by code, so a
//! sheet of another subject's marks is refused.

use std::collections::HashMap;

use diesel::prelude::*;
use uuid::Uuid;

use super::{
    Cells,
    records::student_ids,
    settle::{Counts, Keys, Rows, Write, all_live},
};
use crate::{
    error::ApiResult,
    school::{
        Actor,
        marks::{MarkChanges, Marks, NewMark},
        schema::{academic_sessions, exam_sessions, exams, subjects},
    },
    tenancy::TenantConn,
};

/// The live exam `id` (under a live exam session of a live academic session), with its
/// subject's code; `None` when there is none.
pub fn live_exam(conn: &mut TenantConn, id: Uuid) -> ApiResult<Option<(Uuid, String)>> {
    Ok(exams::table
        .inner_join(exam_sessions::table.inner_join(academic_sessions::table))
        .inner_join(subjects::table)
        .filter(exams::id.eq(id))
        .filter(exams::is_deleted.eq(false))
        .filter(exam_sessions::is_deleted.eq(false))
        .filter(academic_sessions::is_deleted.eq(false))
        .select((exams::id, subjects::code))
        .first(conn.pg())
        .optional()?)
}

/// An optional text of at most `max` characters (`Some(None)`: empty).
fn optional_text(cells: &mut Cells<'_>, column: &str, max: usize) -> Option<Option<String>> {
    match cells.get(column) {
        None => Some(None),
        Some(text) if text.chars().count() > max => {
            cells.error(column, "too_long", format!("at most {max} characters"));
            None
        }
        Some(text) => Some(Some(text.to_owned())),
    }
}

/// The exam's subject, when the file names one: it must be the exam's.
fn check_subject(cells: &mut Cells<'_>, code: &str) {
    if let Some(given) = cells.get("subject") {
        if given != code {
            let message = format!("this exam's subject is {code}, not \"{given}\"");
            cells.error("subject", "wrong_exam", message);
        }
    }
}

pub fn marks(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    exam: Uuid,
    subject_code: &str,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Counts> {
    let students = student_ids(conn)?;
    let existing: HashMap<String, _> = all_live::<Marks>(conn, exam)?
        .into_iter()
        .map(|m| (m.studentadmissionnumber.clone(), m))
        .collect();
    let mut keys = Keys::new();
    let rows = Rows::read(rows, |cells| {
        const NUMBER: &str = "studentadmissionnumber";
        let number = cells.text(NUMBER, 255);
        if let Some(number) = &number {
            if !students.contains_key(number) {
                let message = format!("no live student has the admission number \"{number}\"");
                cells.error(NUMBER, "unknown_reference", message);
            }
        }
        let mark = cells.number("mark", i32::MIN, i32::MAX);
        let symbol = optional_text(cells, "symbol", 255);
        let comment = optional_text(cells, "comment", 10_000);
        check_subject(cells, subject_code);
        let (Some(number), Some(mark), Some(symbol), Some(comment)) =
            (number, mark, symbol, comment)
        else {
            return Ok(None);
        };
        if !keys.first(cells, NUMBER, &number, &number) {
            return Ok(None);
        }
        let given = |column: &str| cells.has(column);
        let (has_mark, has_symbol, has_comment) =
            (given("mark"), given("symbol"), given("comment"));
        Ok(Some(match existing.get(&number) {
            Some(m) => {
                let changes = MarkChanges {
                    mark: (has_mark && m.mark != mark).then_some(mark),
                    symbol: (has_symbol && m.symbol != symbol).then_some(symbol),
                    comment: (has_comment && m.comment != comment).then_some(comment),
                    ..Default::default()
                };
                let same =
                    changes.mark.is_none() && changes.symbol.is_none() && changes.comment.is_none();
                Write::<Marks>::update(exam, m.id, changes, same)
            }
            None => Write::Create(
                exam,
                NewMark {
                    studentadmissionnumber: number,
                    mark,
                    symbol,
                    comment,
                    is_deleted: false,
                    score: None,
                    score_status: None,
                    score_date: None,
                    text_score: None,
                },
            ),
        }))
    })?;
    rows.settle(conn, dry_run, actor)
}
