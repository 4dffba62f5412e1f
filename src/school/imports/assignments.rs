//! Teacher assignments (key: teacher, class and subject together; a teacher named by the
//! e-mail of their account or their staff number, a class by name, a subject by code).
//! An assignment is its key: a row creates one or finds it.

use std::collections::{HashMap, HashSet};

use diesel::prelude::*;
use uuid::Uuid;

use super::{
    Cells,
    records::{class_ids, subject_ids},
    settle::{Counts, Keys, Named, Rows, Write, all_live},
    teachers::profiles,
};
use crate::{
    db::schema_public::users,
    error::ApiResult,
    school::{
        Actor,
        assignments::{Assignments, NewAssignment},
    },
    tenancy::TenantConn,
};

/// The live teacher profiles by the lower-cased e-mail of their account and by staff number
/// (`None`: two teachers share it).
struct TeacherIds {
    by_email: HashMap<String, Uuid>,
    by_staff: HashMap<String, Option<Uuid>>,
}

fn teacher_ids(conn: &mut TenantConn) -> ApiResult<TeacherIds> {
    let profiles = profiles(conn)?;
    let ids: Vec<Uuid> = profiles.iter().map(|p| p.user_id).collect();
    let emails: HashMap<Uuid, String> = users::table
        .filter(users::id.eq_any(&ids))
        .filter(users::email.is_not_null())
        .select((users::id, users::email.assume_not_null()))
        .load::<(Uuid, String)>(conn.pg())?
        .into_iter()
        .collect();
    let mut by_email = HashMap::new();
    let mut by_staff: HashMap<String, Option<Uuid>> = HashMap::new();
    for p in profiles {
        if let Some(email) = emails.get(&p.user_id) {
            by_email.insert(email.to_lowercase(), p.id);
        }
        if let Some(number) = p.staff_number {
            by_staff
                .entry(number)
                .and_modify(|seen| *seen = None)
                .or_insert(Some(p.id));
        }
    }
    Ok(TeacherIds { by_email, by_staff })
}

/// The teacher a cell names: by e-mail when it holds an `@`, else by staff number.
fn teacher_named(cells: &mut Cells<'_>, teachers: &TeacherIds) -> Option<Uuid> {
    const COLUMN: &str = "teacher";
    let Some(key) = cells.get(COLUMN) else {
        cells.error(COLUMN, "required", "this cell must not be empty");
        return None;
    };
    let found = match key.contains('@') {
        true => (teachers.by_email.get(&key.to_lowercase()).copied()).map(Some),
        false => teachers.by_staff.get(key).copied(),
    };
    match found {
        Some(Some(id)) => Some(id),
        Some(None) => {
            let message = format!("several teachers have the staff number \"{key}\"");
            cells.error(COLUMN, "ambiguous", message);
            None
        }
        None => {
            let message = format!("no live teacher has the e-mail or staff number \"{key}\"");
            cells.error(COLUMN, "unknown_reference", message);
            None
        }
    }
}

pub fn assignments(
    conn: &mut TenantConn,
    rows: Vec<Cells<'_>>,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<Counts> {
    let teachers = teacher_ids(conn)?;
    let (class_ids, subject_ids) = (class_ids(conn)?, subject_ids(conn)?);
    let classes = Named {
        what: "class",
        key: "name",
        ids: &class_ids,
    };
    let subjects = Named {
        what: "subject",
        key: "code",
        ids: &subject_ids,
    };
    let existing: HashSet<(Uuid, Uuid, Uuid)> = all_live::<Assignments>(conn, ())?
        .into_iter()
        .map(|a| (a.teacher_id, a.academic_class_id, a.subject_id))
        .collect();
    let mut keys = Keys::new();
    let rows = Rows::read(rows, |cells| {
        let teacher = teacher_named(cells, &teachers);
        let class = classes.required(cells, "academic_class");
        let subject = subjects.required(cells, "subject");
        let (Some(teacher), Some(class), Some(subject)) = (teacher, class, subject) else {
            return Ok(None);
        };
        let key = format!("{teacher}/{class}/{subject}");
        if !keys.first(cells, "teacher", &key, "this assignment") {
            return Ok(None);
        }
        Ok(Some(match existing.contains(&(teacher, class, subject)) {
            true => Write::<Assignments>::Unchanged,
            false => Write::Create(
                (),
                NewAssignment {
                    teacher_id: teacher,
                    academic_class_id: class,
                    subject_id: subject,
                    is_deleted: false,
                },
            ),
        }))
    })?;
    rows.settle(conn, dry_run, actor)
}
