//! Classes (key `name`), subjects (key `code`) and students (key `admission_number`): each
//! row read, matched by natural key and classified; written through the kind's store.

use std::collections::HashMap;

use uuid::Uuid;

use super::{
    Cells,
    settle::{Counts, Keys, Named, Rows, Write, all_live},
};
use crate::{
    error::ApiResult,
    school::{
        Actor,
        classes::{ClassChanges, Classes, NewClass},
        students::{NewStudent, StudentChanges, Students},
        subjects::{NewSubject, SubjectChanges, Subjects},
    },
    tenancy::TenantConn,
};

/// The live classes by name.
pub fn class_ids(conn: &mut TenantConn) -> ApiResult<HashMap<String, Uuid>> {
    Ok(all_live::<Classes>(conn, ())?
        .into_iter()
        .map(|c| (c.name, c.id))
        .collect())
}

/// The live students by admission number.
pub fn student_ids(conn: &mut TenantConn) -> ApiResult<HashMap<String, Uuid>> {
    Ok(all_live::<Students>(conn, ())?
        .into_iter()
        .map(|s| (s.admission_number, s.id))
        .collect())
}

/// The live subjects by code.
pub fn subject_ids(conn: &mut TenantConn) -> ApiResult<HashMap<String, Uuid>> {
    Ok(all_live::<Subjects>(conn, ())?
        .into_iter()
        .map(|s| (s.code, s.id))
        .collect())
}

pub fn classes(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Counts> {
    let existing: HashMap<String, _> = all_live::<Classes>(conn, ())?
        .into_iter()
        .map(|c| (c.name.clone(), c))
        .collect();
    let mut keys = Keys::new();
    let rows = Rows::read(rows, |cells| {
        let name = cells.text("name", 255);
        let level = cells.number("level", 0, 100);
        let (Some(name), Some(level)) = (name, level) else {
            return Ok(None);
        };
        if !keys.first(cells, "name", &name, &name) {
            return Ok(None);
        }
        Ok(Some(match existing.get(&name) {
            Some(class) => {
                let same = !cells.has("level") || class.level == level;
                let changes = ClassChanges {
                    level: Some(level),
                    ..Default::default()
                };
                Write::<Classes>::update((), class.id, changes, same)
            }
            None => Write::Create(
                (),
                NewClass {
                    name,
                    level,
                    is_deleted: false,
                },
            ),
        }))
    })?;
    rows.settle(conn, dry_run, actor)
}

pub fn subjects(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Counts> {
    let existing: HashMap<String, _> = all_live::<Subjects>(conn, ())?
        .into_iter()
        .map(|s| (s.code.clone(), s))
        .collect();
    let mut keys = Keys::new();
    let rows = Rows::read(rows, |cells| {
        let code = cells.text("code", 50);
        let name = cells.text("name", 255);
        let (Some(code), Some(name)) = (code, name) else {
            return Ok(None);
        };
        if !keys.first(cells, "code", &code, &code) {
            return Ok(None);
        }
        Ok(Some(match existing.get(&code) {
            Some(subject) => {
                let same = subject.name == name;
                let changes = SubjectChanges {
                    name: Some(name),
                    ..Default::default()
                };
                Write::<Subjects>::update((), subject.id, changes, same)
            }
            None => Write::Create(
                (),
                NewSubject {
                    name,
                    code,
                    department_id: None,
                    is_deleted: false,
                },
            ),
        }))
    })?;
    rows.settle(conn, dry_run, actor)
}

pub fn students(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Counts> {
    let existing: HashMap<String, _> = all_live::<Students>(conn, ())?
        .into_iter()
        .map(|s| (s.admission_number.clone(), s))
        .collect();
    let class_ids = class_ids(conn)?;
    let classes = Named {
        what: "class",
        key: "name",
        ids: &class_ids,
    };
    let mut keys = Keys::new();
    let rows = Rows::read(rows, |cells| {
        let number = cells.text("admission_number", 50);
        let first = cells.text("first_name", 150);
        let last = cells.text("last_name", 150);
        let class = classes.cell(cells, "academic_class");
        let class_given = cells.has("academic_class");
        let (Some(number), Some(first), Some(last), Some(class)) = (number, first, last, class)
        else {
            return Ok(None);
        };
        if !keys.first(cells, "admission_number", &number, &number) {
            return Ok(None);
        }
        Ok(Some(match existing.get(&number) {
            Some(s) => {
                let changes = StudentChanges {
                    first_name: (s.first_name != first).then_some(first),
                    last_name: (s.last_name != last).then_some(last),
                    academic_class_id: (class_given && s.academic_class_id != class)
                        .then_some(class),
                    ..Default::default()
                };
                let same = changes.first_name.is_none()
                    && changes.last_name.is_none()
                    && changes.academic_class_id.is_none();
                Write::<Students>::update((), s.id, changes, same)
            }
            None => Write::Create(
                (),
                NewStudent {
                    admission_number: number,
                    first_name: first,
                    last_name: last,
                    academic_class_id: class,
                    user_id: None,
                    is_deleted: false,
                },
            ),
        }))
    })?;
    rows.settle(conn, dry_run, actor)
}
