//! Enrollments: a student's class in one academic session (one live enrollment per student
//! and session). What a past session shows (its class lists, its report cards) is read from
//! its enrollments, so moving a student on never rewrites last year.
//!
//! A student's own `academic_class` is their class in the active session, kept in step both
//! ways by the two stores' hooks: an enrollment written for the active session sets the
//! student's class, and a student's class written while a session is active moves their
//! enrollment in it. Each side writes only when the other differs, so the pair settles after
//! one round.

use std::collections::{BTreeMap, HashMap};

use crate::school::Actor;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    ListFilter, ListQuery, Store, Targets,
    schema::enrollments as t,
    sessions::Sessions,
    store::Narrowing,
    students::{StudentChanges, Students},
    table::{school_forms, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

/// An enrollment's statuses: `active` during its session, `completed` once the session
/// rolled over, `withdrawn` for a student who left.
pub const STATUSES: &[&str] = &[ACTIVE, COMPLETED, WITHDRAWN];
pub const ACTIVE: &str = "active";
pub const COMPLETED: &str = "completed";
pub const WITHDRAWN: &str = "withdrawn";

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Enrollment {
    pub id: Uuid,
    #[serde(rename = "student")]
    pub student_id: Uuid,
    #[serde(rename = "academic_class")]
    pub academic_class_id: Uuid,
    #[serde(rename = "academic_session")]
    pub academic_session_id: Uuid,
    /// `active`, `completed` or `withdrawn`.
    pub status: String,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewEnrollment, EnrollmentChanges {
    student_id: Uuid,
    academic_class_id: Uuid,
    academic_session_id: Uuid,
    status: String,
    is_deleted: bool,
});

/// Enrollments.
pub struct Enrollments;

school_table!(Enrollments: Enrollment in t, new: NewEnrollment, changes: EnrollmentChanges,
    search: [], soft_delete: is_deleted);

const STUDENT_FILTER: &str = "student";
const CLASS_FILTER: &str = "academic_class";
const SESSION_FILTER: &str = "academic_session";
const STATUS_FILTER: &str = "status";

impl Store for Enrollments {
    type Record = Enrollment;

    const NAME: &'static str = "enrollment";
    const KEEPS_HISTORY: bool = true;

    fn students_of(_: &mut TenantConn, records: &[&Enrollment]) -> ApiResult<Vec<Option<Uuid>>> {
        Ok(records.iter().map(|r| Some(r.student_id)).collect())
    }

    fn narrowing(_: &mut TenantConn, query: &ListQuery) -> ApiResult<Option<Narrowing<Self>>> {
        let ListFilter {
            student,
            academic_class: class,
            academic_session: session,
            status,
            ..
        } = query.filter.clone();
        if student.is_none() && class.is_none() && session.is_none() && status.is_none() {
            return Ok(None);
        }
        Ok(Some(Box::new(move |mut rows| {
            if let Some(student) = student {
                rows = rows.filter(t::student_id.eq(student));
            }
            if let Some(class) = class {
                rows = rows.filter(t::academic_class_id.eq(class));
            }
            if let Some(session) = session {
                rows = rows.filter(t::academic_session_id.eq(session));
            }
            if let Some(status) = status {
                rows = rows.filter(t::status.eq(status));
            }
            rows
        })))
    }

    fn after_create(
        conn: &mut TenantConn,
        rows: &[Enrollment],
        _: &[NewEnrollment],
        actor: &Actor,
    ) -> ApiResult<()> {
        classes_follow_enrollments(conn, rows, actor)
    }

    fn after_replace(
        conn: &mut TenantConn,
        row: &Enrollment,
        _: &NewEnrollment,
        actor: &Actor,
    ) -> ApiResult<()> {
        classes_follow_enrollments(conn, std::slice::from_ref(row), actor)
    }

    fn after_update(
        conn: &mut TenantConn,
        rows: &[Enrollment],
        _: &EnrollmentChanges,
        actor: &Actor,
    ) -> ApiResult<()> {
        classes_follow_enrollments(conn, rows, actor)
    }
}

/// An enrollment written for the active session sets its student's class: the enrollment's
/// class while it is live and active, none otherwise; written by `actor`, who wrote the
/// enrollment. The students whose class moves to the same class are written together.
fn classes_follow_enrollments(
    conn: &mut TenantConn,
    rows: &[Enrollment],
    actor: &Actor,
) -> ApiResult<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let Some(active) = Sessions::active_id(conn)? else {
        return Ok(());
    };
    let wanted: HashMap<Uuid, Option<Uuid>> = (rows.iter())
        .filter(|row| row.academic_session_id == active)
        .map(|row| {
            let class = (!row.is_deleted && row.status == ACTIVE).then_some(row.academic_class_id);
            (row.student_id, class)
        })
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let students = Targets {
        parent: (),
        ids: (rows.iter()).map(|row| row.student_id).collect(),
        include_deleted: true,
    };
    let mut moves: BTreeMap<Option<Uuid>, Vec<Uuid>> = BTreeMap::new();
    for student in Students::find_many(conn, &students)? {
        match wanted.get(&student.id) {
            Some(class) if *class != student.academic_class_id => {
                moves.entry(*class).or_default().push(student.id);
            }
            _ => {}
        }
    }
    for (class, ids) in moves {
        let changes = StudentChanges {
            academic_class_id: Some(class),
            ..Default::default()
        };
        let targets = Targets {
            ids,
            ..students.clone()
        };
        Students::update_many(conn, targets, changes, actor)?;
    }
    Ok(())
}

impl Enrollments {
    /// The list filters beyond `?search=`, with what they do (for the API document).
    pub const FILTERS: &'static [(&'static str, &'static str)] = &[
        (STUDENT_FILTER, "enrollments of this student (id)"),
        (CLASS_FILTER, "enrollments in this class (id)"),
        (SESSION_FILTER, "enrollments in this academic session (id)"),
        (STATUS_FILTER, "active, completed or withdrawn"),
    ];

    /// The live enrollment of `student` in `session`, if there is one.
    pub fn of_student_in(
        conn: &mut TenantConn,
        student: Uuid,
        session: Uuid,
    ) -> ApiResult<Option<Enrollment>> {
        Ok(t::table
            .filter(t::student_id.eq(student))
            .filter(t::academic_session_id.eq(session))
            .filter(t::is_deleted.eq(false))
            .select(Enrollment::as_select())
            .first(conn.pg())
            .optional()?)
    }

    /// Every live enrollment of `session`, oldest first.
    pub fn of_session(conn: &mut TenantConn, session: Uuid) -> ApiResult<Vec<Enrollment>> {
        Ok(t::table
            .filter(t::academic_session_id.eq(session))
            .filter(t::is_deleted.eq(false))
            .order((t::created_at, t::id))
            .select(Enrollment::as_select())
            .load(conn.pg())?)
    }

    /// The students enrolled (live, any status) in `class` during `session`.
    pub fn students_of_class_in(
        conn: &mut TenantConn,
        class: Uuid,
        session: Uuid,
    ) -> ApiResult<Vec<Uuid>> {
        Ok(t::table
            .filter(t::academic_class_id.eq(class))
            .filter(t::academic_session_id.eq(session))
            .filter(t::is_deleted.eq(false))
            .select(t::student_id)
            .load(conn.pg())?)
    }

    /// Whether any live enrollment puts a student in `class` during `session`.
    pub fn class_has_any_in(conn: &mut TenantConn, class: Uuid, session: Uuid) -> ApiResult<bool> {
        Ok(diesel::select(diesel::dsl::exists(
            t::table
                .filter(t::academic_class_id.eq(class))
                .filter(t::academic_session_id.eq(session))
                .filter(t::is_deleted.eq(false)),
        ))
        .get_result(conn.pg())?)
    }

    /// Moves each `(student, class)`'s enrollment in the active session to `class`
    /// (creating it when missing; withdrawing it when `class` is `None`), written by
    /// `actor`: the other half of the two-way step (see the module's documentation).
    /// Nothing without an active session, or where the enrollment already says so. The
    /// enrollments moved to one class are written together, the new ones by one create.
    pub fn follow_students(
        conn: &mut TenantConn,
        students: &[(Uuid, Option<Uuid>)],
        actor: &Actor,
    ) -> ApiResult<()> {
        if students.is_empty() {
            return Ok(());
        }
        let Some(session) = Sessions::active_id(conn)? else {
            return Ok(());
        };
        let ids: Vec<Uuid> = students.iter().map(|(student, _)| *student).collect();
        let current: HashMap<Uuid, Enrollment> = t::table
            .filter(t::student_id.eq_any(&ids))
            .filter(t::academic_session_id.eq(session))
            .filter(t::is_deleted.eq(false))
            .select(Enrollment::as_select())
            .load(conn.pg())?
            .into_iter()
            .map(|e: Enrollment| (e.student_id, e))
            .collect();
        let mut moves: BTreeMap<Uuid, Vec<Uuid>> = BTreeMap::new();
        let mut withdrawn = Vec::new();
        let mut new = Vec::new();
        for (student, class) in students {
            match (class, current.get(student)) {
                (Some(class), Some(e)) if e.academic_class_id != *class || e.status != ACTIVE => {
                    moves.entry(*class).or_default().push(e.id);
                }
                (Some(class), None) => new.push(NewEnrollment {
                    student_id: *student,
                    academic_class_id: *class,
                    academic_session_id: session,
                    status: ACTIVE.into(),
                    is_deleted: false,
                }),
                (None, Some(e)) if e.status == ACTIVE => withdrawn.push(e.id),
                _ => {}
            }
        }
        for (class, ids) in moves {
            let changes = EnrollmentChanges {
                academic_class_id: Some(class),
                status: Some(ACTIVE.into()),
                ..Default::default()
            };
            Self::update_many(conn, Targets::live((), ids), changes, actor)?;
        }
        if !withdrawn.is_empty() {
            let changes = EnrollmentChanges {
                status: Some(WITHDRAWN.into()),
                ..Default::default()
            };
            Self::update_many(conn, Targets::live((), withdrawn), changes, actor)?;
        }
        Self::create_many(conn, (), new, actor)?;
        Ok(())
    }
}
