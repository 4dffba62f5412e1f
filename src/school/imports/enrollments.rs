//! Enrollments (key: the student, by admission number, and the academic session, by id;
//! the active session when the file has no `academic_session` column): one live
//! enrollment per student and session, as the enrollments API keeps it.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::{
    Cells,
    records::{class_ids, student_ids},
    settle::{Counts, Keys, Named, Rows, Write, all_live},
};
use crate::{
    error::ApiResult,
    school::{
        Actor,
        enrollments::{ACTIVE, EnrollmentChanges, Enrollments, NewEnrollment, STATUSES},
        sessions::Sessions,
    },
    tenancy::TenantConn,
};

/// The academic session a row names: the id in its cell, or the active session when the
/// file has no such column.
fn session_of(cells: &mut Cells<'_>, live: &HashSet<Uuid>, active: Option<Uuid>) -> Option<Uuid> {
    const COLUMN: &str = "academic_session";
    if !cells.has(COLUMN) {
        if active.is_none() {
            cells.whole_row_error(
                "no_active_session",
                "the school has no active session: name one in an academic_session column",
            );
        }
        return active;
    }
    let raw = cells.text(COLUMN, 36)?;
    match Uuid::parse_str(&raw) {
        Ok(id) if live.contains(&id) => Some(id),
        Ok(_) => {
            let message = format!("no live academic session has the id {raw}");
            cells.error(COLUMN, "unknown_reference", message);
            None
        }
        Err(_) => {
            let message = format!("expected an academic session's id, found \"{raw}\"");
            cells.error(COLUMN, "invalid", message);
            None
        }
    }
}

/// The status a row gives (`Some(None)`: the column is absent or the cell empty).
fn status_of(cells: &mut Cells<'_>) -> Option<Option<String>> {
    let Some(status) = cells.get("status") else {
        return Some(None);
    };
    let status = status.to_lowercase();
    if STATUSES.contains(&status.as_str()) {
        return Some(Some(status));
    }
    let message = format!(
        "expected one of {}, found \"{status}\"",
        STATUSES.join(", ")
    );
    cells.error("status", "invalid", message);
    None
}

pub fn enrollments(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Counts> {
    let (student_ids, class_ids) = (student_ids(conn)?, class_ids(conn)?);
    let students = Named {
        what: "student",
        key: "admission number",
        ids: &student_ids,
    };
    let classes = Named {
        what: "class",
        key: "name",
        ids: &class_ids,
    };
    let sessions: HashSet<Uuid> = all_live::<Sessions>(conn, ())?
        .into_iter()
        .map(|s| s.id)
        .collect();
    let active = Sessions::active_id(conn)?;
    let existing: HashMap<(Uuid, Uuid), _> = all_live::<Enrollments>(conn, ())?
        .into_iter()
        .map(|e| ((e.student_id, e.academic_session_id), e))
        .collect();
    let mut keys = Keys::new();
    let rows = Rows::read(rows, |cells| {
        let student = students.required(cells, "student");
        let class = classes.required(cells, "academic_class");
        let session = session_of(cells, &sessions, active);
        let status = status_of(cells);
        let (Some(student), Some(class), Some(session), Some(status)) =
            (student, class, session, status)
        else {
            return Ok(None);
        };
        let number = cells.get("student").unwrap_or_default();
        let key = format!("{student}/{session}");
        if !keys.first(cells, "student", &key, number) {
            return Ok(None);
        }
        Ok(Some(match existing.get(&(student, session)) {
            Some(e) => {
                let changes = EnrollmentChanges {
                    academic_class_id: (e.academic_class_id != class).then_some(class),
                    status: status.filter(|s| *s != e.status),
                    ..Default::default()
                };
                let same = changes.academic_class_id.is_none() && changes.status.is_none();
                Write::<Enrollments>::update((), e.id, changes, same)
            }
            None => Write::Create(
                (),
                NewEnrollment {
                    student_id: student,
                    academic_class_id: class,
                    academic_session_id: session,
                    status: status.unwrap_or_else(|| ACTIVE.to_owned()),
                    is_deleted: false,
                },
            ),
        }))
    })?;
    rows.settle(conn, dry_run, actor)
}
