//! Spreadsheet imports (API.md 10): rows of a sheet become records of one kind, matched by
//! natural key (a class by name, a subject by code, a student by admission number, a
//! teacher by e-mail or staff number, an enrollment by student and session, a mark by
//! student), so a row whose key exists updates that record, the others create records, and
//! nothing is ever deleted. Every row is checked before anything is written: one bad row
//! and the import writes nothing, answering every bad row with its row, column and reason.
//!
//! Each kind reads its rows into writes (`settle::Rows`), which one mechanism counts and,
//! unless a dry run, writes through the stores: a dry run classifies the rows from the
//! same reads the apply makes. Reading the file (CSV, XLSX) is HTTP's business: this
//! module takes a [`Sheet`].

mod assignments;
mod cells;
mod enrollments;
mod marks;
mod records;
mod settle;
mod teachers;

use std::collections::HashMap;

use serde::Serialize;
use uuid::Uuid;

pub use cells::Cells;
pub use marks::live_exam;

use super::{Actor, users::NamedRole};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

/// A sheet as read from a file: the header row's column names (trimmed, lower-cased) and
/// the data rows, each with the row number a spreadsheet shows (the header is row 1).
#[derive(Debug, Clone, Default)]
pub struct Sheet {
    pub columns: Vec<String>,
    pub rows: Vec<SheetRow>,
}

#[derive(Debug, Clone)]
pub struct SheetRow {
    pub number: usize,
    pub cells: Vec<String>,
}

/// One problem of one row (`column` `None`: the whole row).
#[derive(Serialize, Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
pub struct RowError {
    pub row: usize,
    pub column: Option<String>,
    pub code: &'static str,
    pub message: String,
}

/// What an import did (or, on a dry run, would do).
#[derive(Serialize, Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
pub struct Outcome {
    pub dry_run: bool,
    pub kind: String,
    pub rows: usize,
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
}

/// Why an import wrote nothing.
#[derive(Debug)]
pub enum Refusal {
    /// The header does not name the kind's columns: a sentence saying which it needs.
    Columns(String),
    /// Bad rows, every one of them.
    Rows(Vec<RowError>),
}

/// The kinds of record a sheet can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Classes,
    Subjects,
    Students,
    Teachers,
    TeacherAssignments,
    Enrollments,
    /// The marks of one exam (its id).
    Marks(Uuid),
}

/// The columns of a kind: those a file must have, those it may have, and those of which
/// it must have one at least.
pub struct Columns {
    pub required: &'static [&'static str],
    pub optional: &'static [&'static str],
    pub one_of: &'static [&'static str],
}

impl Kind {
    /// The kinds imported at `/imports/<name>/` (marks are under their exam).
    pub const FIXED: [Kind; 6] = [
        Kind::Classes,
        Kind::Subjects,
        Kind::Students,
        Kind::Teachers,
        Kind::TeacherAssignments,
        Kind::Enrollments,
    ];

    /// The kind's name: its path segment (marks: `marks`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Classes => "classes",
            Kind::Subjects => "subjects",
            Kind::Students => "students",
            Kind::Teachers => "teachers",
            Kind::TeacherAssignments => "teacher-assignments",
            Kind::Enrollments => "enrollments",
            Kind::Marks(_) => "marks",
        }
    }

    pub fn columns(self) -> Columns {
        let (required, optional, one_of): (&[&str], &[&str], &[&str]) = match self {
            Kind::Classes => (&["name"], &["level"], &[]),
            Kind::Subjects => (&["code", "name"], &[], &[]),
            Kind::Students => (
                &["admission_number", "first_name", "last_name"],
                &["academic_class"],
                &[],
            ),
            Kind::Teachers => (
                &["first_name", "last_name"],
                &["email", "phone", "staff_number"],
                &["email", "staff_number"],
            ),
            Kind::TeacherAssignments => (&["teacher", "academic_class", "subject"], &[], &[]),
            Kind::Enrollments => (
                &["student", "academic_class"],
                &["academic_session", "status"],
                &[],
            ),
            Kind::Marks(_) => (
                &["studentadmissionnumber"],
                &["mark", "symbol", "comment", "subject"],
                &[],
            ),
        };
        Columns {
            required,
            optional,
            one_of,
        }
    }

    /// What matches a row to a record, in words.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Classes => "the class's `name`",
            Kind::Subjects => "the subject's `code`",
            Kind::Students => "the student's `admission_number` (`academic_class` names a class)",
            Kind::Teachers => {
                "the teacher's `email` or `staff_number` (a new teacher's account is made with the `teacher` role and no password)"
            }
            Kind::TeacherAssignments => {
                "`teacher` (e-mail or staff number), `academic_class` (name) and `subject` (code) together"
            }
            Kind::Enrollments => {
                "`student` (admission number) and `academic_session` (id; the active session when the column is absent)"
            }
            Kind::Marks(_) => {
                "`studentadmissionnumber` (a `subject` column, if any, must hold the exam's subject code)"
            }
        }
    }

    /// The header of a template file.
    pub fn template(self) -> Vec<&'static str> {
        let Columns {
            required, optional, ..
        } = self.columns();
        required.iter().chain(optional).copied().collect()
    }
}

/// Who imports: the actor the writes name, and what the caller may do beyond the kind's
/// permissions (checked by the layer that knows the caller).
pub struct Importer<'a> {
    pub actor: Actor,
    /// Whether the caller may change the account of a user holding `roles` (a teacher's
    /// names, phone, e-mail): `Err` says why not.
    pub may_change_user: &'a dyn Fn(&[NamedRole]) -> Result<(), String>,
    /// The stored hash of an account made without a password.
    pub no_password: &'static str,
}

/// Checks the header against `kind`'s columns.
fn check_columns(kind: Kind, sheet: &Sheet) -> Result<HashMap<String, usize>, Refusal> {
    let Columns {
        required,
        optional,
        one_of,
    } = kind.columns();
    let mut index = HashMap::new();
    for (i, column) in sheet.columns.iter().enumerate() {
        if required.contains(&column.as_str()) || optional.contains(&column.as_str()) {
            index.entry(column.clone()).or_insert(i);
        }
    }
    let mut missing: Vec<String> = required
        .iter()
        .filter(|c| !index.contains_key(**c))
        .map(|c| (*c).to_owned())
        .collect();
    if !one_of.is_empty() && !one_of.iter().any(|c| index.contains_key(*c)) {
        missing.push(format!("one of {}", one_of.join(" or ")));
    }
    if missing.is_empty() {
        return Ok(index);
    }
    let found = match sheet.columns.is_empty() {
        true => "no header row".to_owned(),
        false => format!("the columns {}", sheet.columns.join(", ")),
    };
    let one_of = match one_of.is_empty() {
        true => String::new(),
        false => format!(", with one of {} at least", one_of.join(" or ")),
    };
    Err(Refusal::Columns(format!(
        "A {} file needs the columns {} (and may have {}{one_of}); this file has {found}, so it lacks {}.",
        kind.name(),
        required.join(", "),
        if optional.is_empty() {
            "no others".to_owned()
        } else {
            optional.join(", ")
        },
        missing.join(", ")
    )))
}

/// Imports `sheet` as records of `kind`: all its rows or, when one is bad, none. The
/// exam of a marks import must be live (404 otherwise).
pub fn import(
    conn: &mut TenantConn,
    kind: Kind,
    sheet: &Sheet,
    dry_run: bool,
    importer: &Importer<'_>,
) -> ApiResult<Result<Outcome, Refusal>> {
    let exam = match kind {
        Kind::Marks(exam) => Some(live_exam(conn, exam)?.ok_or_else(ApiError::not_found)?),
        _ => None,
    };
    let index = match check_columns(kind, sheet) {
        Ok(index) => index,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let rows: Vec<Cells<'_>> = (sheet.rows.iter())
        .map(|row| Cells::new(row, &index))
        .collect();
    let actor = &importer.actor;
    let counts = match kind {
        Kind::Classes => records::classes(conn, rows, dry_run, actor)?,
        Kind::Subjects => records::subjects(conn, rows, dry_run, actor)?,
        Kind::Students => records::students(conn, rows, dry_run, actor)?,
        Kind::Teachers => teachers::teachers(conn, rows, dry_run, importer)?,
        Kind::TeacherAssignments => assignments::assignments(conn, rows, dry_run, actor)?,
        Kind::Enrollments => enrollments::enrollments(conn, rows, dry_run, actor)?,
        Kind::Marks(_) => {
            let (exam, code) = exam.ok_or_else(ApiError::not_found)?;
            marks::marks(conn, rows, exam, &code, dry_run, actor)?
        }
    };
    Ok(counts.map(|(created, updated, unchanged)| Outcome {
        dry_run,
        kind: kind.name().to_owned(),
        rows: sheet.rows.len(),
        created,
        updated,
        unchanged,
    }))
}
