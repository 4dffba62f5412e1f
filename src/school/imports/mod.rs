//! Spreadsheet imports (API.md 10): rows of a sheet become records of one kind, matched by
//! natural key (a class by name, a subject by code, a student by admission number), so a
//! row whose key exists updates that record, the others create records, and nothing is
//! ever deleted. Every row is checked before anything is written: one bad row and the
//! import writes nothing, answering every bad row with its row, column and reason.
//!
//! A dry run classifies the rows (created, updated, unchanged) from the same reads the
//! apply makes, and writes nothing; the apply writes each record through its store.
//! Reading the file (CSV, XLSX) is HTTP's business: this module takes a [`Sheet`].

mod kinds;

use std::collections::HashMap;

use serde::Serialize;

use super::{Actor, ListQuery, Store};
use crate::{error::ApiResult, tenancy::TenantConn};

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
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Classes, Kind::Subjects, Kind::Students];

    /// The path segment naming the kind.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Classes => "classes",
            Kind::Subjects => "subjects",
            Kind::Students => "students",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The columns a file of this kind must have, then those it may have.
    pub fn columns(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Kind::Classes => (&["name"], &["level"]),
            Kind::Subjects => (&["code", "name"], &[]),
            Kind::Students => (
                &["admission_number", "first_name", "last_name"],
                &["academic_class"],
            ),
        }
    }

    /// The header of a template file.
    pub fn template(self) -> Vec<&'static str> {
        let (required, optional) = self.columns();
        required.iter().chain(optional).copied().collect()
    }
}

/// A row's cells by column name.
pub struct Cells<'a> {
    row: &'a SheetRow,
    index: &'a HashMap<String, usize>,
    errors: Vec<RowError>,
}

impl<'a> Cells<'a> {
    /// Whether the sheet has the column at all (an absent optional column changes nothing).
    pub fn has(&self, column: &str) -> bool {
        self.index.contains_key(column)
    }

    /// The trimmed cell, `None` when empty or the column is absent.
    pub fn get(&self, column: &str) -> Option<&'a str> {
        let cell = self.row.cells.get(*self.index.get(column)?)?.trim();
        (!cell.is_empty()).then_some(cell)
    }

    pub fn error(&mut self, column: &str, code: &'static str, message: impl Into<String>) {
        self.errors.push(RowError {
            row: self.row.number,
            column: Some(column.to_owned()),
            code,
            message: message.into(),
        });
    }

    /// A required text of 1 to `max` characters.
    pub fn text(&mut self, column: &str, max: usize) -> Option<String> {
        match self.get(column) {
            None => {
                self.error(column, "required", "this cell must not be empty");
                None
            }
            Some(text) if text.chars().count() > max => {
                self.error(column, "too_long", format!("at most {max} characters"));
                None
            }
            Some(text) => Some(text.to_owned()),
        }
    }

    /// An optional whole number in `min..=max` (`Some(None)`: empty).
    pub fn number(&mut self, column: &str, min: i32, max: i32) -> Option<Option<i32>> {
        let Some(raw) = self.get(column) else {
            return Some(None);
        };
        match raw.parse::<i32>() {
            Ok(n) if (min..=max).contains(&n) => Some(Some(n)),
            _ => {
                self.error(
                    column,
                    "invalid",
                    format!("expected a whole number from {min} to {max}, found \"{raw}\""),
                );
                None
            }
        }
    }

    pub fn row(&self) -> usize {
        self.row.number
    }
}

/// Every live record of a store (imports match against all of them).
fn all_live<S: Store<Parent = ()>>(conn: &mut TenantConn) -> ApiResult<Vec<S::Record>> {
    let everything = ListQuery {
        page: 1,
        page_size: i64::from(i32::MAX),
        include_deleted: false,
        search: None,
        filter: Default::default(),
    };
    Ok(S::list(conn, (), &everything)?.1)
}

/// Checks the header against `kind`'s columns.
fn check_columns(kind: Kind, sheet: &Sheet) -> Result<HashMap<String, usize>, Refusal> {
    let (required, optional) = kind.columns();
    let mut index = HashMap::new();
    for (i, column) in sheet.columns.iter().enumerate() {
        if required.contains(&column.as_str()) || optional.contains(&column.as_str()) {
            index.entry(column.clone()).or_insert(i);
        }
    }
    let missing: Vec<&str> = required
        .iter()
        .filter(|c| !index.contains_key(**c))
        .copied()
        .collect();
    if missing.is_empty() {
        return Ok(index);
    }
    let found = match sheet.columns.is_empty() {
        true => "no header row".to_owned(),
        false => format!("the columns {}", sheet.columns.join(", ")),
    };
    Err(Refusal::Columns(format!(
        "A {} file needs the columns {} (and may have {}); this file has {found}, so it lacks {}.",
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

/// Imports `sheet` as records of `kind`: all its rows or, when one is bad, none.
pub fn import(
    conn: &mut TenantConn,
    kind: Kind,
    sheet: &Sheet,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Result<Outcome, Refusal>> {
    let index = match check_columns(kind, sheet) {
        Ok(index) => index,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let rows: Vec<Cells<'_>> = sheet
        .rows
        .iter()
        .map(|row| Cells {
            row,
            index: &index,
            errors: Vec::new(),
        })
        .collect();
    let counts = match kind {
        Kind::Classes => kinds::classes(conn, rows, dry_run, actor)?,
        Kind::Subjects => kinds::subjects(conn, rows, dry_run, actor)?,
        Kind::Students => kinds::students(conn, rows, dry_run, actor)?,
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
