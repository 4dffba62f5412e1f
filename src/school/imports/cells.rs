//! A row's cells by column name, and the checks of one cell that every kind uses (each
//! bad cell is reported on the row with its column, a code and a sentence).

use std::collections::HashMap;

use super::{RowError, SheetRow};

/// A row's cells by column name.
pub struct Cells<'a> {
    row: &'a SheetRow,
    index: &'a HashMap<String, usize>,
    pub(super) errors: Vec<RowError>,
}

impl<'a> Cells<'a> {
    pub fn new(row: &'a SheetRow, index: &'a HashMap<String, usize>) -> Self {
        Self {
            row,
            index,
            errors: Vec::new(),
        }
    }

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

    /// A problem of the whole row (`column` null).
    pub fn whole_row_error(&mut self, code: &'static str, message: impl Into<String>) {
        self.errors.push(RowError {
            row: self.row.number,
            column: None,
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
                let range = match (min, max) {
                    (i32::MIN, i32::MAX) => String::new(),
                    _ => format!(" from {min} to {max}"),
                };
                let message = format!("expected a whole number{range}, found \"{raw}\"");
                self.error(column, "invalid", message);
                None
            }
        }
    }

    pub fn row(&self) -> usize {
        self.row.number
    }
}
