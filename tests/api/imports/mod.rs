//! Spreadsheet imports (API.md 10): classes, subjects and students, enrollments and marks,
//! teachers and their assignments.

mod marks;
pub(crate) mod spreadsheets;
mod teachers;
