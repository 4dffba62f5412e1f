//! OneRoster 1.2 users (students and teachers) and enrollments (a teacher assignment; a
//! student of a class, in each subject the class is taught).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{
    super::schema::{students, teacher_profiles},
    roster::{Entity, Provider, class_sourced_id, head, sections},
};
use crate::{db::schema_public::users, error::ApiResult, tenancy::TenantConn};

type StudentRow = (
    Uuid,
    String,
    String,
    String,
    Option<Uuid>,
    Option<Uuid>,
    bool,
    DateTime<Utc>,
);
type PersonRow = (Uuid, Option<String>, Option<String>, String, String, bool);

/// The students, or those changed at or after `since` (a delta sync's bound).
fn student_rows(conn: &mut TenantConn, since: Option<DateTime<Utc>>) -> ApiResult<Vec<StudentRow>> {
    let mut rows = students::table.into_boxed();
    if let Some(since) = since {
        rows = rows.filter(students::updated_at.ge(since));
    }
    Ok(rows
        .order((students::created_at, students::id))
        .select((
            students::id,
            students::admission_number,
            students::first_name,
            students::last_name,
            students::academic_class_id,
            students::user_id,
            students::is_deleted,
            students::updated_at,
        ))
        .load(conn.pg())?)
}

fn people(conn: &mut TenantConn, ids: Vec<Uuid>) -> ApiResult<HashMap<Uuid, PersonRow>> {
    Ok(users::table
        .filter(users::id.eq_any(ids))
        .select((
            users::id,
            users::email,
            users::phone,
            users::first_name,
            users::last_name,
            users::is_active,
        ))
        .load::<PersonRow>(conn.pg())?
        .into_iter()
        .map(|row| (row.0, row))
        .collect())
}

/// The columns the query below selects, in order.
type TeacherRow = (Uuid, Uuid, Option<String>, bool, DateTime<Utc>);

/// Users: students (role `student`) and teachers (role `teacher`).
pub fn users(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    users_of(p, conn, None)
}

/// The users whose `dateLastModified` is at or after `since`, and no others: what a delta
/// sync (`filter=dateLastModified>'...'`) reads, without reading the rest.
pub fn users_changed_since(
    p: &Provider,
    conn: &mut TenantConn,
    since: DateTime<Utc>,
) -> ApiResult<Vec<Entity>> {
    users_of(p, conn, Some(since))
}

fn users_of(
    p: &Provider,
    conn: &mut TenantConn,
    since: Option<DateTime<Utc>>,
) -> ApiResult<Vec<Entity>> {
    let students = student_rows(conn, since)?;
    let mut teachers = teacher_profiles::table.into_boxed();
    if let Some(since) = since {
        teachers = teachers.filter(teacher_profiles::updated_at.ge(since));
    }
    let teachers: Vec<TeacherRow> = teachers
        .order((teacher_profiles::created_at, teacher_profiles::id))
        .select((
            teacher_profiles::id,
            teacher_profiles::user_id,
            teacher_profiles::staff_number,
            teacher_profiles::is_deleted,
            teacher_profiles::updated_at,
        ))
        .load(conn.pg())?;
    let ids = (students.iter().filter_map(|s| s.5))
        .chain(teachers.iter().map(|t| t.1))
        .collect();
    let people = people(conn, ids)?;
    let user = |id: Uuid, deleted: bool, at: DateTime<Utc>, role: &str| {
        let mut e = head(&id.to_string(), deleted, at);
        e.insert("userMasterIdentifier".into(), json!(""));
        e.insert("enabledUser".into(), json!(!deleted));
        e.insert("middleName".into(), json!(""));
        e.insert(
            "roles".into(),
            json!([{"roleType": "primary", "role": role, "org": p.org_ref()}]),
        );
        e.insert("primaryOrg".into(), p.org_ref());
        e.insert("agents".into(), json!([]));
        e.insert("grades".into(), json!([]));
        e.insert("sms".into(), json!(""));
        e
    };
    let mut out = Vec::with_capacity(students.len() + teachers.len());
    for (id, number, first, last, _, user_id, deleted, at) in students {
        let person = user_id.and_then(|u| people.get(&u));
        let mut e = user(id, deleted, at, "student");
        let email = person.and_then(|p| p.1.clone()).unwrap_or_default();
        e.insert("username".into(), json!(number));
        e.insert(
            "userIds".into(),
            json!([{"type": "admission_number", "identifier": number}]),
        );
        e.insert("givenName".into(), json!(first));
        e.insert("familyName".into(), json!(last));
        e.insert("identifier".into(), json!(number));
        e.insert("email".into(), json!(email));
        e.insert(
            "phone".into(),
            json!(person.and_then(|p| p.2.clone()).unwrap_or_default()),
        );
        out.push(e);
    }
    for (id, user_id, staff_number, deleted, at) in teachers {
        let person = people.get(&user_id);
        let modified = at;
        let deleted = deleted || person.is_none_or(|p| !p.5);
        let mut e = user(id, deleted, modified, "teacher");
        let email = person.and_then(|p| p.1.clone()).unwrap_or_default();
        let number = staff_number.unwrap_or_default();
        let username = if email.is_empty() {
            number.clone()
        } else {
            email.clone()
        };
        e.insert("username".into(), json!(username));
        e.insert(
            "userIds".into(),
            json!([{"type": "staff_number", "identifier": number}]),
        );
        e.insert(
            "givenName".into(),
            json!(person.map(|p| p.3.clone()).unwrap_or_default()),
        );
        e.insert(
            "familyName".into(),
            json!(person.map(|p| p.4.clone()).unwrap_or_default()),
        );
        e.insert("identifier".into(), json!(number));
        e.insert("email".into(), json!(email));
        e.insert(
            "phone".into(),
            json!(person.and_then(|p| p.2.clone()).unwrap_or_default()),
        );
        out.push(e);
    }
    Ok(out)
}

/// Enrollments: each teacher assignment (role `teacher`, sourcedId the assignment's id)
/// and each student of a class in each of its subjects (sourcedId
/// `<student>.<class>.<subject>`).
pub fn enrollments(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let sections = sections(conn)?;
    let students = student_rows(conn, None)?;
    let mut out = Vec::new();
    let enrollment =
        |sid: &str, deleted: bool, at: DateTime<Utc>, user: Value, class: &str, role: &str| {
            let mut e = head(sid, deleted, at);
            e.insert("user".into(), user);
            e.insert(
                "class".into(),
                p.reference("rostering", "classes", class, "class"),
            );
            e.insert("school".into(), p.org_ref());
            e.insert("role".into(), json!(role));
            e.insert("primary".into(), json!(role == "teacher"));
            e.insert("beginDate".into(), Value::Null);
            e.insert("endDate".into(), Value::Null);
            e
        };
    for section in &sections {
        let class = class_sourced_id(section.class, section.subject);
        for (id, teacher, deleted, at) in &section.teachers {
            let user = p.reference("rostering", "users", &teacher.to_string(), "user");
            let deleted = *deleted || !section.live;
            out.push(enrollment(
                &id.to_string(),
                deleted,
                *at,
                user,
                &class,
                "teacher",
            ));
        }
        for student in students.iter().filter(|s| s.4 == Some(section.class)) {
            let sid = format!("{}.{class}", student.0);
            let user = p.reference("rostering", "users", &student.0.to_string(), "user");
            let deleted = student.6 || !section.live;
            let at = student.7.max(section.modified);
            out.push(enrollment(&sid, deleted, at, user, &class, "student"));
        }
    }
    Ok(out)
}
