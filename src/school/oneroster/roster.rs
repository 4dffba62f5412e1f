//! The school's records as OneRoster 1.2 rostering entities (the mapping is in
//! `docs/oneroster.md`). Each collection is read whole from the school's tables, deleted
//! records included (as `status: tobedeleted`, for delta syncs); the API layer filters,
//! sorts and pages them. sourcedIds are the records' own UUIDs, so they are stable across
//! calls, restarts and a school's export and import; the entities made of two records
//! (a class is a class taught a subject) join their ids with a `.`. School years, terms
//! and grading periods: `sessions.rs`; users and enrollments: `people.rs`.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::super::schema::{
    academic_classes, academic_sessions, exams, subjects, teacher_assignments,
};
use super::sessions::current_terms;
use crate::{error::ApiResult, tenancy::TenantConn};

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

pub(super) fn date(at: DateTime<Utc>) -> String {
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
