//! The school's records as OneRoster 1.2 rostering entities (the mapping is in
//! `docs/oneroster.md`). Each collection is read whole from the school's tables, deleted
//! records included (as `status: tobedeleted`, for delta syncs); the API layer filters,
//! sorts and pages them. sourcedIds are the records' own UUIDs, so they are stable across
//! calls, restarts and a school's export and import; the entities made of two records
//! (a class is a class taught a subject) join their ids with a `.`.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Datelike, Utc};
use diesel::prelude::*;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::super::schema::{
    academic_classes, academic_sessions, exam_sessions, exams, students, subjects,
    teacher_assignments, teacher_profiles,
};
use crate::{db::schema_public::users, error::ApiResult, tenancy::TenantConn};

/// One OneRoster record: its JSON object, sourcedId, status and dateLastModified included.
pub type Entity = Map<String, Value>;

/// Where a school's OneRoster records point to: the base of hrefs
/// (`http://<school address>/ims/oneroster`) and the school itself (the one org).
#[derive(Clone, Debug)]
pub struct Provider {
    pub base: String,
    pub org_id: Uuid,
    pub org_name: String,
}

impl Provider {
    /// A GUIDRef: `{href, sourcedId, type}`.
    pub fn reference(&self, service: &str, collection: &str, id: &str, kind: &str) -> Value {
        json!({
            "href": format!("{}/{service}/v1p2/{collection}/{id}", self.base),
            "sourcedId": id,
            "type": kind,
        })
    }

    pub fn org_ref(&self) -> Value {
        self.reference("rostering", "orgs", &self.org_id.to_string(), "org")
    }
}

/// The common head of every record.
pub fn head(id: &str, deleted: bool, modified: DateTime<Utc>) -> Entity {
    let mut entity = Map::new();
    entity.insert("sourcedId".into(), json!(id));
    entity.insert(
        "status".into(),
        json!(if deleted { "tobedeleted" } else { "active" }),
    );
    entity.insert("dateLastModified".into(), json!(timestamp(modified)));
    entity
}

/// `2026-11-21T10:00:00.000Z`.
pub fn timestamp(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

fn date(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d").to_string()
}

/// The grading period of an exam session (its term) has the term's id and this suffix.
pub const GRADING_PERIOD_SUFFIX: &str = ".gp";

/// The sourcedId of the class that is `class` taught `subject`.
pub fn class_sourced_id(class: Uuid, subject: Uuid) -> String {
    format!("{class}.{subject}")
}

/// The class and subject a class sourcedId names, if it is one.
pub fn parse_class_sourced_id(id: &str) -> Option<(Uuid, Uuid)> {
    let (class, subject) = id.split_once('.')?;
    Some((Uuid::parse_str(class).ok()?, Uuid::parse_str(subject).ok()?))
}

type SessionRow = (
    Uuid,
    String,
    DateTime<Utc>,
    DateTime<Utc>,
    bool,
    bool,
    DateTime<Utc>,
);
type TermRow = (
    Uuid,
    Uuid,
    String,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    bool,
    DateTime<Utc>,
);

/// The org (the school itself).
pub fn orgs(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let modified: Option<DateTime<Utc>> = academic_sessions::table
        .select(diesel::dsl::min(academic_sessions::created_at))
        .first(conn.pg())?;
    let mut org = head(&p.org_id.to_string(), false, modified.unwrap_or_default());
    org.insert("name".into(), json!(p.org_name));
    org.insert("type".into(), json!("school"));
    org.insert("identifier".into(), json!(""));
    org.insert("parent".into(), Value::Null);
    org.insert("children".into(), json!([]));
    Ok(vec![org])
}

/// School years (academic sessions), terms (exam sessions) and one grading period per term.
pub fn academic_sessions(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let years: Vec<SessionRow> = academic_sessions::table
        .order((academic_sessions::start_date, academic_sessions::id))
        .select((
            academic_sessions::id,
            academic_sessions::name,
            academic_sessions::start_date,
            academic_sessions::end_date,
            academic_sessions::is_active,
            academic_sessions::is_deleted,
            academic_sessions::updated_at,
        ))
        .load(conn.pg())?;
    let terms: Vec<TermRow> = exam_sessions::table
        .order((exam_sessions::created_at, exam_sessions::id))
        .select((
            exam_sessions::id,
            exam_sessions::academic_session_id,
            exam_sessions::name,
            exam_sessions::start_date,
            exam_sessions::end_date,
            exam_sessions::is_deleted,
            exam_sessions::updated_at,
        ))
        .load(conn.pg())?;
    let year_of: HashMap<Uuid, &SessionRow> = years.iter().map(|y| (y.0, y)).collect();
    let session_ref =
        |id: &str| p.reference("rostering", "academicSessions", id, "academicSession");
    let mut out = Vec::new();
    for year in &years {
        let (id, name, start, end, _, deleted, modified) = year;
        let mut e = head(&id.to_string(), *deleted, *modified);
        e.insert("title".into(), json!(name));
        e.insert("startDate".into(), json!(date(*start)));
        e.insert("endDate".into(), json!(date(*end)));
        e.insert("type".into(), json!("schoolYear"));
        e.insert("parent".into(), Value::Null);
        let children: Vec<Value> = terms
            .iter()
            .filter(|t| t.1 == *id)
            .map(|t| session_ref(&t.0.to_string()))
            .collect();
        e.insert("children".into(), json!(children));
        e.insert("schoolYear".into(), json!(end.year().to_string()));
        e.insert("org".into(), p.org_ref());
        out.push(e);
    }
    for (id, year_id, name, start, end, deleted, modified) in &terms {
        let Some(year) = year_of.get(year_id) else {
            continue;
        };
        let deleted = *deleted || year.5;
        let (start, end) = (start.unwrap_or(year.2), end.unwrap_or(year.3));
        let term_id = id.to_string();
        let period_id = format!("{term_id}{GRADING_PERIOD_SUFFIX}");
        for (sid, title, kind, parent, children) in [
            (
                &term_id,
                name.clone(),
                "term",
                year_id.to_string(),
                vec![session_ref(&period_id)],
            ),
            (
                &period_id,
                format!("{name} grading period"),
                "gradingPeriod",
                term_id.clone(),
                vec![],
            ),
        ] {
            let mut e = head(sid, deleted, *modified);
            e.insert("title".into(), json!(title));
            e.insert("startDate".into(), json!(date(start)));
            e.insert("endDate".into(), json!(date(end)));
            e.insert("type".into(), json!(kind));
            e.insert("parent".into(), session_ref(&parent));
            e.insert("children".into(), json!(children));
            e.insert("schoolYear".into(), json!(year.3.year().to_string()));
            e.insert("org".into(), p.org_ref());
            out.push(e);
        }
    }
    Ok(out)
}

/// The terms a class runs in: the live exam sessions of the active school year (of every
/// school year when none is active).
fn current_terms(conn: &mut TenantConn) -> ApiResult<(Option<Uuid>, Vec<Uuid>)> {
    let active: Option<Uuid> = academic_sessions::table
        .filter(academic_sessions::is_active.eq(true))
        .filter(academic_sessions::is_deleted.eq(false))
        .select(academic_sessions::id)
        .first(conn.pg())
        .optional()?;
    let mut query = exam_sessions::table
        .filter(exam_sessions::is_deleted.eq(false))
        .order((exam_sessions::created_at, exam_sessions::id))
        .select(exam_sessions::id)
        .into_boxed();
    if let Some(active) = active {
        query = query.filter(exam_sessions::academic_session_id.eq(active));
    }
    Ok((active, query.load(conn.pg())?))
}

type SubjectRow = (Uuid, String, String, bool, DateTime<Utc>);

fn subject_rows(conn: &mut TenantConn) -> ApiResult<Vec<SubjectRow>> {
    Ok(subjects::table
        .order((subjects::created_at, subjects::id))
        .select((
            subjects::id,
            subjects::name,
            subjects::code,
            subjects::is_deleted,
            subjects::updated_at,
        ))
        .load(conn.pg())?)
}

/// Courses: the school's subjects.
pub fn courses(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let (year, _) = current_terms(conn)?;
    Ok(subject_rows(conn)?
        .into_iter()
        .map(|(id, name, code, deleted, modified)| {
            let mut e = head(&id.to_string(), deleted, modified);
            e.insert("title".into(), json!(name));
            e.insert(
                "schoolYear".into(),
                year.map_or(Value::Null, |y| {
                    p.reference(
                        "rostering",
                        "academicSessions",
                        &y.to_string(),
                        "academicSession",
                    )
                }),
            );
            e.insert("courseCode".into(), json!(code));
            e.insert("grades".into(), json!([]));
            e.insert("subjects".into(), json!([name]));
            e.insert("subjectCodes".into(), json!([]));
            e.insert("org".into(), p.org_ref());
            e
        })
        .collect())
}

/// A class taught a subject: the unit OneRoster calls a class.
#[derive(Debug, Clone)]
pub struct Section {
    pub class: Uuid,
    pub subject: Uuid,
    pub live: bool,
    pub modified: DateTime<Utc>,
    /// Live teacher assignments: (assignment id, teacher profile, modified).
    pub teachers: Vec<(Uuid, Uuid, bool, DateTime<Utc>)>,
}

/// Every (class, subject) pair that a teacher assignment or an exam names. A pair is live
/// while its class and subject are, and a live assignment or exam still names it.
pub fn sections(conn: &mut TenantConn) -> ApiResult<Vec<Section>> {
    let assignments: Vec<(Uuid, Uuid, Uuid, Uuid, bool, DateTime<Utc>)> =
        teacher_assignments::table
            .order((teacher_assignments::created_at, teacher_assignments::id))
            .select((
                teacher_assignments::id,
                teacher_assignments::academic_class_id,
                teacher_assignments::subject_id,
                teacher_assignments::teacher_id,
                teacher_assignments::is_deleted,
                teacher_assignments::updated_at,
            ))
            .load(conn.pg())?;
    let exam_pairs: Vec<(Uuid, Uuid, bool, DateTime<Utc>)> = exams::table
        .select((
            exams::academic_class_id,
            exams::subject_id,
            exams::is_deleted,
            exams::updated_at,
        ))
        .load(conn.pg())?;
    let classes: HashMap<Uuid, (bool, DateTime<Utc>)> = academic_classes::table
        .select((
            academic_classes::id,
            academic_classes::is_deleted,
            academic_classes::updated_at,
        ))
        .load::<(Uuid, bool, DateTime<Utc>)>(conn.pg())?
        .into_iter()
        .map(|(id, deleted, at)| (id, (deleted, at)))
        .collect();
    let subjects: HashMap<Uuid, (bool, DateTime<Utc>)> = subject_rows(conn)?
        .into_iter()
        .map(|(id, _, _, deleted, at)| (id, (deleted, at)))
        .collect();
    let mut pairs: BTreeMap<(Uuid, Uuid), Section> = BTreeMap::new();
    fn named(
        pairs: &mut BTreeMap<(Uuid, Uuid), Section>,
        class: Uuid,
        subject: Uuid,
        live: bool,
        at: DateTime<Utc>,
    ) -> &mut Section {
        let section = pairs.entry((class, subject)).or_insert(Section {
            class,
            subject,
            live: false,
            modified: at,
            teachers: Vec::new(),
        });
        section.live |= live;
        section.modified = section.modified.max(at);
        section
    }
    for (id, class, subject, teacher, deleted, at) in assignments {
        named(&mut pairs, class, subject, !deleted, at)
            .teachers
            .push((id, teacher, deleted, at));
    }
    for (class, subject, deleted, at) in exam_pairs {
        named(&mut pairs, class, subject, !deleted, at);
    }
    Ok(pairs
        .into_values()
        .filter_map(|mut s| {
            let (class_deleted, class_at) = *classes.get(&s.class)?;
            let (subject_deleted, subject_at) = *subjects.get(&s.subject)?;
            s.live &= !class_deleted && !subject_deleted;
            s.modified = s.modified.max(class_at).max(subject_at);
            Some(s)
        })
        .collect())
}

/// Classes: each class taught a subject (`classType: scheduled`).
pub fn classes(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let (_, terms) = current_terms(conn)?;
    let names: HashMap<Uuid, String> = academic_classes::table
        .select((academic_classes::id, academic_classes::name))
        .load::<(Uuid, String)>(conn.pg())?
        .into_iter()
        .collect();
    let subjects: HashMap<Uuid, SubjectRow> = subject_rows(conn)?
        .into_iter()
        .map(|row| (row.0, row))
        .collect();
    let term_refs: Vec<Value> = terms
        .iter()
        .map(|t| {
            p.reference(
                "rostering",
                "academicSessions",
                &t.to_string(),
                "academicSession",
            )
        })
        .collect();
    Ok(sections(conn)?
        .into_iter()
        .filter_map(|s| {
            let subject = subjects.get(&s.subject)?;
            let class_name = names.get(&s.class)?;
            let sid = class_sourced_id(s.class, s.subject);
            let mut e = head(&sid, !s.live, s.modified);
            e.insert(
                "title".into(),
                json!(format!("{} - {class_name}", subject.1)),
            );
            e.insert("classCode".into(), json!(subject.2));
            e.insert("classType".into(), json!("scheduled"));
            e.insert("location".into(), json!(""));
            e.insert("grades".into(), json!([]));
            e.insert("subjects".into(), json!([subject.1]));
            e.insert(
                "course".into(),
                p.reference("rostering", "courses", &s.subject.to_string(), "course"),
            );
            e.insert("school".into(), p.org_ref());
            e.insert("terms".into(), json!(term_refs));
            e.insert("subjectCodes".into(), json!([]));
            e.insert("periods".into(), json!([]));
            Some(e)
        })
        .collect())
}

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

fn student_rows(conn: &mut TenantConn) -> ApiResult<Vec<StudentRow>> {
    Ok(students::table
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
    let students = student_rows(conn)?;
    let teachers: Vec<TeacherRow> = teacher_profiles::table
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
    let students = student_rows(conn)?;
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
