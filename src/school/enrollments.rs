//! Enrollments: a student's class in one academic session (one live enrollment per student
//! and session). What a past session shows (its class lists, its report cards) is read from
//! its enrollments, so moving a student on never rewrites last year.
//!
//! A student's own `academic_class` is their class in the active session, kept in step both
//! ways by the two stores' hooks: an enrollment written for the active session sets the
//! student's class, and a student's class written while a session is active moves their
//! enrollment in it. Each side writes only when the other differs, so the pair settles after
//! one round.

use crate::school::Actor;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    ListFilter, ListQuery, Store, Target,
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

    fn student_of(_: &mut TenantConn, record: &Enrollment) -> ApiResult<Option<Uuid>> {
        Ok(Some(record.student_id))
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
        row: &Enrollment,
        _: &NewEnrollment,
        actor: &Actor,
    ) -> ApiResult<()> {
        class_follows_enrollment(conn, row, actor)
    }

    fn after_replace(
        conn: &mut TenantConn,
        row: &Enrollment,
        _: &NewEnrollment,
        actor: &Actor,
    ) -> ApiResult<()> {
        class_follows_enrollment(conn, row, actor)
    }

    fn after_update(
        conn: &mut TenantConn,
        row: &Enrollment,
        _: &EnrollmentChanges,
        actor: &Actor,
    ) -> ApiResult<()> {
        class_follows_enrollment(conn, row, actor)
    }
}

/// An enrollment written for the active session sets its student's class: the enrollment's
/// class while it is live and active, none otherwise; written by `actor`, who wrote the
/// enrollment.
fn class_follows_enrollment(
    conn: &mut TenantConn,
    row: &Enrollment,
    actor: &Actor,
) -> ApiResult<()> {
    if Sessions::active_id(conn)? != Some(row.academic_session_id) {
        return Ok(());
    }
    let class = (!row.is_deleted && row.status == ACTIVE).then_some(row.academic_class_id);
    let target = Target {
        parent: (),
        id: row.student_id,
        include_deleted: true,
    };
    let Some(student) = Students::find(conn, target)? else {
        return Ok(());
    };
    if student.academic_class_id == class {
        return Ok(());
    }
    let changes = StudentChanges {
        academic_class_id: Some(class),
        ..Default::default()
    };
    Students::update(conn, target, changes, actor)?;
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

    /// Moves `student`'s enrollment in the active session to `class` (creating it when
    /// missing; withdrawing it when `class` is `None`), written by `actor`: the other half
    /// of the two-way step (see the module's documentation). Nothing without an active
    /// session, or when the enrollment already says so.
    pub fn follow_student(
        conn: &mut TenantConn,
        student: Uuid,
        class: Option<Uuid>,
        actor: &Actor,
    ) -> ApiResult<()> {
        let Some(session) = Sessions::active_id(conn)? else {
            return Ok(());
        };
        match (class, Self::of_student_in(conn, student, session)?) {
            (Some(class), Some(current))
                if current.academic_class_id != class || current.status != ACTIVE =>
            {
                let changes = EnrollmentChanges {
                    academic_class_id: Some(class),
                    status: Some(ACTIVE.into()),
                    ..Default::default()
                };
                Self::update(conn, Target::live((), current.id), changes, actor)?;
            }
            (Some(class), None) => {
                let new = NewEnrollment {
                    student_id: student,
                    academic_class_id: class,
                    academic_session_id: session,
                    status: ACTIVE.into(),
                    is_deleted: false,
                };
                Self::create(conn, (), new, actor)?;
            }
            (None, Some(current)) if current.status == ACTIVE => {
                let changes = EnrollmentChanges {
                    status: Some(WITHDRAWN.into()),
                    ..Default::default()
                };
                Self::update(conn, Target::live((), current.id), changes, actor)?;
            }
            _ => {}
        }
        Ok(())
    }
}
