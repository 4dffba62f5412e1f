//! The demo school year (`school-service demo`): sessions, terms, departments, subjects,
//! classes, students, assignments, term-1 exams with marks, grade comments and settings,
//! written by one SQL script (`demo.sql`) in one transaction. It inserts rows directly,
//! independent of the CRUD layer, and only into a school that has no academic session yet,
//! so running it again changes nothing.

use diesel::{connection::SimpleConnection, prelude::*};

use super::schema::academic_sessions;
use crate::{error::ApiResult, tenancy::TenantConn};

/// The shape of one demo school. The school's users (teachers with profiles, and
/// `student@<mail>`) must exist before `fill` runs.
pub struct DemoSchool {
    pub name: &'static str,
    /// The e-mail domain of the school's users (`greenwood.test`).
    pub mail: &'static str,
    /// Admission numbers and staff numbers start with it (`GW`).
    pub prefix: &'static str,
    pub address: &'static str,
    /// (name, code, department name)
    pub subjects: &'static [(&'static str, &'static str, &'static str)],
    /// (name, code of the department's own subject)
    pub departments: &'static [(&'static str, &'static str)],
    /// (name, level, number of students)
    pub classes: &'static [(&'static str, i32, i32)],
}

/// Fills the school with its demo year, unless it already has an academic session.
/// Answers whether it wrote anything.
pub fn fill(conn: &mut TenantConn, school: &DemoSchool) -> ApiResult<bool> {
    let has_sessions: bool = diesel::select(diesel::dsl::exists(
        academic_sessions::table.select(academic_sessions::id),
    ))
    .get_result(conn.pg())?;
    if has_sessions {
        return Ok(false);
    }
    let script = render(school);
    conn.transaction(|conn| conn.pg().batch_execute(&script))?;
    Ok(true)
}

/// The script with the school's values in place (every text value quoted as a literal).
fn render(school: &DemoSchool) -> String {
    let subjects = rows(
        school
            .subjects
            .iter()
            .enumerate()
            .map(|(i, (name, code, dept))| {
                format!(
                    "({}, {}, {}, {})",
                    i + 1,
                    quote(name),
                    quote(code),
                    quote(dept)
                )
            }),
    );
    let departments = rows(
        (school.departments.iter().enumerate())
            .map(|(i, (name, code))| format!("({}, {}, {})", i + 1, quote(name), quote(code))),
    );
    let classes = rows(
        (school.classes.iter().enumerate()).map(|(i, (name, level, size))| {
            format!("({}, {}, {level}, {size})", i + 1, quote(name))
        }),
    );
    include_str!("demo.sql")
        .replace("{{SUBJECTS}}", &subjects)
        .replace("{{DEPARTMENTS}}", &departments)
        .replace("{{CLASSES}}", &classes)
        .replace("'{{NAME}}'", &quote(school.name))
        .replace("{{NAME}}", &school.name.replace('\'', "''"))
        .replace("'{{ADDRESS}}'", &quote(school.address))
        .replace("{{MAIL}}", &school.mail.replace('\'', "''"))
        .replace("{{PREFIX}}", &school.prefix.replace('\'', "''"))
}

fn rows(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

pub const GREENWOOD: DemoSchool = DemoSchool {
    name: "Greenwood High",
    mail: "greenwood.test",
    prefix: "GW",
    address: "12 Elm Road, Greenwood",
    subjects: &[
        ("Mathematics", "MATH", "Sciences"),
        ("Physics", "PHY", "Sciences"),
        ("Chemistry", "CHEM", "Sciences"),
        ("Biology", "BIO", "Sciences"),
        ("English", "ENG", "Languages"),
        ("French", "FRE", "Languages"),
        ("History", "HIST", "Humanities"),
        ("Geography", "GEO", "Humanities"),
    ],
    departments: &[
        ("Sciences", "MATH"),
        ("Languages", "ENG"),
        ("Humanities", "HIST"),
    ],
    classes: &[
        ("Form 1 Blue", 1, 40),
        ("Form 1 Green", 1, 30),
        ("Form 2 Blue", 2, 25),
        ("Form 2 Green", 2, 25),
    ],
};

pub const RIVERSIDE: DemoSchool = DemoSchool {
    name: "Riverside Academy",
    mail: "riverside.test",
    prefix: "RA",
    address: "3 Quay Street, Riverside",
    subjects: &[
        ("Mathematics", "MATH", "Sciences"),
        ("Science", "SCI", "Sciences"),
        ("English", "ENG", "Languages"),
        ("History", "HIST", "Humanities"),
    ],
    departments: &[
        ("Sciences", "MATH"),
        ("Languages", "ENG"),
        ("Humanities", "HIST"),
    ],
    classes: &[("Year 7", 1, 18), ("Year 8", 2, 16)],
};
