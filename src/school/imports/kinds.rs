//! Each kind's rows: parsed, matched by natural key, classified, then (unless a dry run)
//! written through the kind's store.

use std::collections::HashMap;

use uuid::Uuid;

use super::{Cells, Refusal, RowError, all_live};
use crate::{
    error::ApiResult,
    school::{
        Actor, Store, Target,
        classes::{ClassChanges, Classes, NewClass},
        students::{NewStudent, StudentChanges, Students},
        subjects::{NewSubject, SubjectChanges, Subjects},
    },
    tenancy::TenantConn,
};

/// What one row does.
enum Write<New, Changes> {
    Create(New),
    Update(Uuid, Changes),
    Unchanged,
}

/// (created, updated, unchanged), or the bad rows.
type Counts = Result<(usize, usize, usize), Refusal>;

/// Keeps the first row of each natural key; a later one is a bad row.
struct Keys(HashMap<String, usize>);

impl Keys {
    fn new() -> Self {
        Self(HashMap::new())
    }

    fn first(&mut self, cells: &mut Cells<'_>, column: &str, key: &str) -> bool {
        match self.0.get(key) {
            Some(row) => {
                let message = format!("\"{key}\" is also on row {row}");
                cells.error(column, "duplicate_key", message);
                false
            }
            None => {
                self.0.insert(key.to_owned(), cells.row());
                true
            }
        }
    }
}

/// Counts the writes or, when any row was bad, answers every bad row; then (unless a dry
/// run, and only when every row was good) writes them with `write`.
fn settle<New, Changes>(
    conn: &mut TenantConn,
    errors: Vec<RowError>,
    writes: Vec<Write<New, Changes>>,
    dry_run: bool,
    mut write: impl FnMut(&mut TenantConn, Write<New, Changes>) -> ApiResult<()>,
) -> ApiResult<Counts> {
    if !errors.is_empty() {
        return Ok(Err(Refusal::Rows(errors)));
    }
    let mut counts = (0, 0, 0);
    for w in &writes {
        match w {
            Write::Create(_) => counts.0 += 1,
            Write::Update(..) => counts.1 += 1,
            Write::Unchanged => counts.2 += 1,
        }
    }
    if !dry_run {
        for w in writes {
            write(conn, w)?;
        }
    }
    Ok(Ok(counts))
}

/// The live class named `name`, or a bad cell.
fn class_named(
    cells: &mut Cells<'_>,
    classes: &HashMap<String, Uuid>,
    column: &str,
) -> Option<Option<Uuid>> {
    let Some(name) = cells.get(column) else {
        return Some(None);
    };
    match classes.get(name) {
        Some(id) => Some(Some(*id)),
        None => {
            cells.error(
                column,
                "unknown_reference",
                format!("no live class is named \"{name}\""),
            );
            None
        }
    }
}

pub fn classes(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Counts> {
    let existing: HashMap<String, _> = all_live::<Classes>(conn)?
        .into_iter()
        .map(|c| (c.name.clone(), c))
        .collect();
    let (mut errors, mut writes, mut keys) = (Vec::new(), Vec::new(), Keys::new());
    for mut cells in rows {
        let name = cells.text("name", 255);
        let level = cells.number("level", 0, 100);
        if let (Some(name), Some(level)) = (name, level) {
            if keys.first(&mut cells, "name", &name) {
                writes.push(match existing.get(&name) {
                    Some(class) if !cells.has("level") || class.level == level => Write::Unchanged,
                    Some(class) => Write::Update(
                        class.id,
                        ClassChanges {
                            level: Some(level),
                            ..Default::default()
                        },
                    ),
                    None => Write::Create(NewClass {
                        name,
                        level,
                        is_deleted: false,
                    }),
                });
            }
        }
        errors.append(&mut cells.errors);
    }
    settle(conn, errors, writes, dry_run, |conn, w| {
        match w {
            Write::Create(new) => drop(Classes::create(conn, (), new, actor)?),
            Write::Update(id, changes) => {
                drop(Classes::update(conn, Target::live((), id), changes, actor)?)
            }
            Write::Unchanged => {}
        }
        Ok(())
    })
}

pub fn subjects(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Counts> {
    let existing: HashMap<String, _> = all_live::<Subjects>(conn)?
        .into_iter()
        .map(|s| (s.code.clone(), s))
        .collect();
    let (mut errors, mut writes, mut keys) = (Vec::new(), Vec::new(), Keys::new());
    for mut cells in rows {
        let code = cells.text("code", 50);
        let name = cells.text("name", 255);
        if let (Some(code), Some(name)) = (code, name) {
            if keys.first(&mut cells, "code", &code) {
                writes.push(match existing.get(&code) {
                    Some(subject) if subject.name == name => Write::Unchanged,
                    Some(subject) => Write::Update(
                        subject.id,
                        SubjectChanges {
                            name: Some(name),
                            ..Default::default()
                        },
                    ),
                    None => Write::Create(NewSubject {
                        name,
                        code,
                        department_id: None,
                        is_deleted: false,
                    }),
                });
            }
        }
        errors.append(&mut cells.errors);
    }
    settle(conn, errors, writes, dry_run, |conn, w| {
        match w {
            Write::Create(new) => drop(Subjects::create(conn, (), new, actor)?),
            Write::Update(id, changes) => drop(Subjects::update(
                conn,
                Target::live((), id),
                changes,
                actor,
            )?),
            Write::Unchanged => {}
        }
        Ok(())
    })
}

pub fn students(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Counts> {
    let existing: HashMap<String, _> = all_live::<Students>(conn)?
        .into_iter()
        .map(|s| (s.admission_number.clone(), s))
        .collect();
    let classes: HashMap<String, Uuid> = all_live::<Classes>(conn)?
        .into_iter()
        .map(|c| (c.name, c.id))
        .collect();
    let (mut errors, mut writes, mut keys) = (Vec::new(), Vec::new(), Keys::new());
    for mut cells in rows {
        let number = cells.text("admission_number", 50);
        let first = cells.text("first_name", 150);
        let last = cells.text("last_name", 150);
        let class = class_named(&mut cells, &classes, "academic_class");
        let class_given = cells.has("academic_class");
        if let (Some(number), Some(first), Some(last), Some(class)) = (number, first, last, class) {
            if keys.first(&mut cells, "admission_number", &number) {
                writes.push(match existing.get(&number) {
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
                        match same {
                            true => Write::Unchanged,
                            false => Write::Update(s.id, changes),
                        }
                    }
                    None => Write::Create(NewStudent {
                        admission_number: number,
                        first_name: first,
                        last_name: last,
                        academic_class_id: class,
                        user_id: None,
                        is_deleted: false,
                    }),
                });
            }
        }
        errors.append(&mut cells.errors);
    }
    settle(conn, errors, writes, dry_run, |conn, w| {
        match w {
            Write::Create(new) => drop(Students::create(conn, (), new, actor)?),
            Write::Update(id, changes) => drop(Students::update(
                conn,
                Target::live((), id),
                changes,
                actor,
            )?),
            Write::Unchanged => {}
        }
        Ok(())
    })
}
